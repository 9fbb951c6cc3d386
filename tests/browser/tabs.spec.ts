// Two tabs of the app, one user, the real Web Locks path: both queue changes offline; back
// online, each change reaches the server exactly once, and only one tab's sync worker replays at
// a time — while one holds the sync lock (stuck in its first write, held at the route below),
// the other waits for the lock rather than replaying beside it. Desktop project only.
import { expect, test, type Page } from '@playwright/test';
import { IN_FLIGHT } from '../../lib/sync/outbox/replay';
import { api, expectAllSynced, signIn, unique, unlockIfLocked } from './helpers';

async function createOffline(page: Page, contact: string) {
  await page.getByRole('button', { name: /New/ }).click();
  await page.getByLabel('Contact id').fill(contact);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  await page.getByRole('button', { name: 'Pin', exact: true }).click();
  await page.getByLabel('Upload files').setInputFiles({ name: `${contact}.txt`, mimeType: 'text/plain', buffer: Buffer.from(contact) });
  await expect(page.getByText(`${contact}.txt`)).toBeVisible();
}

/** The sync lock as the browser's lock manager sees it (held by one worker, requested by others). */
function syncLocks(page: Page) {
  return page.evaluate(async () => {
    const state = await navigator.locks.query();
    const sync = (lock: LockInfo) => lock.name?.startsWith('parley-sync:') ?? false;
    return {
      held: state.held!.filter(sync).map((l) => l.clientId),
      pending: state.pending!.filter(sync).map((l) => l.clientId),
    };
  });
}

test('two tabs: every change sent once, one replayer at a time', async ({ context, request }, info) => {
  const server = await api(request, info);
  const tabA = await context.newPage();
  await signIn(tabA, info);
  const tabB = await context.newPage();
  await tabB.goto('/');
  await unlockIfLocked(tabB);
  await expect(tabB.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  await expectAllSynced(tabB);

  // Every /v1 request of either tab's worker passes through here to the real server. The first
  // write is held until the test lets it go.
  let online = true;
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  let holding = false;
  let inFlight = 0;
  let maxInFlight = 0;
  const writeKeys: string[] = [];
  await context.route(/\/v1\//, async (route) => {
    if (!online) return route.abort('internetdisconnected');
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const request = route.request();
      // A write's identity: its Idempotency-Key; a resumable upload's PATCH carries none (its
      // Upload-Offset makes it safe to repeat), so it is named by its URL and offset.
      if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method())) {
        const headers = request.headers();
        writeKeys.push(headers['idempotency-key'] ?? `${request.method()} ${request.url()} @${headers['upload-offset'] ?? '?'}`);
        if (writeKeys.length === 1) {
          holding = true;
          await held;
        }
      }
      await route.fulfill({ response: await route.fetch() });
    } finally {
      inFlight--;
    }
  });

  await context.setOffline(true);
  online = false;
  const contactA = unique('tab-a');
  const contactB = unique('tab-b');
  await createOffline(tabA, contactA);
  await createOffline(tabB, contactB);
  await expect(tabA.getByTestId('pending-count')).toBeVisible();

  online = true;
  await context.setOffline(false);
  // Both workers want to sync now. One holds the lock and sits in its first write (it may send
  // other, independent writes beside it: a replayer has a few requests in flight); the other
  // must wait for the lock instead of replaying the same outbox beside it — which would send an
  // operation's key a second time. Wait until it has done either — asked for the lock, or sent a
  // key again.
  const keySentTwice = () => new Set(writeKeys).size < writeKeys.length;
  await expect.poll(() => holding, { timeout: 30_000 }).toBe(true);
  await expect
    .poll(async () => keySentTwice() || (await syncLocks(tabA)).pending.length > 0, { timeout: 30_000 })
    .toBe(true);
  expect(keySentTwice(), 'a second replayer sent a request while the first was mid-write').toBe(false);
  const locks = await syncLocks(tabA);
  expect(locks.held).toHaveLength(1);
  // Waiting: the other tab's worker, and where Background Sync fired, the service worker's flush.
  expect(locks.pending.length).toBeGreaterThanOrEqual(1);
  expect(locks.pending).not.toContain(locks.held[0]);
  letGo();

  await expectAllSynced(tabA, 45_000);
  await expectAllSynced(tabB, 45_000);
  // Each change reached the server exactly once…
  const conversations = await server.allConversations();
  for (const contact of [contactA, contactB]) {
    const created = conversations.filter((c) => c.contact_id === contact);
    expect(created, contact).toHaveLength(1);
    expect(created[0].is_pinned).toBe(true);
    const files = (await server.get(`/v1/files?conversation_id=${created[0].id}`)).body.data;
    expect(files.map((f: { filename: string }) => f.filename)).toEqual([`${contact}.txt`]);
  }
  // …each write was sent once (no key twice), and never more requests at once than one replayer sends.
  expect(writeKeys.length).toBeGreaterThanOrEqual(6);
  expect(new Set(writeKeys).size).toBe(writeKeys.length);
  expect(maxInFlight).toBeLessThanOrEqual(IN_FLIGHT);
  // The handler takes time between route.fetch() and route.fulfill(); a plain unroute while a
  // request is in there (a pull the last sync started) gives the route to the network at once, and
  // the handler's fulfill then fails with "Route is already handled!" (and the request was sent
  // twice). 'wait' removes the handler for new requests and lets those it holds finish first.
  await context.unrouteAll({ behavior: 'wait' });
});
