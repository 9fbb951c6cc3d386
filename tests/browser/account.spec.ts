// No data crosses accounts on a device. The session's token stops working (the server answers it
// 401, injected with context.route so the dedicated worker's requests are caught too; everything
// else is the real server): "sign in again" with another user's token is refused and the queued
// change never reaches that account; a new token of the same user keeps the unsynced changes,
// across a reload, and they then sync. Sign-out removes the user's databases and opened files.
import { expect, test, type APIRequestContext, type BrowserContext, type Page } from '@playwright/test';
import { E2E_SECOND_TOKENS, E2E_TOKENS } from '../../playwright.config';
import { legacyDatabaseName } from '../../lib/sync/mirror/db';
import { appOrigin, expectAllSynced, leaveInStorage, lockOn, openConversation, setPinIfAsked, unique, unlockIfLocked, waitForServiceWorker } from './helpers';

const ERIN = E2E_TOKENS.erin;
const ERIN_2 = E2E_SECOND_TOKENS.erin;
const FRANK = E2E_TOKENS.frank;

function serverAs(request: APIRequestContext, token: string) {
  const headers = { authorization: `Bearer ${token}` };
  return {
    async createConversation(contact_id: string) {
      const r = await request.post(`${appOrigin()}/v1/conversations`, { headers, data: { contact_id } });
      expect(r.status()).toBe(201);
      return r.json();
    },
    async upload(conversation_id: string, name: string, body: string) {
      const r = await request.post(`${appOrigin()}/v1/files`, { headers, multipart: { conversation_id, file: { name, mimeType: 'text/plain', buffer: Buffer.from(body) } } });
      expect(r.status()).toBe(201);
      return r.json();
    },
    async contacts(): Promise<string[]> {
      const out: string[] = [];
      let after = '';
      for (;;) {
        const page = await (await request.get(`${appOrigin()}/v1/conversations?limit=100${after}`, { headers })).json();
        out.push(...page.data.map((c: { contact_id: string }) => c.contact_id));
        if (!page.has_more) return out;
        after = `&starting_after=${page.data.at(-1).id}`;
      }
    },
    async files(conversationId: string) {
      return (await (await request.get(`${appOrigin()}/v1/files?conversation_id=${conversationId}`, { headers })).json()).data;
    },
  };
}

async function signInWith(page: Page, token: string) {
  await page.goto('/');
  await page.getByLabel('Access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await setPinIfAsked(page);
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  await expectAllSynced(page);
}

interface Gate {
  /** The server answers this token 401 from now on (revoked), for the page and its sync worker. */
  revoked: string | null;
  /** While set, writes fail as if the network dropped (Chromium's offline mode leaks from workers). */
  holdWrites: boolean;
  /** Writes (POST/PUT/DELETE to /v1) that reached the server, as "METHOD path token". */
  writes: string[];
}

/** Watches /v1 for the page and its dedicated worker; everything not gated goes to the real server. */
async function gateV1(context: BrowserContext, options: { noMe?: boolean } = {}): Promise<Gate> {
  const gate: Gate = { revoked: null, holdWrites: false, writes: [] };
  await context.route(/\/v1\//, async (route) => {
    const request = route.request();
    const auth = (await request.headerValue('authorization')) ?? '';
    const path = new URL(request.url()).pathname;
    if (gate.revoked && auth === `Bearer ${gate.revoked}`) {
      return route.fulfill({
        status: 401,
        headers: { 'www-authenticate': 'Bearer' },
        contentType: 'application/json',
        body: JSON.stringify({ type: 'invalid_request', code: 'unauthenticated', message: 'The token was revoked' }),
      });
    }
    if (options.noMe && path === '/v1/me') {
      // What a server with only the brief's interface answers.
      return route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ type: 'invalid_request', code: 'resource_missing', message: 'No such route' }) });
    }
    // Writes: not the reads, nor the capability probe (OPTIONS /v1/uploads needs no token).
    if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method())) {
      if (gate.holdWrites) return route.abort('internetdisconnected');
      gate.writes.push(`${request.method()} ${path} ${auth.replace('Bearer ', '')}`);
    }
    return route.continue();
  });
  return gate;
}

async function createConversationInApp(page: Page, contact: string) {
  await page.getByRole('button', { name: /New/ }).click();
  await page.getByLabel('Contact id').fill(contact);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
}

/**
 * The tab "becomes visible" again, which asks for a sync. (Not the Sync now button: the sync
 * worker's own retry may already have opened the modal sign-in dialog over it.)
 */
async function syncSoon(page: Page) {
  await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
}

