// Opening a conversation is the app's bookkeeping, not the user's change (issue 32 item 5): viewed
// offline, it adds nothing pending and marks no row "unsynced"; the report reaches the server
// quietly once the network is back.
import { expect, test, type Page } from '@playwright/test';
import { api, conversationRow, expectAllSynced, openConversation, signIn, unique } from './helpers';

test('opening a conversation offline adds nothing pending', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('opened');
  const conversation = await server.createConversation(contact);
  expect(conversation.last_opened_at).toBeNull();

  await signIn(page, info);
  await context.setOffline(true);
  await expect(page.getByTestId('sync-status')).toContainText('Offline');
  await openConversation(page, contact);
  const heading = page.getByRole('heading', { level: 1, name: new RegExp(contact) });
  await expect(heading).toBeVisible();
  // The report is queued (it goes once the network is back), but it is nobody's unsent change.
  await expect.poll(() => queuedOperations(page)).toBe(1);
  await expect(page.getByTestId('sync-status')).toHaveText('Offline');
  await expect(page.getByTestId('pending-count')).toHaveCount(0);
  await expect(page.locator('.mark.pending, .mark.reporting')).toHaveCount(0);
  await expect(page.getByText('unsynced')).toHaveCount(0);

  // Back on the list: the row has no mark either.
  await page.goBack();
  await expect(conversationRow(page, contact)).toBeVisible();
  await expect(conversationRow(page, contact).getByText('unsynced')).toHaveCount(0);
  await expect(page.getByTestId('pending-count')).toHaveCount(0);

  // Online again: it reaches the server, and the status was never anything but synced.
  await context.setOffline(false);
  await expectAllSynced(page);
  await expect.poll(async () => (await server.get(`/v1/conversations/${conversation.id}`)).body.last_opened_at, { timeout: 30_000 }).not.toBeNull();
});

/** Operations in the outbox of the user's database (read directly: the app shows none of them). */
function queuedOperations(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const names = (await indexedDB.databases()).map((d) => d.name ?? '').filter((n) => /^parley-sync-(u|d)-/.test(n));
    let count = 0;
    for (const name of names) {
      count += await new Promise<number>((resolve, reject) => {
        const open = indexedDB.open(name);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          if (!db.objectStoreNames.contains('outbox')) {
            db.close();
            resolve(0);
            return;
          }
          const request = db.transaction('outbox').objectStore('outbox').count();
          request.onsuccess = () => {
            db.close();
            resolve(request.result);
          };
          request.onerror = () => reject(request.error);
        };
      });
    }
    return count;
  });
}
