// Files on the device (issue 32, item 6): which files the device holds is shown (a mark on their
// rows, a filter in the Files tab); offline, a file it does not hold says so and links nowhere;
// a file coming over the network shows how much has arrived, with a Cancel that stops the fetch.
// And the first session after installing — the service worker installed but not controlling the
// page until its next load — a file opened online opens offline: the viewer reads the device's
// copy itself, whatever controls the page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { appEnv, CHECKOUT, startApp, tempDir, type AppProcess } from './app-process';
import { openThrough, signInThrough } from './cutting-proxy';
import { accessibilityViolations, api, openConversation, signIn, unique, waitForServiceWorker } from './helpers';

// axe is injected as a script, which the app's CSP refuses (as it should).
test.use({ bypassCSP: true });

const NOT_ON_DEVICE = 'Not on this device — available when you’re back online.';

const fileRow = (page: Page, name: string) => page.getByRole('listitem').filter({ has: page.getByRole('link', { name, exact: true }) });
const tableRow = (page: Page, name: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) });
const controlled = (page: Page) => page.evaluate(() => navigator.serviceWorker.controller !== null);

async function openFile(page: Page, name: string) {
  await page.getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

test('in the first session after installing (no service worker controls the page), a file opened online opens offline', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('first-session');
  const conversation = await server.createConversation(contact);
  await server.upload(conversation.id, 'handover-notes.txt', 'bed 4: potassium 5.9, recheck at 18:00');
  await server.upload(conversation.id, 'never-opened.txt', 'not opened online');

  await signIn(page, info);
  // Installed and active, but this page was loaded before it: the worker does not control it
  // (no clients.claim), so nothing the page fetches goes through it.
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  expect(await controlled(page)).toBe(false);

  await openConversation(page, contact);
  await expect(fileRow(page, 'handover-notes.txt').getByText('On this device')).toHaveCount(0);
  await openFile(page, 'handover-notes.txt');
  await expect(page.getByLabel('Contents of handover-notes.txt')).toHaveText('bed 4: potassium 5.9, recheck at 18:00');
  await page.getByRole('link', { name: 'Back' }).click();
  // Kept on the device by the page itself, and marked.
  await expect(fileRow(page, 'handover-notes.txt').getByText('On this device')).toBeVisible();
  await expect(fileRow(page, 'never-opened.txt').getByText('On this device')).toHaveCount(0);

  // ---- no network from here (routes hold for the workers too, where offline emulation does not) ----
  const reached: string[] = [];
  await context.route(/\/(files|v1)\//, (route) => {
    // What the page (and its workers) asked for. The service worker's background pass may
    // revalidate what it keeps on its own schedule (it failed CI once that way); the viewer's
    // reading of the device is what this test is about.
    if (!route.request().serviceWorker()) reached.push(route.request().url());
    return route.abort('internetdisconnected');
  });
  await context.setOffline(true);
  await openFile(page, 'handover-notes.txt');
  await expect(page.getByLabel('Contents of handover-notes.txt')).toHaveText('bed 4: potassium 5.9, recheck at 18:00');
  // Still the same first session: nothing controls the page, no reload happened.
  expect(await controlled(page)).toBe(false);
  expect(reached.filter((u) => u.includes('/files/'))).toEqual([]);
  await page.getByRole('link', { name: 'Back' }).click();

  // One the device does not hold: said so, and no link to the server's copy (it could not open).
  await openFile(page, 'never-opened.txt');
  await expect(page.getByText(NOT_ON_DEVICE)).toBeVisible();
  await expect(page.getByRole('link', { name: /server’s copy/ })).toHaveCount(0);
  await expect(page.locator('a[href*="/files/"]')).toHaveCount(0);
  expect(await accessibilityViolations(page)).toEqual([]);
});

