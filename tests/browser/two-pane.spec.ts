// Issue 32 item 11: on a wide screen the conversations list stays beside the open conversation (and
// a file opened from it), its rows denser; the open one's row is the current page; the focus
// follows a choice made in the list; the address, back and forward follow the panes; each pane
// is a named landmark. On a phone nothing of this: one screen at a time (one-pane.spec, the phone's project). And a row shows one
// honest time: never "14 min ago" beside "Last active —".
import { expect, test } from '@playwright/test';
import { accessibilityViolations, conversationRow } from './helpers';
import { list, openHeading, rowLink, rowsInView, search, seed, table } from './panes';

// Only so that axe can be injected (the app's CSP refuses inline scripts, as it should).
test.use({ bypassCSP: true });

test('desktop: the list beside the open conversation and its file; the current row marked, the focus following, back and forward', async ({ page, request }, info) => {
  const { prefix, a, b, alpha, bravo, quiet } = await seed(page, request, info);

  // Nothing open yet: the list, and a pane that says so. Denser rows: at least 12 whole rows at
  // 1280×800 (8 before, when the list took the whole width with its column header).
  await expect(list(page)).toBeVisible();
  await expect(page.getByRole('region', { name: 'No conversation open' })).toBeVisible();
  await expect.poll(() => rowsInView(page)).toBeGreaterThanOrEqual(12);
  expect(await accessibilityViolations(page)).toEqual([]);

  // One honest time per row: "created …" for one nothing was sent in, the last activity for one
  // with a file; no "Last active" column beside it.
  await expect(quiet.locator('.details')).toHaveText(/^Contact·\s*created\s*(just now|\d+ min ago)$/);
  await expect(conversationRow(page, a).locator('.details')).toHaveText(/^Contact·\s*(just now|\d+ min ago)$/);
  await expect(page.getByRole('columnheader')).toHaveCount(0);

  // Chosen with the mouse: the conversation opens beside the list, its row is the current page,
  // the focus is on its heading, the address names it.
  await rowLink(page, a).click();
  await expect(openHeading(page, a)).toBeVisible();
  await expect(page.getByRole('region', { name: a, exact: true })).toBeVisible();
  await expect(list(page)).toBeVisible();
  await expect(rowLink(page, a)).toHaveAttribute('aria-current', 'page');
  await expect(openHeading(page, a)).toBeFocused();
  expect(new URL(page.url()).search).toBe(`?c=${alpha.id}`);
  await expect(page.getByRole('link', { name: 'alpha-note.txt' })).toBeVisible();
  // Beside the list, no way "back to conversations": the list is there.
  await expect(page.getByRole('link', { name: 'Back to conversations' })).toHaveCount(0);
  expect(await accessibilityViolations(page)).toEqual([]);

  // By keyboard: another row, Enter; the right pane follows, the mark moves, the focus too.
  await rowLink(page, b).focus();
  await page.keyboard.press('Enter');
  await expect(openHeading(page, b)).toBeFocused();
  await expect(page.getByRole('link', { name: 'bravo-note.txt' })).toBeVisible();
  await expect(rowLink(page, b)).toHaveAttribute('aria-current', 'page');
  await expect(rowLink(page, a)).not.toHaveAttribute('aria-current', /./);
  await expect(table(page).locator('[aria-current]')).toHaveCount(1);
  expect(new URL(page.url()).search).toBe(`?c=${bravo.id}`);

  // Back and forward move the right pane; the list keeps its search all along.
  await page.goBack();
  await expect(openHeading(page, a)).toBeVisible();
  await expect(rowLink(page, a)).toHaveAttribute('aria-current', 'page');
  await page.goForward();
  await expect(openHeading(page, b)).toBeVisible();
  await expect(search(page)).toHaveValue(prefix);

  // A file opened from the conversation: the viewer in the right pane, the list beside it with
  // the file's conversation still marked; back returns to the conversation.
  await page.getByRole('link', { name: 'bravo-note.txt' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'bravo-note.txt' })).toBeVisible();
  const address = new URL(page.url()).searchParams;
  expect(address.get('in')).toBe(bravo.id);
  await expect(list(page)).toBeVisible();
  await expect(rowLink(page, b)).toHaveAttribute('aria-current', 'page');
  await expect(page.getByRole('region', { name: 'bravo-note.txt' })).toBeVisible();
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.goBack();
  await expect(openHeading(page, b)).toBeVisible();

  // Back to the start: nothing open, no row marked.
  await page.goBack();
  await page.goBack();
  await expect(page.getByRole('region', { name: 'No conversation open' })).toBeVisible();
  await expect(table(page).locator('[aria-current]')).toHaveCount(0);
  expect(new URL(page.url()).search).toBe('');

  // Narrower (a tablet): the list alone again, with its time columns, and then the row's summary
  // shows no time of its own (the columns say it). The list keeps its search across the resize.
  await page.setViewportSize({ width: 900, height: 800 });
  await expect(page.getByRole('region', { name: 'No conversation open' })).toHaveCount(0);
  await expect(search(page)).toHaveValue(prefix);
  await expect(page.getByRole('columnheader')).toHaveText([/Contact or group/, /Last active/, /Last opened/, /Created/, 'Actions']);
  await expect(quiet.locator('time')).toHaveCount(0);
  await expect(quiet.getByRole('cell').nth(1)).toHaveText('—');
  await rowLink(page, a).click();
  await expect(openHeading(page, a)).toBeVisible();
  await expect(table(page)).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'Back to conversations' })).toBeVisible();
});
