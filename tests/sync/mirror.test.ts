// @vitest-environment node
// A mirror the browser cleared is noticed (a marker kept outside the database, in the device
// registry), pulled again from the server, and reported — with the queued changes that were lost
// with it, so the status never reads as all synced. Against the real server.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSyncDb } from '../../lib/sync/mirror/db';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { entryFor, register, type StorageLike } from '../../lib/view/device';
import { checkMirror, dismissMirrorCleared, recordMirror } from '../../lib/view/mirror';
import { startTestServer, TEST_TOKENS, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations } from './harness';

class MemoryStorage implements StorageLike {
  readonly map = new Map<string, string>();
  getItem(key: string) {
    return this.map.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.map.set(key, value);
  }
  removeItem(key: string) {
    this.map.delete(key);
  }
}

/** What MirrorNotice records from the status after every change. */
async function record(storage: StorageLike, name: string, device: ReturnType<typeof makeDevice>) {
  const status = await readSyncStatus(device.db);
  const pending = status.pendingCount + status.failed.length;
  recordMirror(storage, name, { filled: status.lastSyncAt !== null || pending > 0, pending });
}

function deleteDatabase(indexedDB: IDBFactory, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });
}

describe('a mirror cleared by the browser', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  it('a first start with an empty database is not a cleared one', async () => {
    const storage = new MemoryStorage();
    const indexedDB = new IDBFactory();
    register(storage, { name: 'fresh', origin: server.baseUrl, userId: 'alice' });
    expect(await checkMirror({ storage, dexie: { indexedDB, IDBKeyRange } }, 'fresh')).toBeNull();
    // Opened, started, nothing synced yet: still nothing to report when it is found empty.
    recordMirror(storage, 'fresh', { filled: false, pending: 0 });
    expect(await checkMirror({ storage, dexie: { indexedDB, IDBKeyRange } }, 'fresh')).toBeNull();
  });

  it('is noticed, pulled again, and the queued changes lost with it are reported until dismissed', async () => {
    const storage = new MemoryStorage();
    const indexedDB = new IDBFactory();
    const name = 'cleared';
    const dexie = { indexedDB, IDBKeyRange };
    register(storage, { name, origin: server.baseUrl, userId: 'alice' });

    const device = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB, name });
    await device.client.createConversation({ contact_id: 'mirror-kept' });
    await device.settle();
    await record(storage, name, device);
    // Offline: two changes queued, never sent.
    device.net.offline = true;
    await device.client.createConversation({ contact_id: 'mirror-lost-1' });
    await device.client.createConversation({ contact_id: 'mirror-lost-2' });
    await record(storage, name, device);
    expect(entryFor(storage, name)?.mirror).toEqual({ filled: true, pending: 2 });
    // Still there on the next start: nothing to report.
    device.db.close();
    expect(await checkMirror({ storage, dexie }, name)).toBeNull();

    // The browser clears the database while the app is closed.
    await deleteDatabase(indexedDB, name);
    const cleared = await checkMirror({ storage, dexie, now: () => 1234 }, name);
    expect(cleared).toEqual({ at: 1234, lostChanges: 2 });

    // The app starts as usual: the worker's first sync pulls everything again.
    const again = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB, name });
    await again.settle();
    const contacts = (await again.db.conversations.toArray()).map((c) => c.contact_id);
    expect(contacts).toContain('mirror-kept');
    expect(contacts).not.toContain('mirror-lost-1');
    expect((await serverConversations(server.baseUrl, TEST_TOKENS.alice)).map((c) => c.contact_id)).not.toContain('mirror-lost-1');
    // The status carries the loss (the status bar says "Changes lost", never "All synced").
    const status = await readSyncStatus(again.db);
    expect(status).toMatchObject({ pendingCount: 0, mirrorCleared: { lostChanges: 2 } });
    // The marker follows the new database; it is not reported twice.
    await record(storage, name, again);
    expect(await checkMirror({ storage, dexie }, name)).toBeNull();
    await dismissMirrorCleared(again.db);
    expect((await readSyncStatus(again.db)).mirrorCleared).toBeNull();
    again.db.close();
  });

  it("checks with the session's own database when given it, and leaves it open for the list", async () => {
    const storage = new MemoryStorage();
    const indexedDB = new IDBFactory();
    const name = 'cleared-shared';
    register(storage, { name, origin: server.baseUrl, userId: 'alice' });
    recordMirror(storage, name, { filled: true, pending: 1 });
    // The app's connection: the page reads the list through this very instance meanwhile.
    const db = openSyncDb(name, { indexedDB, IDBKeyRange });
    expect(await checkMirror({ storage, now: () => 99 }, name, db)).toEqual({ at: 99, lostChanges: 1 });
    expect(db.isOpen()).toBe(true);
    expect((await readSyncStatus(db)).mirrorCleared).toEqual({ at: 99, lostChanges: 1 });
    db.close();
  });
});