test('files on the device are marked in the conversation and the Files tab, which filters on them', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('marked');
  const conversation = await server.createConversation(contact);
  await server.upload(conversation.id, 'ecg-strip.txt', 'sinus rhythm');
  await server.upload(conversation.id, 'referral.txt', 'to cardiology');
  await server.upload(conversation.id, 'consent.txt', 'signed');

  await signIn(page, info);
  // Here the service worker controls the page: it keeps what the viewer fetches.
  await waitForServiceWorker(page);
  await openConversation(page, contact);
  await openFile(page, 'ecg-strip.txt');
  await expect(page.getByLabel('Contents of ecg-strip.txt')).toHaveText('sinus rhythm');
  await page.getByRole('link', { name: 'Back' }).click();
  await expect(fileRow(page, 'ecg-strip.txt').getByText('On this device')).toBeVisible();
  for (const other of ['referral.txt', 'consent.txt']) await expect(fileRow(page, other).getByText('On this device')).toHaveCount(0);

  // The Files tab, this conversation's files: the same mark, and the filter.
  await page.getByRole('link', { name: 'All files of this conversation' }).click();
  // "3 files" or "3 of N files": this conversation's, of every file of the user's on the device.
  await expect(page.getByTestId('file-count')).toHaveText(/^3 (of \d+ )?files$/);
  await expect(tableRow(page, 'ecg-strip.txt').getByText('On this device')).toBeVisible();
  await expect(tableRow(page, 'referral.txt').getByText('On this device')).toHaveCount(0);
  const filter = page.getByRole('checkbox', { name: 'On this device' });
  await filter.check();
  await expect(page.getByTestId('file-count')).toHaveText(/^1 of \d+ files$/);
  await expect(tableRow(page, 'ecg-strip.txt')).toBeVisible();
  await expect(tableRow(page, 'referral.txt')).toHaveCount(0);
  await expect(tableRow(page, 'consent.txt')).toHaveCount(0);
  expect(await accessibilityViolations(page)).toEqual([]);
  await filter.uncheck();
  await expect(page.getByTestId('file-count')).toHaveText(/^3 (of \d+ )?files$/);
});

/** A held answer: it reached its limit; release it; the browser gave it up before its end. */
interface Hold {
  state: { reached: boolean; abandoned: boolean };
  release(): void;
  onReached(): boolean;
  onAbandoned(): boolean;
}

function newHold(): Hold {
  const state = { reached: false, abandoned: false };
  return {
    state,
    release: () => {},
    onReached: () => (state.reached = true),
    onAbandoned: () => (state.abandoned = true),
  };
}

/**
 * Between the browser and an app of this test's own, passing everything (its Host too: the app's
 * file URLs name this link), except that the answer for a file whose path contains `gate.path`
 * stops after `gate.after` bytes until released. Playwright's routes cannot do that: they answer
 * with a whole body or none.
 */
class HoldingLink {
  server!: http.Server;
  port = 0;
  private gate: { path: string; after: number; hold: Hold } | null = null;

  /** The app's port: known once it has started (it is told this link's port first). */
  targetPort = 0;

  /** Holds the next answer for a file whose path contains `path` after `after` bytes. */
  arm(path: string, after: number): Hold {
    const hold = newHold();
    this.gate = { path, after, hold };
    return hold;
  }

