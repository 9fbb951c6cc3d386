// Storage that survives the browser: the device screen shows whether storage is persistent and
// how much is used; an upload the device cannot hold is refused at once (a real quota, set through
// the DevTools protocol); a database the browser cleared while the app was closed is noticed,
// pulled again, and the changes lost with it are reported.
import { expect, test, type Page } from '@playwright/test';
import { CutLink } from './cut-link';
import { accessibilityViolations, api, appPort, base, expectAllSynced, openConversation, screenshot, signIn, unique } from './helpers';



const SIZE = String.raw`\d+(\.\d)? (B|KB|MB|GB|TB)`;

test('the device screen shows persistent storage and usage of the quota', async ({ browser }, info) => {
  const context = await browser.newContext({ ...info.project.use, bypassCSP: true });
  const page = await context.newPage();
  await signIn(page, info);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Device' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'This device' })).toBeVisible();
  expect(page.url()).toBe(`${base}/?view=device`);

  // What the browser itself says, not a fixed answer.
  const persisted = await page.evaluate(() => navigator.storage.persisted());
  await expect(page.getByTestId('storage-persisted')).toHaveText(persisted ? /^Yes: persistent storage/ : /^No: the browser may clear/);
  await expect(page.getByTestId('storage-usage')).toHaveText(new RegExp(`^${SIZE} of ${SIZE} available to Parley$`));
  const { quota } = await page.evaluate(() => navigator.storage.estimate());
  const shownQuota = (await page.getByTestId('storage-usage').textContent())!.match(new RegExp(`of (${SIZE})`))![1];
  expect(shownQuota).toBe(await page.evaluate((q) => {
    // the app's humanSize, restated: powers of 1024, one decimal below 10
    const units = ['B', 'KB', 'MB', 'GB', 'TB'];
    let v = q;
    let u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return u === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
  }, quota!));
  await expect(page.getByTestId('storage-unsent')).toHaveText('None');
  await screenshot(page, info, 'device');
  expect(await accessibilityViolations(page)).toEqual([]);
  if (!persisted) {
    // Asking again: whatever the browser decides is what the screen then says.
    await page.getByRole('button', { name: 'Ask to keep data on this device' }).click();
    await expect(page.getByTestId('storage-persisted')).toHaveText(
      (await page.evaluate(() => navigator.storage.persisted())) ? /^Yes: persistent storage/ : /^No: the browser may clear/,
    );
    if (!(await page.evaluate(() => navigator.storage.persisted()))) {
      await expect(page.getByRole('status').filter({ hasText: 'The browser did not grant it' })).toBeVisible();
    }
    expect(await accessibilityViolations(page)).toEqual([]);
  }
  await context.close();
});

