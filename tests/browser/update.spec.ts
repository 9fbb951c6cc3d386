// A new deploy: the new service worker installs and waits; the page offers "Reload to update"
// and only reloads when asked.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { signIn, waitForServiceWorker } from './helpers';

test('a new version waits for "Reload to update"', async ({ page }, info) => {
  await signIn(page, info);
  await waitForServiceWorker(page);
  const swPath = path.join('public', 'sw.js');
  const original = fs.readFileSync(swPath, 'utf8');
  try {
    // What a deploy does to the worker script: any byte changes, the browser installs it anew.
    fs.writeFileSync(swPath, `${original}\n// next version ${Date.now()}\n`);
    await page.evaluate(async () => {
      await (await navigator.serviceWorker.getRegistration())!.update();
    });
    const button = page.getByRole('button', { name: 'Reload to update' });
    await expect(button).toBeVisible({ timeout: 30_000 });
    expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.waiting !== null)).toBe(true);
    const reloaded = page.waitForEvent('load');
    await button.click();
    await reloaded;
    await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
    await expect(button).toHaveCount(0);
    expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.waiting)).toBeNull();
  } finally {
    fs.writeFileSync(swPath, original);
  }
});