/** The session's token as kept on the device: in clear, or (with the lock on) sealed in the lock's record. */
async function storedToken(page: Page): Promise<string | null> {
  return page.evaluate(() => localStorage.getItem('parley:token') ?? (JSON.parse(localStorage.getItem('parley:lock') ?? '{}').sealedToken as string | undefined) ?? null);
}

async function parleyDatabases(page: Page): Promise<string[]> {
  return page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name!).filter((n) => n.startsWith('parley')));
}

for (const server of ['with GET /v1/me', 'without it (the probe)']) {
  test(`sign in again with another user's token is refused; the queued change never reaches that account (${server})`, async ({ page, context, request }) => {
    const erin = serverAs(request, ERIN);
    const frank = serverAs(request, FRANK);
    const known = unique('known');
    await erin.createConversation(known); // mirrored: a real id the probe can ask about
    const gate = await gateV1(context, { noMe: server !== 'with GET /v1/me' });
    await signInWith(page, ERIN);
    await expect(page.getByRole('link', { name: new RegExp(known) })).toBeVisible();
    // Named after the user the server named, or (no /v1/me) at random, found again by the probe.
    expect(await parleyDatabases(page)).toEqual([expect.stringMatching(server === 'with GET /v1/me' ? /^parley-sync-u-/ : /^parley-sync-d-/)]);

    // A change is queued (writes held), then the token is revoked: the next sync meets a 401.
    gate.holdWrites = true;
    const queued = unique('queued');
    await createConversationInApp(page, queued);
    gate.revoked = ERIN;
    gate.holdWrites = false; // from here the network is fine: only the token is refused
    const tokenBefore = await storedToken(page);
    await syncSoon(page);
    const dialog = page.getByRole('dialog', { name: 'Sign in again' });
    await expect(dialog).toBeVisible();

    await dialog.getByLabel('Access token').fill(FRANK);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await expect(dialog.getByRole('alert')).toContainText('belongs to a different account');
    await expect(dialog.getByRole('alert')).toContainText('nothing was sent and they are kept');
    await expect(dialog.getByRole('alert')).toContainText('sign out, which discards them');
    await expect(dialog.getByRole('button', { name: 'Sign out…' })).toBeVisible(); // the way out it names
    await expect(page.getByTestId('pending-count')).toBeVisible();
    expect(await storedToken(page)).toBe(lockOn() ? tokenBefore : ERIN);

    // The same user's new token is taken and the change goes to erin; by then anything the
    // refused attempt could have set off would have been sent too.
    await dialog.getByLabel('Access token').fill(ERIN_2);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await expect(dialog).toBeHidden();
    await expectAllSynced(page);
    expect(gate.writes.filter((w) => w.endsWith(FRANK))).toEqual([]);
    expect(await frank.contacts()).not.toContain(queued);
    expect(await erin.contacts()).toContain(queued);
  });
}

test('a new token of the same user keeps the unsynced changes, across a reload, and they then sync', async ({ page, context, request }) => {
  const erin = serverAs(request, ERIN);
  await signInWith(page, ERIN);
  const databases = await parleyDatabases(page);
  expect(databases).toHaveLength(1);
  const gate = await gateV1(context);
  gate.holdWrites = true;

  const queued = unique('kept');
  await createConversationInApp(page, queued);
  await page.getByLabel('Upload files').setInputFiles({ name: 'referral.txt', mimeType: 'text/plain', buffer: Buffer.from('referral letter') });
  await expect(page.getByText('referral.txt')).toBeVisible();
  gate.revoked = ERIN;
  await syncSoon(page);
  const dialog = page.getByRole('dialog', { name: 'Sign in again' });
  await dialog.getByLabel('Access token').fill(ERIN_2);
  await dialog.getByRole('button', { name: 'Sign in' }).click();
  await expect(dialog).toBeHidden();

  // Nothing could be sent yet (writes held). A reload opens the same database, outbox and bytes.
  await page.reload();
  await unlockIfLocked(page);
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(queued) })).toBeVisible();
  await expect(page.getByText('referral.txt')).toBeVisible();
  await expect(page.getByTestId('pending-count')).toBeVisible();
  expect(await parleyDatabases(page)).toEqual(databases);
  expect(gate.writes).toEqual([]);

  gate.holdWrites = false;
  await syncSoon(page);
  await expectAllSynced(page);
  const conversation = (await (await request.get(`${appOrigin()}/v1/conversations?limit=100`, { headers: { authorization: `Bearer ${ERIN}` } })).json()).data.find(
    (c: { contact_id: string }) => c.contact_id === queued,
  );
  expect(conversation).toBeDefined();
  expect((await erin.files(conversation.id)).map((f: { filename: string; file_size: number }) => [f.filename, f.file_size])).toEqual([['referral.txt', 15]]);
  expect(gate.writes.every((w) => w.endsWith(ERIN_2))).toBe(true);
});