  async start(port: number): Promise<void> {
    this.server = http.createServer((req, res) => this.forward(req, res));
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const up = http.request({ host: '127.0.0.1', port: this.targetPort, method: req.method, path: req.url, headers: req.headers });
    const gate = this.gate && req.method === 'GET' && req.url!.startsWith('/files/') && req.url!.includes(this.gate.path) ? this.gate : null;
    const hold = gate?.hold;
    if (gate) this.gate = null;
    up.on('response', (answer) => {
      const { connection: _keepAlive, 'keep-alive': _timeout, ...headers } = answer.headers;
      res.writeHead(answer.statusCode!, { ...headers, connection: 'close' });
      if (!gate || !hold) return void answer.pipe(res);
      let passed = 0;
      let open = false;
      let ended = false;
      const rest: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => {
        if (open) return void res.write(chunk);
        const room = Math.max(0, gate.after - passed);
        if (room > 0) res.write(chunk.subarray(0, room));
        passed += Math.min(room, chunk.length);
        if (chunk.length > room) {
          rest.push(chunk.subarray(room));
          hold.onReached();
        }
      });
      answer.on('end', () => (open ? res.end() : (ended = true)));
      hold.release = () => {
        open = true;
        for (const chunk of rest) res.write(chunk);
        if (ended) res.end();
      };
      res.on('close', () => {
        if (!res.writableFinished) {
          hold.onAbandoned();
          up.destroy();
        }
      });
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

test.describe('a long open', () => {
  let scratch: ReturnType<typeof tempDir>;
  let app: AppProcess;
  let link: HoldingLink;

  test.beforeAll(async () => {
    scratch = tempDir('parley-long-open-');
    // Free ports, so the projects' runs of this file may overlap: the link's first, as the app
    // must allow it as a Host.
    link = new HoldingLink();
    await link.start(0);
    app = await startApp(['.next/parley/server.mjs'], CHECKOUT, appEnv(path.join(scratch.dir, 'data'), { ALLOWED_HOSTS: `127.0.0.1:${link.port}` }));
    link.targetPort = Number(new URL(app.url).port);
  });
  test.afterAll(async () => {
    await link?.stop();
    await app?.stop();
    scratch?.remove();
  });

  test('shows the bytes received of the total while a file arrives; Cancel stops the fetch and goes back', async ({ page, request }, info) => {
    test.setTimeout(120_000);
    const server = await api(request, info, link.origin);
    const contact = unique('long-open');
    const conversation = await server.createConversation(contact);
    const size = 1536 * 1024;
    // Lines, as a report has (one line of a megabyte takes the page seconds to lay out).
    const scan = (name: string) => `${name}:\n`.padEnd(size, `${'x'.repeat(79)}\n`);
    await server.upload(conversation.id, 'scan-series.txt', scan('scan-series.txt'));
    await server.upload(conversation.id, 'echo-report.txt', scan('echo-report.txt'));
    await server.upload(conversation.id, 'angiogram.txt', scan('angiogram.txt'));

    await signInThrough(page, info, link.origin);
    await openThrough(page, contact);

    // The first 512 KB arrive, then the link holds: the viewer says how much of how much.
    const first = link.arm('scan-series.txt', 512 * 1024);
    await openFile(page, 'scan-series.txt');
    await expect.poll(() => first.state.reached, { timeout: 30_000 }).toBe(true);
    await expect(page.getByTestId('open-progress')).toHaveText(/^\s*512 KB of 1\.5 MB$/);
    await expect(page.getByRole('progressbar', { name: 'Received' })).toBeVisible();
    expect(await accessibilityViolations(page)).toEqual([]);
    // Released: the whole file shows.
    first.release();
    // A megabyte of text to lay out: more than the default wait on a busy machine.
    await expect(page.getByLabel('Contents of scan-series.txt')).toContainText('scan-series.txt:\nxxx', { timeout: 30_000 });
    await expect(page.getByRole('button', { name: 'Cancel' })).toHaveCount(0);
    await page.getByRole('link', { name: 'Back' }).click();

    // Another, held the same way: Cancel goes back to the conversation, and the fetch stops (the
    // browser gives up the request, the link sees it go).
    const second = link.arm('echo-report.txt', 256 * 1024);
    await openFile(page, 'echo-report.txt');
    await expect.poll(() => second.state.reached, { timeout: 30_000 }).toBe(true);
    await expect(page.getByTestId('open-progress')).toContainText('of 1.5 MB');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
    await expect.poll(() => second.state.abandoned, { timeout: 30_000 }).toBe(true);
    // Nothing of it was kept: it opens from the network next time, not half a file from the device.
    await expect(fileRow(page, 'echo-report.txt').getByText('On this device')).toHaveCount(0);
    await expect(fileRow(page, 'scan-series.txt').getByText('On this device')).toBeVisible();

    // Once the service worker controls the page (it fetches for the page), Cancel goes back the
    // same. (The worker's own fetch is not stopped by the page's abort in Chromium: it finishes
    // and keeps the file — not asserted here, see the report of issue 32 item 6.)
    await waitForServiceWorker(page); // reloads the page: still on the conversation
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
    const third = link.arm('angiogram.txt', 256 * 1024);
    await openFile(page, 'angiogram.txt');
    await expect.poll(() => third.state.reached, { timeout: 30_000 }).toBe(true);
    await expect(page.getByTestId('open-progress')).toContainText('of 1.5 MB');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
    third.release();
  });
});
