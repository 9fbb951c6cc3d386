// Reconnect at once, end to end in Chromium: a change made offline, several failed attempts
// while the network is gone — none of them counted toward the change's backoff — then the
// network comes back and the change reaches the server without anyone pressing anything. The
// network is gated per request (context.route) because Chromium's offline emulation does not
// reliably cut the sync worker off, nor tell it `online`. That coming online ends every wait at
// once (no time passing) is tests/sync/reconnect.test.ts's, on a controlled clock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import { APP_PORT } from '../../playwright.config';
import { api, expectAllSynced, signIn, unique, userFor } from './helpers';

/** The operations in the outbox of the page's sync database(s), read from IndexedDB as they are stored. */
function outboxOps(page: Page) {
  return page.evaluate(async () => {
    const request = <T>(r: IDBRequest<T>) =>
      new Promise<T>((resolve, reject) => {
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
    const ops: Array<{ kind: string; state: string; attempts: number; nextAttemptAt: number; now: number }> = [];
    for (const { name } of await indexedDB.databases()) {
      if (!name?.startsWith('parley')) continue;
      const db = await request(indexedDB.open(name));
      try {
        if (!db.objectStoreNames.contains('outbox')) continue;
        const all = await request(db.transaction('outbox').objectStore('outbox').getAll());
        for (const op of all) ops.push({ kind: op.body?.kind, state: op.state, attempts: op.attempts, nextAttemptAt: op.nextAttemptAt, now: Date.now() });
      } finally {
        db.close();
      }
    }
    return ops;
  });
}

test('queued change reaches the server as soon as the network is back, nothing pressed', async ({ page, context, request }, info) => {
  test.setTimeout(120_000);
  const server = await api(request, info);
  await signIn(page, info);

  let online = true;
  let failedCreates = 0;
  await context.route(/\/v1\//, async (route) => {
    if (online) return route.continue();
    if (route.request().method() === 'POST') failedCreates++;
    return route.abort('internetdisconnected');
  });

  online = false;
  await context.setOffline(true);
  const contact = unique('reconnect');
  await page.getByRole('button', { name: /New/ }).click();
  await page.getByLabel('Contact id').fill(contact);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  await expect(page.getByTestId('sync-status')).toContainText('Offline');

  // Six failed sends. Counted toward the operation's backoff, as they used to be, the next
  // attempt would be ≥ 16 s away (1 s doubling, half of it jitter). Not the change's fault: it
  // waits, as stored, with no attempt counted and nothing to wait for (read between attempts:
  // while one is out the operation is in flight).
  await expect.poll(() => failedCreates, { timeout: 60_000, intervals: [250] }).toBeGreaterThanOrEqual(6);
  expect((await server.allConversations()).some((c) => c.contact_id === contact)).toBe(false);
  await expect
    .poll(
      async () =>
        (await outboxOps(page))
          .filter((op) => op.kind === 'conversation.create' && op.state === 'queued')
          .map((op) => ({ attempts: op.attempts, due: op.nextAttemptAt <= op.now })),
      { timeout: 30_000 },
    )
    .toEqual([{ attempts: 0, due: true }]);

  online = true;
  await context.setOffline(false); // the page gets `online`, and forwards it to the worker
  // It arrives, once, nothing pressed (the wait given up on is generous, for a loaded machine).
  await expect
    .poll(async () => (await server.allConversations()).filter((c) => c.contact_id === contact).length, { timeout: 30_000, intervals: [200] })
    .toBe(1);
  await expectAllSynced(page, 15_000);
  await context.unroute(/\/v1\//);
});

/**
 * The app through a proxy that reads upload bodies slowly (about 2 MB/s), so an upload takes
 * seconds and its progress can be seen. Host is rewritten to the app's own (its Host rule).
 */
async function slowUploadProxy(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      { host: '127.0.0.1', port: APP_PORT, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${APP_PORT}` } },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    // An upload's bytes: POST /v1/files, or a resumable upload's creation and PATCHes (tus).
    const uploadBody = (req.method === 'POST' && /^\/v1\/(files|uploads)/.test(req.url ?? '')) || (req.method === 'PATCH' && req.url?.startsWith('/v1/uploads/'));
    if (uploadBody) {
      req.on('data', (chunk: Buffer) => {
        upstream.write(chunk);
        req.pause();
        setTimeout(() => req.resume(), Math.ceil(chunk.length / 2_000));
      });
      req.on('end', () => upstream.end());
    } else {
      req.pipe(upstream);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('a pending upload shows how much of it has been sent', async ({ page, request }, info) => {
  test.setTimeout(120_000);
  const server = await api(request, info);
  const contact = unique('progress');
  await server.createConversation(contact);
  const proxy = await slowUploadProxy();
  try {
    await page.goto(`${proxy.origin}/`);
    await page.getByLabel('Access token').fill(userFor(info).token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectAllSynced(page);
    await page.getByText(contact).first().click();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();

    // The header as it is before the upload (issue 21: the pill keeps its width, nothing reflows).
    const header = async () => ({
      header: await page.locator('header.topbar').boundingBox(),
      pill: await page.getByTestId('sync-status').boundingBox(),
      signOut: await page.locator('header.topbar > button.link').boundingBox(),
    });
    const before = await header();

    // 16 MiB at ~2 MB/s: several seconds on the way, shown as a share sent, below 100 %.
    await page.getByLabel('Upload files').setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(16 * 1024 * 1024, 7) });
    const row = page.getByRole('listitem').filter({ hasText: 'big.bin' });
    await expect(row.getByTestId('upload-progress')).toHaveText(/^([1-9]|[1-9]\d)% sent$/, { timeout: 20_000 });
    // On the pill: a bar along its foot (its width never changes), the share sent in its label.
    await expect(page.getByTestId('upload-progress-summary')).toHaveAttribute('aria-label', /^Uploads: \d+% sent$/);
    expect(await header()).toEqual(before);
    await expectAllSynced(page, 60_000);
    await expect(row.getByTestId('upload-progress')).toHaveCount(0);
    const conversation = (await server.allConversations()).find((c) => c.contact_id === contact);
    const files = (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data;
    expect(files.map((f: { filename: string; file_size: number }) => [f.filename, f.file_size])).toEqual([['big.bin', 16 * 1024 * 1024]]);
  } finally {
    await proxy.close();
  }
});
