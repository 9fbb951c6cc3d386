// Cancelling a running upload from its file's row, in Chromium: the sync worker's tus transfer is
// held mid-PATCH by a small proxy in this test process (the page is served through it); the user
// presses "Cancel upload" on the row and confirms; the row goes at once, the worker aborts the
// transfer and terminates the upload (DELETE /v1/uploads/…), and nothing arrives on the server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { APP_PORT } from '../../playwright.config';
import { api, unique, userFor } from './helpers';

const MiB = 1024 * 1024;

/** Forwards to the app; holds the first PATCH once `holdAt` of its body bytes went through. */
class HoldingProxy {
  server!: http.Server;
  port = 0;
  readonly seen: Array<{ method: string; path: string }> = [];
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
    this.seen.push({ method: req.method!, path: req.url! });
    const up = http.request({ host: '127.0.0.1', port: APP_PORT, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${APP_PORT}` } });
    const cut = () => {
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
    // The browser gave up the request (the worker aborted it): so does the server's side.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    let sent = 0;
    let holding = false;
    req.on('data', (chunk: Buffer) => {
      if (holding) return;
      if (req.method === 'PATCH' && this.holdAt !== null && sent + chunk.length >= this.holdAt) {
        up.write(chunk.subarray(0, this.holdAt - sent));
        this.holdAt = null;
        holding = true;
        req.pause(); // the transfer hangs here, running, until the page aborts it
        this.onHeld();
        return;
      }
      sent += chunk.length;
      up.write(chunk);
    });
    req.on('end', () => up.end());
  }

  async stop(): Promise<void> {
    for (const cut of this.open) cut();
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

test.describe('cancelling an upload', () => {
  let proxy: HoldingProxy;
  test.beforeEach(async () => {
    proxy = new HoldingProxy();
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
    const head = await request.head(`http://127.0.0.1:${APP_PORT}${deleted.path}`, { headers: { ...userFor(info).auth, 'Tus-Resumable': '1.0.0' } });
    expect(head.status()).toBe(404);
    expect((await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data).toHaveLength(0);
    // Never sent again after the cancel.
    expect(proxy.seen.filter((r) => r.method === 'PATCH')).toHaveLength(1);
    expect(proxy.seen.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/files'))).toHaveLength(0);
  });
});
