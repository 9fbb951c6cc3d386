// Before any of its scripts has run, the page shows the frame of the screen it opens into (issue 30:
// its largest element was painted only after every script; now it comes with the HTML). Here the
// scripts never arrive: every /_next/ script is refused, so all that runs is the page's inline
// script, under the server's real Content-Security-Policy (which must allow it by hash).
import { expect, test, type Page } from '@playwright/test';

async function withoutScripts(page: Page, storage: Record<string, string>, path = '/') {
  await page.route(/\/_next\/.*\.js(\?|$)/, (route) => route.abort());
  await page.addInitScript((entries) => {
    for (const [key, value] of Object.entries(entries)) localStorage.setItem(key, value);
  }, storage);
  await page.goto(path);
}

const banner = (page: Page) => page.getByRole('banner');

test('signed in, on the list: the shell and the list heading', async ({ page }) => {
  await withoutScripts(page, { 'parley:token': 'any-token' });
  await expect(page.locator('html')).toHaveAttribute('data-boot', 'list');
  await expect(page.getByRole('heading', { name: 'Conversations', level: 1 })).toBeVisible();
  await expect(banner(page).getByRole('link', { name: 'Files' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Parley' })).toHaveCount(0);
});

test('signed in, another route: the shell without the list heading', async ({ page }) => {
  await withoutScripts(page, { 'parley:token': 'any-token' }, '/?view=files');
  await expect(page.locator('html')).toHaveAttribute('data-boot', 'app');
  await expect(banner(page).getByRole('link', { name: 'Conversations' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Conversations' })).toHaveCount(0);
});

test('signed out: the sign-in page’s head', async ({ page }) => {
  await withoutScripts(page, {});
  await expect(page.locator('html')).toHaveAttribute('data-boot', 'signin');
  await expect(page.getByRole('heading', { name: 'Parley', level: 1 })).toBeVisible();
  await expect(page.getByText('Conversations and files, on your phone')).toBeVisible();
  await expect(page.getByRole('banner')).toHaveCount(0);
});

test('a device with a lock: nothing of the app before the lock screen', async ({ page }) => {
  await withoutScripts(page, { 'parley:token': 'any-token', 'parley:lock': '{}' });
  await expect(page.locator('html')).toHaveAttribute('data-boot', 'plain');
  await expect(page.getByText('Loading…').filter({ visible: true })).toHaveCount(1);
  await expect(page.getByRole('heading')).toHaveCount(0);
  await expect(page.getByRole('banner')).toHaveCount(0);
});
