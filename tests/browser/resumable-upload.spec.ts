// Resumable uploads in Chromium: a file of several MiB sent by the sync worker through tus
// (/v1/uploads) over a link that drops mid-transfer again and again arrives byte for byte, sending
// at most 1.2× its size; a reload mid-upload resumes from the server's offset.
//
// How the transfers are cut: the page is served through a small HTTP proxy in this test process
// (node:http, Host rewritten to the app's). Playwright's context.route cannot cut a request
// mid-body (it aborts before sending or fulfils after), and Chromium's offline emulation leaks.
// The proxy forwards each PATCH body byte by byte as it arrives and, once the link's budget of
// bytes is spent, destroys both sockets: the browser sees a network error mid-upload, the server
// a broken body (it keeps what arrived). It also counts the bytes the browser sent, and can hold a
// PATCH mid-body (the reload test) until the page is gone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { APP_PORT } from '../../playwright.config';
import { api, unique, userFor } from './helpers';
import { pattern } from '../helpers/bytes';

const MiB = 1024 * 1024;

interface Seen {
  method: string;
  path: string;
  offset: number | null;
}

class CuttingProxy {
  server!: http.Server;
  port = 0;
  /** Bytes of PATCH bodies received from the browser. */
  patchBytes = 0;
  readonly seen: Seen[] = [];
  /** Drop the connection every this many PATCH bytes (null: never). */
  dropEvery: number | null = null;
  drops = 0;
  private left = Infinity;
  /** Hold the PATCH that reaches this many bytes in all (then `held` resolves). */
  holdAt: number | null = null;
  held: Promise<void>;
  private onHeld!: () => void;
  private readonly open = new Set<() => void>();

  constructor() {
    this.held = new Promise((resolve) => (this.onHeld = resolve));
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.forward(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const isPatch = req.method === 'PATCH';
    const offset = req.headers['upload-offset'];
    this.seen.push({ method: req.method!, path: req.url!, offset: typeof offset === 'string' ? Number(offset) : null });
    if (process.env.PROXYLOG && req.url!.startsWith('/v1/uploads')) {
      const at = this.patchBytes;
      req.on('close', () => console.log('proxy', req.method, offset, 'len', req.headers['content-length'], 'bytes', this.patchBytes - at));
      res.on('finish', () => console.log('  answer', req.method, res.statusCode));
    }
    const up = http.request({
      host: '127.0.0.1',
      port: APP_PORT,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: `127.0.0.1:${APP_PORT}` },
    });
    // A fresh connection per request. Chromium itself resends a request whose REUSED keep-alive
    // socket is reset before any answer (its network stack's transparent retry, which the app can
    // neither see nor stop): through a link that is back at once (this proxy) that resent body is
    // refused by the server (409, the cut part was recorded) after it has travelled. A real drop
    // rarely comes back within that instant; this measures what the app sends.
    let dead = false;
    const cut = () => {
      dead = true;
      up.destroy();
      req.socket.destroy();
    };
    this.open.add(cut);
    up.on('response', (answer) => {
      const { connection: _keepAlive, 'keep-alive': _timeout, ...headers } = answer.headers;
      res.writeHead(answer.statusCode!, { ...headers, connection: 'close' });
      answer.pipe(res);
      answer.on('end', () => this.open.delete(cut));
    });
    up.on('error', () => req.socket.destroy());
    req.on('error', () => up.destroy());
    if (this.dropEvery !== null && this.left === Infinity) this.left = this.dropEvery;
    req.on('data', (chunk: Buffer) => {
      if (dead) return;
      if (!isPatch) return void up.write(chunk);
      if (this.holdAt !== null && this.patchBytes + chunk.length >= this.holdAt) {
        const part = Math.max(0, this.holdAt - this.patchBytes);
        this.patchBytes += part;
        up.write(chunk.subarray(0, part));
        this.holdAt = null;
        req.pause(); // nothing more goes through; the page is reloaded meanwhile
        this.onHeld();
        return;
      }
      if (chunk.length >= this.left) {
        const part = this.left;
        this.patchBytes += part;
        this.left = this.dropEvery ?? Infinity;
        this.drops++;
        dead = true; // nothing after this byte goes through
        up.write(chunk.subarray(0, part), () => setTimeout(cut, 20));
        req.pause();
        return;
      }
      this.left -= chunk.length;
      this.patchBytes += chunk.length;
      up.write(chunk);
    });
    req.on('end', () => up.end());
  }

  /** Ends every held or open exchange. */
  cutAll(): void {
    for (const cut of this.open) cut();
    this.open.clear();
  }

  async stop(): Promise<void> {
    this.cutAll();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function signInThrough(page: Page, info: TestInfo, origin: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel('Access token').fill(userFor(info).token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  await expect(page.getByTestId('sync-status')).toHaveText('All synced', { timeout: 30_000 });
}

async function openThrough(page: Page, title: string): Promise<void> {
  await page.getByRole('link', { name: new RegExp(title) }).first().click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(title) })).toBeVisible();
}

async function serverBytes(request: import('@playwright/test').APIRequestContext, info: TestInfo, fileUrl: string): Promise<Buffer> {
  const url = new URL(fileUrl);
  const r = await request.get(`http://127.0.0.1:${APP_PORT}${url.pathname}${url.search}`, { headers: userFor(info).auth });
  expect(r.status()).toBe(200);
  return Buffer.from(await r.body());
}

test.describe('resumable uploads', () => {
  let proxy: CuttingProxy;
  test.beforeEach(async () => {
    proxy = new CuttingProxy();
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
    expect((await serverBytes(request, info, files[0].file_url)).equals(bytes)).toBe(true);
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
    expect((await serverBytes(request, info, files[0].file_url)).equals(bytes)).toBe(true);
    expect(proxy.patchBytes / size).toBeLessThanOrEqual(1.2);
  });
});
