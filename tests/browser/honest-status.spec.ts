// Issue 21, the status and the new-conversation dialog, at 390×844 (phone) and on the desktop:
// the pill never says "All synced" beside the first sync's "Getting your data…"; it keeps its width
// (and the header its layout) while an upload runs; "Last synced …" is shown and ages with the
// clock (Playwright's, not a wait); the new conversation's contact/group toggles are 44 px targets
// and its id field offers ids the device already knows.
import { expect, test, type Page } from '@playwright/test';
import { accessibilityViolations, api, expectAllSynced, openConversation, signIn, unique, userFor } from './helpers';

test.use({ bypassCSP: true });

const boxOf = async (page: Page, selector: string) => {
  const box = await page.locator(selector).first().boundingBox();
  expect(box).not.toBeNull();
  return box!;
};

test('a first sync that stops half-way never reads "All synced" beside "Getting your data"', async ({ page, context }, info) => {
  // Every state the page shows is checked as it changes, not sampled.
  await context.addInitScript(() => {
    const w = window as unknown as { __contradictions: string[] };
    w.__contradictions = [];
    new MutationObserver(() => {
      const progress = document.querySelector('[data-testid="sync-progress"]');
      const pill = document.querySelector('[data-testid="sync-status"]');
      if (progress && pill?.textContent === 'All synced') w.__contradictions.push(progress.textContent ?? '');
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  // The server fails the first listing of conversations: the first sync stops, unfinished.
  let failing = true;
  await context.route(/\/v1\/conversations\?limit=\d+$/, async (route) => {
    if (failing) await route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { type: 'api_error', code: 'unavailable', message: 'busy' } }) });
    else await route.continue();
  });
  await page.goto('/');
  await page.getByLabel('Access token').fill(userFor(info).token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('sync-progress')).toHaveText(/^Getting your data: /);
  await expect(page.getByTestId('sync-status')).toHaveText('Waiting to sync');
  await expect(page.getByTestId('last-synced')).toHaveText(''); // never synced yet

  failing = false;
  await page.getByRole('button', { name: 'Sync now' }).click();
  await expectAllSynced(page);
  await expect(page.getByTestId('sync-progress')).toHaveCount(0);
  await expect(page.getByTestId('last-synced')).toHaveText('Last synced just now');
  expect(await page.evaluate(() => (window as unknown as { __contradictions: string[] }).__contradictions)).toEqual([]);
});

test('"Last synced" where the status is, aging with the clock', async ({ page }, info) => {
  await page.clock.install();
  await signIn(page, info);
  const last = page.getByTestId('last-synced');
  await expect(last).toHaveText('Last synced just now');
  await page.clock.fastForward('02:00');
  await expect(last).toHaveText('Last synced 2 min ago');
  // In the header, beside the pill: on a phone too.
  const header = await boxOf(page, 'header.topbar');
  const line = (await last.boundingBox())!;
  expect(line.y + line.height).toBeLessThanOrEqual(header.y + header.height);
  expect(line.x + line.width).toBeLessThanOrEqual(header.x + header.width);
});

test('the pill keeps its width and the header its layout while an upload runs', async ({ page, context, request }, info) => {
  const contact = unique('pill-width');
  await (await api(request, info)).createConversation(contact);
  await signIn(page, info);
  await page.getByLabel('Search').fill(contact);
  await openConversation(page, contact);
  await expectAllSynced(page);
  const before = { header: await boxOf(page, 'header.topbar'), pill: await boxOf(page, '[data-testid="sync-status"]'), signOut: await boxOf(page, 'header.topbar > button.link') };

  // The upload is held on its way to the server, until measured (pending, syncing; the bar along
  // the pill's foot while bytes move is measured in reconnect.spec.ts, on a slow link).
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await context.route(/\/v1\/(files|uploads)(\/[^?]*)?$/, async (route) => {
    if (route.request().method() === 'GET') return route.continue();
    await held;
    await route.continue().catch(() => {});
  });
  await page.getByLabel('Upload files').setInputFiles({ name: 'pill.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(256 * 1024, 3) });
  await expect(page.getByTestId('pending-count')).toHaveText(' · 1 pending');
  await expect(page.getByTestId('sync-status')).not.toHaveText(/All synced/);
  const during = { header: await boxOf(page, 'header.topbar'), pill: await boxOf(page, '[data-testid="sync-status"]'), signOut: await boxOf(page, 'header.topbar > button.link') };
  expect(during).toEqual(before);
  // No accessibility violations with the upload under way.
  expect(await accessibilityViolations(page)).toEqual([]);

  release();
  await context.unrouteAll({ behavior: 'ignoreErrors' });
  await expectAllSynced(page);
  expect({ header: await boxOf(page, 'header.topbar'), pill: await boxOf(page, '[data-testid="sync-status"]') }).toEqual({ header: before.header, pill: before.pill });
});

test('new conversation: large contact/group toggles and ids the device knows suggested', async ({ page, request }, info) => {
  const tag = unique('known');
  const known = `${tag}-amelia`;
  await (await api(request, info)).createConversation(known);
  await signIn(page, info);
  await page.getByRole('button', { name: /New/ }).click();
  const dialog = page.getByRole('dialog', { name: 'New conversation' });
  await expect(dialog.getByLabel('Contact id')).toBeVisible();
  for (const name of ['a contact', 'a group']) {
    const box = (await dialog.getByRole('radio', { name }).boundingBox())!;
    expect(box.height).toBeGreaterThanOrEqual(44);
    expect(box.width).toBeGreaterThanOrEqual(44);
  }
  await expect(dialog.getByRole('radio', { name: 'a contact' })).toBeChecked();
  const field = dialog.getByLabel('Contact id');
  await expect(field).toHaveAttribute('list', 'new-id-known');
  // Typed the start of it (any case): the known id is offered, only ids that start so.
  await field.fill(tag.toUpperCase());
  const offered = dialog.getByTestId('known-ids').locator('option');
  await expect(offered).toHaveCount(1);
  await expect(offered).toHaveAttribute('value', known);
  expect(await accessibilityViolations(page)).toEqual([]);

  // A group: the toggle switches the field and what it offers (no contact ids).
  // The toggle's whole face is the radio: tapped anywhere on it.
  await dialog.getByRole('radio', { name: 'a group' }).click();
  await expect(dialog.getByRole('radio', { name: 'a group' })).toBeChecked();
  await expect(dialog.getByLabel('Group id')).toHaveValue(tag.toUpperCase());
  await expect(offered).toHaveCount(0);
  await dialog.getByRole('radio', { name: 'a contact' }).click();
  await dialog.getByLabel('Contact id').fill(known);
  await expect(offered).toHaveCount(1);
});
