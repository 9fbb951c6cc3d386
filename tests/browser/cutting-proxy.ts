// A link between the browser and an app server that can be cut mid-upload, for the resumable-upload
// browser tests (resumable-upload.spec.ts, proxy-resumable-upload.spec.ts, upload-cancel.spec.ts); it also records
// every request it passes (so it serves as a recording link between two servers as well), and can
// refuse everything for a while (a server unreachable while the browser says online).
//
// How the transfers are cut: the page is served through this small HTTP proxy in the test process
// (node:http, Host rewritten to the target's). Playwright's context.route cannot cut a request
// mid-body (it aborts before sending or fulfils after), and Chromium's offline emulation leaks.
// The proxy forwards each PATCH body byte by byte as it arrives and, once the link's budget of
// bytes is spent, destroys both sockets: the browser sees a network error mid-upload, the server
// a broken body (it keeps what arrived). It also counts the bytes the browser sent, and can hold a
// PATCH mid-body (the reload test) until the page is gone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';
import { setPinIfAsked, userFor } from './helpers';

export interface Seen {
  method: string;
  path: string;
  offset: number | null;
}

export class CuttingProxy {
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
  /** Drop every request as it arrives (the server unreachable while the browser's network is up). */
  refuse = false;

  /** `targetPort`: the server on 127.0.0.1 it passes everything to. */
  constructor(private readonly targetPort: number) {
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
    if (this.refuse) return void req.socket.destroy();
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
      port: this.targetPort,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: `127.0.0.1:${this.targetPort}` },
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
    // The browser gave up the request (the worker aborted it, the page went): so does the server's side.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
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

/** Signs in on the page served at `origin` (the link's), and waits until all is synced. */
export async function signInThrough(page: Page, info: TestInfo, origin: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel('Access token').fill(userFor(info).token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await setPinIfAsked(page);
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  await expect(page.getByTestId('sync-status')).toHaveText('All synced', { timeout: 30_000 });
}

export async function openThrough(page: Page, title: string): Promise<void> {
  await page.getByRole('link', { name: new RegExp(title) }).first().click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(title) })).toBeVisible();
}

/** The bytes of a file as the server at `origin` serves them (its file_url's path, asked there). */
export async function serverBytes(request: APIRequestContext, info: TestInfo, fileUrl: string, origin: string): Promise<Buffer> {
  const url = new URL(fileUrl);
  const r = await request.get(`${origin}${url.pathname}${url.search}`, { headers: userFor(info).auth });
  expect(r.status()).toBe(200);
  return Buffer.from(await r.body());
}
