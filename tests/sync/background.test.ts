// @vitest-environment node
// Background Sync's flush (what the service worker runs on a 'sync' event): it sends the outbox
// with the token the sync worker stored, waits for the replayer's lock (never two replays at
// once), asks to be retried while the network fails, and never recreates a deleted database.
// Against the real server.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseOfTag, flushOutbox, storeBackgroundAccess, syncTagFor, type LockManagerLike } from '../../lib/sync/session/background';
import { lockNameFor } from '../../lib/sync/mirror/db';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, TEST_TOKENS, type TestServer } from '../helpers/server';
import { FaultyNetwork, makeDevice, serverConversations } from './harness';

/** navigator.locks' exclusive mode, enough for one process: requests of one name run one at a time. */
class Locks implements LockManagerLike {
  private readonly tails = new Map<string, Promise<unknown>>();
  readonly taken: string[] = [];
  readonly requested: string[] = [];
  /** Called when a request of a name has been made (it may still wait its turn). */
  onRequest: ((name: string) => void) | null = null;
  request<T>(name: string, callback: () => Promise<T>): Promise<T> {
    this.requested.push(name);
    this.onRequest?.(name);
    const previous = this.tails.get(name) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(() => {
      this.taken.push(name);
      return callback();
    });
    this.tails.set(name, run.catch(() => {}));
    return run;
  }
}

describe('the service worker flush (Background Sync)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  async function queuedDevice(tag: string) {
    const indexedDB = new IDBFactory();
    const name = `bg-${tag}`;
    const device = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB, name });
    await storeBackgroundAccess(device.db, { baseUrl: server.baseUrl, token: TEST_TOKENS.alice });
    const id = await device.client.createConversation({ contact_id: `${tag}-queued` });
    await device.client.updateConversation(id, { is_pinned: true });
    // The app is closed: its worker never ran.
    device.db.close();
    return { indexedDB, name, dexie: { indexedDB, IDBKeyRange } };
  }

  it('names the database in the tag', () => {
    expect(databaseOfTag(syncTagFor('parley-sync-u-abc'))).toBe('parley-sync-u-abc');
    expect(databaseOfTag('something-else')).toBeNull();
  });

  it('sends what was queued while the app was closed, under the replayer lock', async () => {
    const { name, dexie } = await queuedDevice('bg-send');
    const locks = new Locks();
    const net = new FaultyNetwork();
    expect(await flushOutbox({ database: name, fetch: net.fetch, locks, dexie })).toBe('sent');
    expect(locks.taken).toEqual([lockNameFor(name)]);
    const arrived = (await serverConversations(server.baseUrl, TEST_TOKENS.alice)).find((c) => c.contact_id === 'bg-send-queued');
    expect(arrived?.is_pinned).toBe(true);
    // Pushed only: the service worker leaves the pull to the app.
    expect(net.seen.filter((r) => r.method === 'GET')).toEqual([]);
    expect(await flushOutbox({ database: name, fetch: net.fetch, locks, dexie })).toBe('nothing-queued');
  });

  it('waits while the sync worker holds the lock: never two replays at once', async () => {
    const { name, dexie } = await queuedDevice('bg-lock');
    const locks = new Locks();
    const net = new FaultyNetwork();
    let release!: () => void;
    const held = locks.request(lockNameFor(name), () => new Promise<void>((resolve) => (release = resolve)));
    const queuedBehind = new Promise<void>((resolve) => (locks.onRequest = () => resolve()));
    const flush = flushOutbox({ database: name, fetch: net.fetch, locks, dexie });
    // The flush asked for the lock the sync worker holds, and has sent nothing meanwhile.
    await queuedBehind;
    expect(locks.requested).toEqual([lockNameFor(name), lockNameFor(name)]);
    expect(net.seen).toEqual([]);
    release();
    await held;
    expect(await flush).toBe('sent');
    expect(net.seen.length).toBeGreaterThan(0);
  });

  it('asks to be retried while the server cannot be reached, and keeps the outbox', async () => {
    const { name, dexie, indexedDB } = await queuedDevice('bg-offline');
    const net = new FaultyNetwork();
    net.offline = true;
    expect(await flushOutbox({ database: name, fetch: net.fetch, locks: new Locks(), dexie })).toBe('retry');
    const device = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB, name });
    expect((await readSyncStatus(device.db)).pendingCount).toBe(2);
    device.db.close();
  });

  it('once the network is back, sends at once what waited only for the network (no backoff)', async () => {
    const { name, dexie } = await queuedDevice('bg-back');
    const net = new FaultyNetwork();
    net.offline = true;
    expect(await flushOutbox({ database: name, fetch: net.fetch, locks: new Locks(), dexie })).toBe('retry');
    // The browser fires the event again when connectivity returns, before any backoff ran out.
    net.offline = false;
    expect(await flushOutbox({ database: name, fetch: net.fetch, locks: new Locks(), dexie })).toBe('sent');
    expect((await serverConversations(server.baseUrl, TEST_TOKENS.alice)).map((c) => c.contact_id)).toContain('bg-back-queued');
  });

  it('does nothing without a stored token, and never recreates a deleted database', async () => {
    const indexedDB = new IDBFactory();
    const dexie = { indexedDB, IDBKeyRange };
    const net = new FaultyNetwork();
    expect(await flushOutbox({ database: 'bg-gone', fetch: net.fetch, dexie })).toBe('no-access');
    expect((await indexedDB.databases()).map((d) => d.name)).toEqual([]);

    const device = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB, name: 'bg-no-token' });
    await device.client.createConversation({ contact_id: 'bg-no-token' });
    device.db.close();
    expect(await flushOutbox({ database: 'bg-no-token', fetch: net.fetch, dexie })).toBe('no-access');
    expect(net.seen).toEqual([]);
  });

  it('a database deleted between its look and its open (a sign-out right then) is not left made again', async () => {
    const real = new IDBFactory();
    const device = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB: real, name: 'bg-signing-out' });
    await device.client.createConversation({ contact_id: 'bg-signing-out' });
    device.db.close();
    // The flush's second open of the name (after its existence probe) comes just after the
    // sign-out's deletion: IndexedDB runs the two requests in that order.
    let opens = 0;
    const racing = Object.create(real) as IDBFactory;
    racing.open = (name: string, version?: number) => {
      if (name === 'bg-signing-out' && ++opens === 2) real.deleteDatabase(name);
      return version === undefined ? real.open(name) : real.open(name, version);
    };
    racing.databases = () => real.databases();
    const net = new FaultyNetwork();
    expect(await flushOutbox({ database: 'bg-signing-out', fetch: net.fetch, dexie: { indexedDB: racing, IDBKeyRange } })).toBe('no-access');
    expect(opens).toBeGreaterThanOrEqual(2);
    expect((await real.databases()).map((d) => d.name)).toEqual([]);
    expect(net.seen).toEqual([]);
  });
});