test('an upload the device cannot hold is refused at once, and nothing else is lost', async ({ browser, request }, info) => {
  const context = await browser.newContext({ ...info.project.use });
  const page = await context.newPage();
  const server = await api(request, info);
  const contact = unique('quota');
  const conversation = await server.createConversation(contact);
  await signIn(page, info);
  await openConversation(page, contact);

  // The browser's estimate says only a little more fits. (Chromium's DevTools quota override,
  // Storage.overrideQuotaForOrigin, does not reach a Playwright browser context's storage, so the
  // page's own navigator.storage.estimate answers it; what IndexedDB does when it is really full
  // is tests/sync/storage.test.ts's.)
  await page.evaluate(async () => {
    const { usage = 0 } = await navigator.storage.estimate();
    Object.defineProperty(navigator.storage, 'estimate', { configurable: true, value: async () => ({ usage, quota: usage + 256 * 1024 }) });
  });
  await page.getByLabel('Upload files').setInputFiles({ name: 'ward-round.mp4', mimeType: 'video/mp4', buffer: Buffer.alloc(3 * 1024 * 1024, 1) });
  const alert = page.getByRole('alert').filter({ hasText: 'ward-round.mp4' });
  await expect(alert).toContainText('Not enough storage on this device to keep “ward-round.mp4” until it is sent (3.0 MB needed, 256 KB free)');
  await expect(alert).toContainText('It was not queued; nothing else was lost.');
  await expect(page.getByText('No files yet.')).toBeVisible();
  await expect(page.getByTestId('pending-count')).toHaveCount(0);
  await screenshot(page, info, 'upload-refused');

  // A file that fits still goes, and reaches the server.
  await page.getByLabel('Upload files').setInputFiles({ name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('fits') });
  await expect(page.getByText('note.txt')).toBeVisible();
  // The pill is a live query of its own and may read "All synced" for a moment after the row shows.
  await expect
    .poll(async () => ((await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data as Array<{ filename: string }>).map((f) => f.filename))
    .toEqual(['note.txt']);
  await expectAllSynced(page);
  await context.close();
});

/** The session's database name and what the marker outside it says. */
async function marker(page: Page) {
  return page.evaluate(() => {
    const name = localStorage.getItem('parley:database');
    const entry = JSON.parse(localStorage.getItem('parley:databases') ?? '[]').find((e: any) => e.name === name);
    return { name: name!, mirror: entry?.mirror as { filled: boolean; pending: number } | undefined };
  });
}

/** Every realm alike (the service worker's Background Sync too, see cut-link.ts): /v1 writes never reach the server while held. */
const holdWrites = (link: CutLink) => (link.refusing = (method, path) => method !== 'GET' && path.startsWith('/v1/'));

const links: CutLink[] = [];
test.afterEach(async () => {
  for (const link of links.splice(0)) await link.stop();
});

test('a database the browser cleared while the app was closed is noticed and pulled again; lost changes are reported', async ({ browser, request }, info) => {
  // The browser reaches the app through a link of the test's own.
  const link = new CutLink(appPort());
  links.push(link);
  const context = await browser.newContext({ ...info.project.use, baseURL: await link.start() });
  const server = await api(request, info);
  const kept = unique('kept');
  await server.createConversation(kept);
  let page = await context.newPage();
  await signIn(page, info);
  await expect(page.getByRole('link', { name: new RegExp(kept) }).first()).toBeVisible();

  // Changes queued while the server cannot be reached: a new conversation, and its opening
  // (last_opened_at) that follows it — bookkeeping, never counted as the user's change.
  holdWrites(link);
  const lost = unique('lost');
  await page.getByRole('button', { name: /New/ }).click();
  await page.getByLabel(/Contact id/i).fill(lost);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page.getByTestId('pending-count')).toHaveText(' · 1 pending');
  await expect.poll(async () => (await marker(page)).mirror).toEqual({ filled: true, pending: 1 });
  const { name } = await marker(page);

  // The app is closed, and the browser clears its database behind its back.
  await page.close();
  page = await context.newPage();
  await page.goto('/v1/openapi.json'); // same origin, no app running
  const deleted = await page.evaluate(
    (db) =>
      new Promise<string>((resolve) => {
        const request = indexedDB.deleteDatabase(db);
        request.onsuccess = () => resolve('deleted');
        request.onerror = () => resolve('error');
        request.onblocked = () => resolve('blocked');
      }),
    name,
  );
  expect(deleted).toBe('deleted');
  link.refusing = null;

  // Opened again: the notice, the data back from the server, and the loss said, never "All synced".
  await page.goto('/');
  const notice = page.getByTestId('mirror-cleared');
  await expect(notice).toContainText('This device’s copy was cleared by the browser; reloaded from the server.');
  await expect(notice).toContainText('1 change made on this device had not reached the server and was lost.');
  await expect(page.getByRole('link', { name: new RegExp(kept) }).first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('sync-status')).toHaveText('Changes lost');
  await expect(page.getByRole('link', { name: new RegExp(lost) })).toHaveCount(0);
  await screenshot(page, info, 'mirror-cleared');

  await notice.getByRole('button', { name: 'Dismiss' }).click();
  await expect(notice).toHaveCount(0);
  await expectAllSynced(page);
  // Read once: the next start does not report it again.
  await page.reload();
  await expect(page.getByRole('link', { name: new RegExp(kept) }).first()).toBeVisible();
  await expectAllSynced(page);
  await expect(page.getByTestId('mirror-cleared')).toHaveCount(0);
  await context.close();
});
