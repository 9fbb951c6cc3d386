// Resumable uploads in Chromium: a file of several MiB sent by the sync worker through tus
// (/v1/uploads) over a link that drops mid-transfer again and again arrives byte for byte, sending
// at most 1.2× its size; a reload mid-upload resumes from the server's offset. The link is the
// CuttingProxy of cutting-proxy.ts (how it cuts: there).
import { expect, test } from '@playwright/test';
import { api, appOrigin, appPort, unique, unlockIfLocked } from './helpers';
import { pattern } from '../helpers/bytes';
import { CuttingProxy, openThrough, serverBytes, signInThrough } from './cutting-proxy';

const MiB = 1024 * 1024;

test.describe('resumable uploads', () => {
  let proxy: CuttingProxy;
  test.beforeEach(async () => {
    proxy = new CuttingProxy(appPort());
    await proxy.start();
  });
  test.afterEach(async () => proxy.stop());

  test('a transfer cut again and again arrives byte for byte, sending at most 1.2× the file', async ({ page, request }, info) => {
    test.setTimeout(120_000);
    const server = await api(request, info);
    const contact = unique('tus-cuts');
    const conversation = await server.createConversation(contact);
    await signInThrough(page, info, proxy.origin);
    await openThrough(page, contact);

    const size = 6 * MiB + 4321;
    const bytes = Buffer.from(pattern(size, 5));
    proxy.dropEvery = Math.floor(1.5 * MiB); // the link drops every 1.5 MiB, mid-PATCH
    await page.getByLabel('Upload files').setInputFiles({ name: 'scan.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await expect
      .poll(async () => (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data.length, { timeout: 90_000 })
      .toBe(1)
      .catch((error) => {
        console.log(JSON.stringify(proxy.seen.filter((r) => !r.path.startsWith('/_next'))));
        throw error;
      });
    await expect(page.getByTestId('sync-status')).toHaveText('All synced', { timeout: 30_000 });

    const files = (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data;
    expect(files).toHaveLength(1);
    expect(files[0].file_size).toBe(size);
    expect((await serverBytes(request, info, files[0].file_url, appOrigin())).equals(bytes)).toBe(true);
    expect(proxy.drops).toBeGreaterThanOrEqual(3);
    const ratio = proxy.patchBytes / size;
    console.log(`[resumable-upload.spec] ${size} bytes, ${proxy.drops} drops, ${proxy.patchBytes} bytes sent: ${ratio.toFixed(3)}× the file`);
    expect(ratio).toBeLessThanOrEqual(1.2);
    // Resumed, never begun again: one creation, no POST /v1/files.
    expect(proxy.seen.filter((r) => r.method === 'POST' && r.path === '/v1/uploads')).toHaveLength(1);
    expect(proxy.seen.filter((r) => r.method === 'HEAD' && r.path.startsWith('/v1/uploads/')).length).toBeGreaterThanOrEqual(proxy.drops);
    expect(proxy.seen.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/files'))).toHaveLength(0);
  });

  test('a reload mid-upload resumes from the server offset', async ({ page, request }, info) => {
    test.setTimeout(120_000);
    const server = await api(request, info);
    const contact = unique('tus-reload');
    const conversation = await server.createConversation(contact);
    await signInThrough(page, info, proxy.origin);
    await openThrough(page, contact);

    const size = 5 * MiB + 99;
    const bytes = Buffer.from(pattern(size, 9));
    proxy.holdAt = Math.floor(2.5 * MiB); // half the file, then the PATCH hangs
    await page.getByLabel('Upload files').setInputFiles({ name: 'reload.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await proxy.held;
    const before = proxy.seen.length;
    const sentBefore = proxy.patchBytes;
    await page.reload();
    proxy.cutAll(); // the old worker's request is gone with its page
    await unlockIfLocked(page);
    await expect(page.getByTestId('sync-status')).toHaveText('All synced', { timeout: 90_000 });
    await expect(page.getByTestId('pending-count')).toHaveCount(0);

    const after = proxy.seen.slice(before);
    expect(after.filter((r) => r.method === 'POST' && r.path === '/v1/uploads')).toHaveLength(0);
    expect(after.filter((r) => r.method === 'HEAD' && r.path.startsWith('/v1/uploads/')).length).toBeGreaterThanOrEqual(1);
    // Resumed where the server had it: at most a small first PATCH is refused (the server had not yet
    // recorded the dead request's bytes), then it goes on from 2.5 MiB.
    expect(Math.max(...after.filter((r) => r.method === 'PATCH').map((r) => r.offset!))).toBeGreaterThanOrEqual(2.5 * MiB);
    expect(proxy.patchBytes - sentBefore).toBeLessThanOrEqual(size - 2.5 * MiB + 2 * 64 * 1024);
    const files = (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data;
    expect(files).toHaveLength(1);
    expect((await serverBytes(request, info, files[0].file_url, appOrigin())).equals(bytes)).toBe(true);
    expect(proxy.patchBytes / size).toBeLessThanOrEqual(1.2);
  });
});