test("sign-out removes the user's databases (the adopted one of an earlier version too) and opened documents, and says so", async ({ page, context, request }) => {
  const erin = serverAs(request, ERIN);
  const contact = unique('leaving');
  const conversation = await erin.createConversation(contact);
  await erin.upload(conversation.id, 'discharge.txt', 'discharge summary');

  // An install of an earlier version: only the token was kept, and the database was named after it.
  await leaveInStorage(page, appOrigin(), { 'parley:token': ERIN });
  await page.goto('/');
  await setPinIfAsked(page);
  await expectAllSynced(page);
  expect(await parleyDatabases(page)).toEqual([legacyDatabaseName(ERIN)]);
  await waitForServiceWorker(page);
  const gate = await gateV1(context);

  // Opening the conversation reports it (a PUT of last_opened_at); wait for that one to have gone, so
  // that the report of coming back from the document is a change of its own (unsent ones merge).
  const openedReports = () => gate.writes.filter((w) => w.startsWith(`PUT /v1/conversations/${conversation.id} `)).length;
  await openConversation(page, contact);
  await expect.poll(openedReports).toBe(1);
  // Open a document: the service worker keeps it for offline use.
  await page.getByRole('link', { name: 'discharge.txt' }).click();
  await expect(page.getByLabel('Contents of discharge.txt')).toContainText('discharge summary');
  await page.getByRole('link', { name: 'Back' }).click();
  // Kept for offline use (the service worker's cache, or sealed in the database on a locked device): marked.
  await expect(page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'discharge.txt', exact: true }) }).getByText('On this device')).toBeVisible();

  // One change that cannot reach the server, once both reports of the opening (the visit, and the
  // return from the document) have gone: "All synced" can show before the second one is queued.
  await expect.poll(openedReports).toBe(2);
  await expectAllSynced(page);
  gate.writes.length = 0;
  gate.holdWrites = true;
  await page.getByRole('button', { name: 'Pin', exact: true }).click();
  // And a queued upload, whose bytes wait in the database (2 KiB, so the notice can name them).
  await page.getByLabel('Upload files').setInputFiles({ name: 'wound.txt', mimeType: 'text/plain', buffer: Buffer.alloc(2048, 'w') });
  await expect(page.getByTestId('pending-count')).toHaveText(/2 pending/);

  await page.getByRole('button', { name: 'Sign out' }).click();
  const confirm = page.getByRole('dialog', { name: 'Sign out?' });
  await expect(confirm).toContainText('2 changes have not reached the server');
  await confirm.getByRole('button', { name: 'Sign out and discard changes' }).click();

  await expect(page.getByTestId('signin-notice')).toHaveText(
    /^Removed from this device: \d+ conversations?, \d+ files?, 1 opened document, 2 unsynced changes \(with 2\.0 KB of files waiting to upload\)\.$/,
  );
  await expect(page.getByLabel('Access token')).toBeVisible();
  expect(await parleyDatabases(page)).toEqual([]);
  expect(await page.evaluate(() => caches.keys())).not.toContain('parley-files');
  // workbox's bookkeeping of the cache lists the files' URLs: gone too.
  const remembered = await page.evaluate(
    () =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open('workbox-expiration');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          if (!db.objectStoreNames.contains('cache-entries')) return resolve(0);
          const count = db.transaction('cache-entries').objectStore('cache-entries').index('cacheName').count('parley-files');
          count.onsuccess = () => resolve(count.result);
          count.onerror = () => reject(count.error);
        };
      }),
  );
  expect(remembered).toBe(0);
  expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('parley:')))).toEqual([]);
  expect(gate.writes).toEqual([]);
});

test('the sign-in-again dialog offers sign-out, which discards the unsynced changes and says so', async ({ page, context }) => {
  await signInWith(page, ERIN);
  const gate = await gateV1(context);
  gate.holdWrites = true;
  await createConversationInApp(page, unique('discarded'));
  gate.revoked = ERIN;
  await syncSoon(page);
  const dialog = page.getByRole('dialog', { name: 'Sign in again' });
  await dialog.getByRole('button', { name: 'Sign out…' }).click();
  const confirm = page.getByRole('dialog', { name: 'Sign out?' });
  // The new conversation; not the report of its opening (bookkeeping, never the user's change).
  await expect(confirm).toContainText('1 change has not reached the server');
  await confirm.getByRole('button', { name: 'Sign out and discard changes' }).click();
  await expect(page.getByTestId('signin-notice')).toHaveText(/, 1 unsynced change\.$/);
  expect(await parleyDatabases(page)).toEqual([]);
  expect(gate.writes).toEqual([]);
});
