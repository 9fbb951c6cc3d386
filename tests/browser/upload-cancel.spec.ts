// Cancelling a running upload from its file's row, in Chromium: the sync worker's tus transfer is
// held mid-PATCH by a small proxy in this test process (the page is served through it); the user
// presses "Cancel upload" on the row and confirms; the row goes at once, the worker aborts the
// transfer and terminates the upload (DELETE /v1/uploads/…), and nothing arrives on the server.
import { expect, test } from '@playwright/test';
import { CuttingProxy, signInThrough } from './cutting-proxy';
import { api, appOrigin, appPort, unique, userFor } from './helpers';

const MiB = 1024 * 1024;

test.describe('cancelling an upload', () => {
  let proxy: CuttingProxy;
  test.beforeEach(async () => {
    proxy = new CuttingProxy(appPort());
    await proxy.start();
  });
  test.afterEach(async () => proxy.stop());

  test('a running upload cancelled from its row: the row goes, the upload is terminated, nothing arrives', async ({ page, request }, info) => {
    test.setTimeout(90_000);
    const server = await api(request, info);
    const contact = unique('tus-cancel');
    const conversation = await server.createConversation(contact);
    await signInThrough(page, info, proxy.origin);
    await page.getByRole('link', { name: new RegExp(contact) }).first().click();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();

    proxy.holdAt = 1 * MiB; // 1 MiB into the first PATCH, then it hangs: a transfer in progress
    const name = 'cancel-me.bin';
    // More than one request's worth (4 MiB): a creation, then PATCHes (a smaller file goes whole with its creation).
    await page.getByLabel('Upload files').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: Buffer.alloc(6 * MiB, 7) });
    await proxy.held;
    const row = page.getByRole('listitem').filter({ hasText: name });
    await expect(row).toBeVisible();
    // The row shows its own progress while the upload runs.
    await expect(row.getByTestId('upload-bar')).toBeVisible({ timeout: 10_000 });

    await row.getByRole('button', { name: `Cancel upload of ${name}` }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('will not be sent');
    await dialog.getByRole('button', { name: 'Cancel upload', exact: true }).click();

    await expect(page.getByRole('listitem').filter({ hasText: name })).toHaveCount(0);
    // The worker aborts the held transfer and terminates the upload on the server.
    await expect.poll(() => proxy.seen.filter((r) => r.method === 'DELETE' && r.path.startsWith('/v1/uploads/')).length, { timeout: 30_000 }).toBe(1);
    await expect(page.getByTestId('sync-status')).toHaveText('All synced', { timeout: 30_000 });
    const created = proxy.seen.filter((r) => r.method === 'POST' && r.path === '/v1/uploads');
    expect(created).toHaveLength(1);
    const deleted = proxy.seen.find((r) => r.method === 'DELETE' && r.path.startsWith('/v1/uploads/'))!;
    // Gone on the server: the upload (404) and no file in the conversation.
    const head = await request.head(`${appOrigin()}${deleted.path}`, { headers: { ...userFor(info).auth, 'Tus-Resumable': '1.0.0' } });
    expect(head.status()).toBe(404);
    expect((await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data).toHaveLength(0);
    // Never sent again after the cancel.
    expect(proxy.seen.filter((r) => r.method === 'PATCH')).toHaveLength(1);
    expect(proxy.seen.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/files'))).toHaveLength(0);
  });
});
