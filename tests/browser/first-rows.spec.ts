// The first screen shows what the device holds without waiting for the sync worker (issue 30): the
// rows come from the page's own read of the mirror, while the worker's code is still loading. Here
// it never arrives at all: every Worker the page makes is an endpoint that never answers.
import { expect, test, type Page } from '@playwright/test';
import { ORDER_INDEX } from '../../lib/sync/mirror/list-keys';
import { api, conversationRow, expectAllSynced, signIn, unique, unlockIfLocked } from './helpers';

/** Every Worker the page makes from now on is an endpoint that never answers: no sync writes. */
async function silenceWorkers(page: Page) {
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
}

test('the list shows the mirrored rows before the sync worker has started', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('before-worker');
  await server.createConversation(contact);
  await signIn(page, info);
  await page.getByLabel('Search').fill(contact);
  await expect(conversationRow(page, contact)).toBeVisible();
  await expectAllSynced(page);

  await silenceWorkers(page);
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

// The list's first rows are read from the moment the page knows whose database to open, while
// React renders the shell (app/_components/first-rows.ts); the list starts from them.
test('the first rows are read once, on the connection the page keeps', async ({ page, request }, info) => {
  const contact = unique('one-open');
  await (await api(request, info)).createConversation(contact);
  await signIn(page, info);
  await expectAllSynced(page);
  const database = await page.evaluate(() => localStorage.getItem('parley:database'));
  await page.addInitScript(() => {
    // Every open of an IndexedDB database by the page (the sync worker opens its own, elsewhere).
    const opens: string[] = [];
    const open = IDBFactory.prototype.open;
    IDBFactory.prototype.open = function (this: IDBFactory, name: string, version?: number) {
      opens.push(name);
      return open.call(this, name, version);
    };
    Object.assign(window, { opens });
  });
  await page.reload();
  await unlockIfLocked(page);
  await expectAllSynced(page);
  await page.getByLabel('Search').fill(contact);
  await expect(conversationRow(page, contact)).toBeVisible();
  expect(await page.evaluate((db) => (window as unknown as { opens: string[] }).opens.filter((name) => name === db).length, database)).toBe(1);
});

test('a change committed just after the first rows were read early still reaches the list', async ({ page, request }, info) => {
  const server = await api(request, info);
  await server.createConversation(unique('early'));
  await signIn(page, info);
  await expectAllSynced(page);
  const renamed = unique('changed-after-the-first-read');
  // No sync worker: nothing but the change below writes to the database while the list loads, so
  // only the list's own read after its early rows can show it (Dexie reports no raw write).
  await silenceWorkers(page);
  await page.addInitScript(
    ({ renamed, orderIndex }) => {
      const database = localStorage.getItem('parley:database');
      const transaction = IDBDatabase.prototype.transaction;
      let changed = false;
      IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
        const tx = transaction.apply(this, args);
        const stores = [args[0]].flat();
        // Only the conversations: Dexie's open reads every store's indexes first, in a transaction of its own.
        if (!changed && this.name === database && tx.mode === 'readonly' && stores.length === 1 && stores[0] === 'conversations') {
          changed = true;
          // The first read of the list's rows: once it is over, the first of them is renamed.
          tx.addEventListener('complete', () => {
            const write = transaction.call(this, ['conversations'], 'readwrite');
            const store = write.objectStore('conversations');
            store.index(orderIndex).openCursor().onsuccess = (event) => {
              const cursor = (event.target as IDBRequest<IDBCursorWithValue | null>).result;
              if (cursor) cursor.update({ ...cursor.value, contact_id: renamed, group_id: null });
            };
          });
        }
        return tx;
      };
    },
    { renamed, orderIndex: ORDER_INDEX },
  );
  await page.reload();
  await unlockIfLocked(page);
  await expect(conversationRow(page, renamed)).toBeVisible();
});
