// The first screen shows what the device holds without waiting for the sync worker (issue 30): the
// rows come from the page's own read of the mirror, while the worker's code is still loading. Here
// it never arrives at all: every Worker the page makes is an endpoint that never answers.
import { expect, test } from '@playwright/test';
import { api, conversationRow, expectAllSynced, signIn, unique, unlockIfLocked } from './helpers';

test('the list shows the mirrored rows before the sync worker has started', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('before-worker');
  await server.createConversation(contact);
  await signIn(page, info);
  await page.getByLabel('Search').fill(contact);
  await expect(conversationRow(page, contact)).toBeVisible();
  await expectAllSynced(page);

  await page.addInitScript(() => {
    // Comlink's endpoint, silent: the worker is "still loading" for as long as the test runs.
    const silent = class {
      postMessage() {}
      addEventListener() {}
      removeEventListener() {}
      terminate() {}
    };
    Object.assign(window, { Worker: silent });
  });
  await page.reload();
  await unlockIfLocked(page);
  await page.getByLabel('Search').fill(contact);
  await expect(conversationRow(page, contact)).toBeVisible();
  // The frame shown while the connection opens (BootShell) is gone: the list is the real one.
  await expect(page.locator('.shell[aria-busy="true"]')).toHaveCount(0);
});

test('the first rows painted are the ones on screen; those just below come after', async ({ page, request }, info) => {
  const server = await api(request, info);
  // More conversations than a screen holds (other specs' are there too).
  for (let i = 0; i < 25; i++) await server.createConversation(unique(`screenful-${i}`));
  await signIn(page, info);
  await expectAllSynced(page);
  await page.addInitScript(() => {
    // The rows in the document when the first one appears (the list's first commit of rows).
    new MutationObserver((_, observer) => {
      const rows = document.querySelectorAll('[role=row][aria-rowindex]:not([aria-busy])');
      if (rows.length === 0) return;
      const body = document.querySelector('.vtable-body')!.getBoundingClientRect();
      const onScreen = [...rows].filter((r) => r.getBoundingClientRect().top < body.bottom).length;
      Object.assign(window, { firstRows: { all: rows.length, onScreen } });
      observer.disconnect();
    }).observe(document, { childList: true, subtree: true });
  });
  await page.reload();
  await unlockIfLocked(page);
  const first = await page.waitForFunction(() => (window as any).firstRows).then((h) => h.jsonValue() as Promise<{ all: number; onScreen: number }>);
  expect(first.onScreen).toBeGreaterThan(0);
  expect(first.all, 'rows below the screen in the first commit of rows').toBe(first.onScreen);
  // Then the overscan: rows beyond the screen, so a scroll finds them drawn.
  await expect.poll(() => page.locator('[role=row][aria-rowindex]:not([aria-busy])').count()).toBeGreaterThan(first.onScreen);
});
