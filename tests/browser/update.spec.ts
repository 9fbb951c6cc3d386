// A new deploy: the new service worker installs and waits; the page offers "Reload to update"
// and reloads only when asked. The deploy happens to a copy of the built app served by its own
// process (the checkout's build is never touched): the copy's public/sw.js changes, as a deploy
// changes it.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { appEnv, copyBuiltApp, startApp, tempDir, type AppProcess } from './app-process';
import { userFor, waitForServiceWorker } from './helpers';

let scratch: ReturnType<typeof tempDir>;
let app: AppProcess;

test.beforeEach(() => {
  scratch = tempDir('parley-deploy-');
});

test.afterEach(async () => {
  await app?.stop();
  scratch.remove();
});

test('a new version waits for "Reload to update"', async ({ page }, info) => {
  const appDir = path.join(scratch.dir, 'app');
  copyBuiltApp(appDir);
  app = await startApp(['.next/parley/server.mjs'], appDir, appEnv(path.join(scratch.dir, 'data')));

  await page.goto(`${app.url}/`);
  await page.getByLabel('Access token').fill(userFor(info).token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  await waitForServiceWorker(page);
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.waiting)).toBeNull();

  // The deploy: any byte of the worker script changes, so the browser installs it anew.
  const swPath = path.join(appDir, 'public', 'sw.js');
  fs.writeFileSync(swPath, `${fs.readFileSync(swPath, 'utf8')}\n// next version\n`);
  expect(await (await fetch(`${app.url}/sw.js`)).text()).toContain('// next version');
  // A mark on this document: it survives exactly as long as the page is not reloaded.
  await page.evaluate(() => Object.assign(window, { beforeUpdate: true }));
  await page.evaluate(async () => {
    await (await navigator.serviceWorker.getRegistration())!.update();
  });
  const button = page.getByRole('button', { name: 'Reload to update' });
  await expect(button).toBeVisible({ timeout: 30_000 });
  // The new worker waits; the page was not reloaded under the user's feet.
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.waiting !== null)).toBe(true);
  expect(await page.evaluate(() => (window as { beforeUpdate?: boolean }).beforeUpdate)).toBe(true);

  const reloaded = page.waitForEvent('load');
  await button.click();
  await reloaded;
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  expect(await page.evaluate(() => (window as { beforeUpdate?: boolean }).beforeUpdate)).toBeUndefined();
  await expect(button).toHaveCount(0);
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.waiting)).toBeNull();
});
