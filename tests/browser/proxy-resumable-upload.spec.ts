// Resumable uploads through proxy mode in front of a plain server, in Chromium: the phone talks to
// an app of its own in proxy mode (UPSTREAM_BASE_URL), whose upstream has only the brief's contract
// (PARLEY_EXTENSIONS=none: no /v1/uploads, no Idempotency-Key, no /v1/me, no feed). The proxy
// offers /v1/uploads itself and stages the bytes on its own disk; a file of several MiB sent from
// the phone UI over a link cut again and again mid-transfer arrives at the upstream byte for byte,
// exactly once (one POST /v1/files from the proxy, one file), the phone sending at most 1.2× its
// size.
//
//   Chromium ──cut link──▶ the app in proxy mode ──recorded link──▶ the plain upstream
//
// Both servers are the built app (`.next/parley/server.mjs`, as `npm start` runs it; the upstream
// with --api-only), started here on free ports with temporary DATA_DIRs, stopped and removed after.
// The links are CuttingProxy (cutting-proxy.ts): the phone's cuts PATCH bodies; the one between
// the servers only records what the proxy sends upstream.
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { api, unique, userFor } from './helpers';
import { appEnv, CHECKOUT, startApp, tempDir, type AppProcess } from './app-process';
import { CuttingProxy, openThrough, serverBytes, signInThrough } from './cutting-proxy';
import { pattern } from '../helpers/bytes';

const MiB = 1024 * 1024;
const SERVER = '.next/parley/server.mjs';

test.describe('resumable uploads through proxy mode in front of a plain server', () => {
  let scratch: ReturnType<typeof tempDir>;
  let upstream: AppProcess;
  let recorder: CuttingProxy;
  let front: AppProcess;
  let phone: CuttingProxy;

  test.beforeAll(async () => {
    scratch = tempDir('parley-proxy-tus-');
    upstream = await startApp([SERVER, '--api-only'], CHECKOUT, appEnv(path.join(scratch.dir, 'upstream'), { PARLEY_EXTENSIONS: 'none' }));
    recorder = new CuttingProxy(Number(new URL(upstream.url).port));
    await recorder.start();
    front = await startApp([SERVER], CHECKOUT, appEnv(path.join(scratch.dir, 'front'), { UPSTREAM_BASE_URL: recorder.origin }));
    phone = new CuttingProxy(Number(new URL(front.url).port));
    await phone.start();
  });

  test.afterAll(async () => {
    await phone?.stop();
    await front?.stop();
    await recorder?.stop();
    await upstream?.stop();
    scratch?.remove();
  });

  test('a transfer cut again and again arrives upstream byte for byte, exactly once, the phone sending at most 1.2× the file', async ({ page, request }, info) => {
    test.setTimeout(150_000);
    // The upstream is plain: no resumable uploads of its own (an unknown route).
    expect((await request.fetch(`${upstream.url}/v1/uploads`, { method: 'OPTIONS', headers: userFor(info).auth })).status()).toBe(404);
    expect((await request.fetch(`${front.url}/v1/uploads`, { method: 'OPTIONS' })).headers()['tus-version']).toBe('1.0.0');

    const server = await api(request, info, upstream.url);
    const contact = unique('proxy-tus-cuts');
    const conversation = await server.createConversation(contact);
    await signInThrough(page, info, phone.origin);
    await openThrough(page, contact);

    const size = 6 * MiB + 4321;
    const bytes = Buffer.from(pattern(size, 43));
    phone.dropEvery = Math.floor(1.5 * MiB); // the phone's link drops every 1.5 MiB, mid-PATCH
    await page.getByLabel('Upload files').setInputFiles({ name: 'proxied-scan.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await expect
      .poll(async () => (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data.length, { timeout: 120_000 })
      .toBe(1)
      .catch((error) => {
        console.log(JSON.stringify(phone.seen.filter((r) => r.path.startsWith('/v1/uploads'))));
        console.log(front.output().slice(-4000));
        throw error;
      });
    await expect(page.getByTestId('sync-status')).toHaveText('All synced', { timeout: 30_000 });

    // At the upstream: one file, byte for byte.
    const files = (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data;
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ filename: 'proxied-scan.bin', file_size: size });
    expect((await serverBytes(request, info, files[0].file_url, upstream.url)).equals(bytes)).toBe(true);
    // Delivered once, as one POST /v1/files; nothing of tus reached the upstream.
    expect(recorder.seen.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/files'))).toHaveLength(1);
    expect(recorder.seen.filter((r) => r.path.startsWith('/v1/uploads'))).toEqual([]);

    // The phone: cut again and again, resumed each time (one creation, a HEAD per cut), never a
    // POST /v1/files, and at most 1.2× the file sent.
    expect(phone.drops).toBeGreaterThanOrEqual(3);
    const ratio = phone.patchBytes / size;
    console.log(`[proxy-resumable-upload.spec] ${size} bytes, ${phone.drops} drops, ${phone.patchBytes} bytes sent by the phone: ${ratio.toFixed(3)}× the file`);
    expect(ratio).toBeLessThanOrEqual(1.2);
    expect(phone.seen.filter((r) => r.method === 'POST' && r.path === '/v1/uploads')).toHaveLength(1);
    expect(phone.seen.filter((r) => r.method === 'HEAD' && r.path.startsWith('/v1/uploads/')).length).toBeGreaterThanOrEqual(phone.drops);
    expect(phone.seen.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/files'))).toHaveLength(0);
  });
});
