// Sync when the app is closed (Background Sync, Chromium): changes queued while the server could
// not be reached are sent by the service worker after the page was closed, once the network is
// back. The browser would fire the 'sync' event on its own schedule; the test fires it through the
// DevTools protocol (ServiceWorker.dispatchSyncEvent), with no page of the app open.
import { expect, test } from '@playwright/test';
import { api, base, expectAllSynced, signIn, unique, waitForServiceWorker } from './helpers';

test('changes queued before the app was closed are sent by the service worker when the network is back', async ({ browser, request }, info) => {
  const context = await browser.newContext({ ...info.project.use });
  const server = await api(request, info);
  let page = await context.newPage();
  await signIn(page, info);
  await waitForServiceWorker(page);

  // The server cannot be reached (page, dedicated worker and service worker alike): no write goes.
  // Every write is recorded with who sent it.
  let reachable = false;
  const writes: Array<{ what: string; by: 'service worker' | 'page'; sent: boolean }> = [];
  await context.route(/\/v1\//, (route) => {
    const request = route.request();
    if (request.method() === 'GET') return route.continue();
    writes.push({ what: `${request.method()} ${new URL(request.url()).pathname}`, by: request.serviceWorker() ? 'service worker' : 'page', sent: reachable });
    return reachable ? route.continue() : route.abort('internetdisconnected');
  });
  const contact = unique('closed');
  await page.getByRole('button', { name: /New/ }).click();
  await page.getByLabel(/Contact id/i).fill(contact);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page.getByTestId('pending-count')).toHaveText(' · 1 pending'); // the create (its opening is queued too, but it is bookkeeping, not a change)
  const database = await page.evaluate(() => localStorage.getItem('parley:database'));
  const tag = `parley-outbox:${database}`;
  await expect
    .poll(() => page.evaluate(async () => ((await navigator.serviceWorker.ready) as any).sync.getTags() as Promise<string[]>))
    .toContain(tag);
  await expect.poll(() => writes.length).toBeGreaterThan(0); // it was tried, and refused by the "network"
  expect((await server.allConversations()).filter((c) => c.contact_id === contact)).toEqual([]);

  // The app is closed; then the network comes back. (The browser may fire the event by itself
  // from here on, as it would on a phone; the test fires it too, so it need not wait for that.)
  await page.close();
  reachable = true;

  // No page of the app is open: only the service worker can send it.
  const blank = await context.newPage();
  const cdp = await context.newCDPSession(blank);
  const registrationId = new Promise<string>((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const ours = registrations.find((r) => r.scopeURL === `${base}/` && !r.isDeleted);
      if (ours) resolve(ours.registrationId);
    });
  });
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.dispatchSyncEvent', { origin: base, registrationId: await registrationId, tag, lastChance: false });

  await expect
    .poll(async () => (await server.allConversations()).filter((c) => c.contact_id === contact).map((c) => c.last_opened_at !== null), { timeout: 30_000 })
    .toEqual([true]);
  // What reached the server was sent by the service worker: no page of the app was open.
  const sent = writes.filter((w) => w.sent);
  expect(sent.map((w) => w.what)).toEqual(['POST /v1/conversations', expect.stringMatching(/^PUT \/v1\/conversations\//)]);
  expect(sent.every((w) => w.by === 'service worker')).toBe(true);
  await context.unroute(/\/v1\//);

  // The app, opened again, finds its outbox empty.
  page = await context.newPage();
  await page.goto('/');
  await expectAllSynced(page);
  await expect(page.getByRole('link', { name: new RegExp(contact) }).first()).toBeVisible();
  await context.close();
});
