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
