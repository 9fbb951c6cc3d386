// Issue 32 item 11, a phone's side: one screen at a time (no list beside a conversation, nor beside
// a file opened from it), back and forward through the screens; a row shows one honest time. The
// wide screen's two panes are two-pane.spec (the desktop's project).
import { expect, test } from '@playwright/test';
import { accessibilityViolations } from './helpers';
import { openHeading, rowLink, seed, table } from './panes';

// Only so that axe can be injected (the app's CSP refuses inline scripts, as it should).
test.use({ bypassCSP: true });

test('phone: one screen at a time; a row shows one time', async ({ page, request }, info) => {
  const { a, alpha, quiet } = await seed(page, request, info);
  await expect(page.getByRole('region', { name: 'No conversation open' })).toHaveCount(0);
  await expect(quiet.locator('.details')).toHaveText(/^Contact·\s*created\s*(just now|\d+ min ago)$/);

  await rowLink(page, a).click();
  await expect(openHeading(page, a)).toBeVisible();
  await expect(table(page)).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'Back to conversations' })).toBeVisible();
  expect(new URL(page.url()).search).toBe(`?c=${alpha.id}`);

  // A file opened from it is a screen of its own too.
  await page.getByRole('link', { name: 'alpha-note.txt' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'alpha-note.txt' })).toBeVisible();
  await expect(openHeading(page, a)).toHaveCount(0);
  await expect(table(page)).toHaveCount(0);
  await page.goBack();
  await expect(openHeading(page, a)).toBeVisible();
  await page.goBack();
  await expect(table(page)).toBeVisible();
  await expect(openHeading(page, a)).toHaveCount(0);
  expect(await accessibilityViolations(page)).toEqual([]);
});
