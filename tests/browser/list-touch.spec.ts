// Touch gestures on the lists (issue 21), on a phone (390×844, touch): pull down from the top to
// sync. The desktop project leaves this file out (playwright.config.ts).
import { expect, test, type Page } from '@playwright/test';
import { api, signIn, unique } from './helpers';

const rows = (page: Page) => page.getByRole('table', { name: 'Conversations' }).locator('.vtable-body [role=row][data-index]');

async function search(page: Page, text: string) {
  await page.getByLabel('Search').fill(text);
}

test('phone: pull down from the top of the list to sync', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  // No live stream: without a sync asked for, a change on the server shows only at the next
  // periodic sync (a minute away).
  await context.route(/\/v1\/events\/stream/, (route) => route.abort('connectionrefused'));
  await signIn(page, info);
  const stamp = unique('pulled');
  await server.createConversation(stamp);
  await search(page, stamp);
  await expect(page.getByText(/No conversation matches/)).toBeVisible();

  const box = (await page.locator('.vtable-body').boundingBox())!;
  const cdp = await context.newCDPSession(page);
  const x = box.x + box.width / 2;
  const y = box.y + 20;
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  for (let dy = 20; dy <= 200; dy += 20) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x, y: y + dy }] });
  await expect(page.getByTestId('pull-indicator')).toHaveText(/Release to sync/);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await expect(rows(page).locator('.name')).toHaveText([stamp]);
  await expect(page.getByTestId('pull-indicator')).toHaveCount(0);

  // A short pull does nothing.
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x, y: y + 40 }] });
  await expect(page.getByTestId('pull-indicator')).toHaveText(/Pull to sync/);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await expect(page.getByTestId('pull-indicator')).toHaveCount(0);
});
