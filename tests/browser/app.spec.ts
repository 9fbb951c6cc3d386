import { expect, test } from '@playwright/test';
import { E2E_TOKENS } from '../../playwright.config';
import { api, base, expectAllSynced, openConversation, signIn, unique, waitForServiceWorker } from './helpers';

test('opening a conversation records last_opened_at on the server', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('opened');
  const conversation = await server.createConversation(contact);
  expect(conversation.last_opened_at).toBeNull();
  await signIn(page, info);
  await openConversation(page, contact);
  await expectAllSynced(page);
  await expect.poll(async () => (await server.get(`/v1/conversations/${conversation.id}`)).body.last_opened_at).not.toBeNull();
});

test('a file opened once opens again with no network', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('cached');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'lab-results.txt', 'potassium 4.1 mmol/L');
  await signIn(page, info);
  await waitForServiceWorker(page);
  await openConversation(page, contact);
  const opened = context.waitForEvent('page');
  await page.getByRole('link', { name: 'lab-results.txt' }).click();
  const tab = await opened;
  await expect(tab.locator('body')).toContainText('potassium 4.1');
  await tab.close();

  await context.setOffline(true);
  const offlineTab = await context.newPage();
  await offlineTab.goto(file.file_url);
  await expect(offlineTab.locator('body')).toContainText('potassium 4.1');
  // one never opened is not there
  const other = await server.upload(conversation.id, 'never-opened.txt', 'x');
  const missing = await offlineTab.goto(other.file_url).catch((e: Error) => e);
  expect(missing instanceof Error || (missing && missing.status() >= 400)).toBe(true);
});

test('sign-out names unsynced changes, then clears the local data', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('signout');
  await server.createConversation(contact);
  await signIn(page, info);
  await expect(page.getByRole('link', { name: new RegExp(contact) })).toBeVisible();

  await context.setOffline(true);
  await page.getByRole('button', { name: `Pin ${contact}` }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  const dialog = page.getByRole('dialog', { name: 'Sign out?' });
  await expect(dialog).toContainText('1 change has not reached the server');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await context.setOffline(false);
  await expectAllSynced(page);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(dialog).toContainText('Everything is synced');
  await dialog.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page.getByLabel('Access token')).toBeVisible();
  const databases = await page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
  expect(databases.filter((name) => name?.startsWith('parley'))).toEqual([]);
  expect(await page.evaluate(() => localStorage.getItem('parley:token'))).toBeNull();
});

test('10,000 conversations: virtualised rows, smooth to the end', async ({ page, request }, info) => {
  test.skip(info.project.name !== 'phone', 'one viewport is enough for the volume check');
  test.setTimeout(180_000);
  const auth = { authorization: `Bearer ${E2E_TOKENS.carol}` };
  const existing = (await (await request.get(`${base}/v1/conversations?limit=1`, { headers: auth })).json()).data.length;
  if (existing === 0) {
    // 10,000 creates, 32 at a time, over the real API.
    for (let start = 0; start < 10_000; start += 32) {
      await Promise.all(
        Array.from({ length: Math.min(32, 10_000 - start) }, (_, i) =>
          request.post(`${base}/v1/conversations`, { headers: auth, data: { contact_id: `bulk-${String(start + i).padStart(5, '0')}` } }),
        ),
      );
    }
  }
  await page.goto('/');
  await page.getByLabel('Access token').fill(E2E_TOKENS.carol);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expectAllSynced(page, 120_000);
  const table = page.getByRole('table', { name: 'Conversations' });
  await expect(table).toHaveAttribute('aria-rowcount', '10001');
  const rendered = await table.getByRole('row').count();
  expect(rendered).toBeLessThan(60); // only what is on screen (plus overscan)
  // Scroll to the end in steps and time the frames.
  const longest = await page.evaluate(async () => {
    const body = document.querySelector('.vtable-body')!;
    let worst = 0;
    let last = performance.now();
    for (let i = 0; i < 40; i++) {
      body.scrollTop += body.scrollHeight / 40;
      await new Promise(requestAnimationFrame);
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }
    return worst;
  });
  await expect(table.locator('[aria-rowindex="10001"]')).toBeVisible(); // the last row, reached
  console.log(`[10k] longest frame while scrolling: ${longest.toFixed(1)} ms; rows in the DOM: ${rendered}`);
  expect(longest).toBeLessThan(1000); // a sanity bound, not a speed target (see npm run bench)
});
