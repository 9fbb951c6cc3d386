// @vitest-environment node
// No data crosses accounts on a device: the local database belongs to a user (not a token), a
// "sign in again" with another user's token is refused and nothing is replayed into that account,
// a new token of the same user keeps the outbox and the stored upload bytes, and sign-out removes
// every database of the user. Against the real server, with /v1/me and without (the probe).
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { Dexie } from 'dexie';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { legacyDatabaseName, openSyncDb, userDatabaseName } from '../../lib/sync/mirror/db';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { readRegistry, register, type StorageLike } from '../../lib/view/device';
import {
  describeRemoval,
  finishRemovals,
  learnOwner,
  loadToken,
  resumeSession,
  storedSessionDatabase,
  signIn,
  signInAgain,
  signOut,
  type DeviceDeps,
  type LocalSession,
} from '../../lib/view/session';
import { startTestServer, TEST_TOKENS, type TestServer } from '../helpers/server';
import { FaultyNetwork, makeDevice, serverConversations, serverFiles, type Device } from './harness';

const ALICE_2 = 'alice-second-token-0123456789';
const TOKENS = `alice:${TEST_TOKENS.alice},alice:${ALICE_2},bob:${TEST_TOKENS.bob}`;
const bytes = (text: string) => new TextEncoder().encode(text);

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

/** One phone: its localStorage, its IndexedDB, and the network its session logic talks through. */
function phone(server: TestServer) {
  const indexedDB = new IDBFactory();
  const net = new FaultyNetwork();
  const deps: DeviceDeps = { storage: new MemoryStorage(), fetch: net.fetch, baseUrl: server.baseUrl, dexie: { indexedDB, IDBKeyRange } };
  return {
    deps,
    net,
    indexedDB,
    /** The sync engine on the session's database, as the app's worker would run it. */
    open(session: LocalSession): Device {
      return makeDevice(server.baseUrl, session.token, { indexedDB, name: session.database });
    },
    async databases(): Promise<string[]> {
      return (await indexedDB.databases()).map((d) => d.name!).sort();
    },
    /** What ParleyApp does on "sign in again": only an accepted token reaches the worker. */
    async signInAgain(session: LocalSession, device: Device, token: string) {
      const result = await signInAgain(deps, session, device.db, token);
      if (result.ok) {
        device.setToken(result.session.token);
        await device.engine.signedIn();
      }
      await device.engine.syncOnce();
      return result;
    },
  };
}

/** Signs in, mirrors one conversation from the server, then loses the token and queues work. */
async function signedInWithQueuedWork(server: TestServer, p: ReturnType<typeof phone>, tag: string) {
  const signedIn = await signIn(p.deps, TEST_TOKENS.alice);
  if (!signedIn.ok) throw new Error(`sign-in failed: ${signedIn.reason}`);
  const session = signedIn.session;
  const device = p.open(session);
  const known = await device.client.createConversation({ contact_id: `${tag}-known` });
  await device.settle();
  const knownId = await device.client.resolveId(known);
  // The server stops accepting the token (revoked, expired): 401, sync pauses.
  device.setToken('revoked-token');
  const queued = await device.client.createConversation({ contact_id: `${tag}-queued` });
  await device.client.uploadFile({ conversationId: queued }, { name: `${tag}.txt`, bytes: bytes(`${tag} bytes`) });
  await device.client.updateConversation(knownId, { is_pinned: true });
  expect((await device.engine.syncOnce()).push.kind).toBe('unauthenticated');
  expect(await readSyncStatus(device.db)).toMatchObject({ needsSignIn: true, pendingCount: 3 });
  return { session, device, knownId };
}

/** Requests that could change anything, sent with `token`. */
function writesWith(net: FaultyNetwork, token: string) {
  return net.seen.filter((r) => r.method !== 'GET' && r.headers.Authorization === `Bearer ${token}`);
}

async function expectUntouched(server: TestServer, token: string, tag: string) {
  const contacts = (await serverConversations(server.baseUrl, token)).map((c) => c.contact_id);
  expect(contacts.filter((c) => c?.startsWith(tag))).toEqual([]);
  expect((await serverFiles(server.baseUrl, token)).filter((f) => f.filename.startsWith(tag))).toEqual([]);
}

async function expectArrived(server: TestServer, tag: string, knownId: string) {
  const conversations = await serverConversations(server.baseUrl, TEST_TOKENS.alice);
  const queued = conversations.find((c) => c.contact_id === `${tag}-queued`);
  expect(queued).toBeDefined();
  expect(conversations.find((c) => c.id === knownId)?.is_pinned).toBe(true);
  const files = await serverFiles(server.baseUrl, TEST_TOKENS.alice, queued!.id);
  expect(files.map((f) => [f.filename, f.file_size])).toEqual([[`${tag}.txt`, `${tag} bytes`.length]]);
}

describe('a server with GET /v1/me', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PARLEY_TOKENS: TOKENS } });
  });
  afterAll(() => server.stop());

  it('names the database after the user, not the token', async () => {
    const p = phone(server);
    const first = await signIn(p.deps, TEST_TOKENS.alice);
    expect(first).toMatchObject({ ok: true, session: { database: userDatabaseName(server.baseUrl, 'alice') } });
    expect(readRegistry(p.deps.storage)).toEqual([{ name: userDatabaseName(server.baseUrl, 'alice'), origin: server.baseUrl, userId: 'alice' }]);
    expect(p.net.seen.map((r) => r.path)).toEqual(['/v1/me']);
    // The same user with another token: the same database. Another user: another one.
    expect(await signIn(p.deps, ALICE_2)).toMatchObject({ ok: true, session: { database: userDatabaseName(server.baseUrl, 'alice') } });
    expect(await signIn(p.deps, TEST_TOKENS.bob)).toMatchObject({ ok: true, session: { database: userDatabaseName(server.baseUrl, 'bob') } });
    expect(await signIn(p.deps, 'nobody-token')).toEqual({ ok: false, reason: 'rejected' });
  });

  it("another user's token is refused: the outbox is kept and never reaches that account", async () => {
    const p = phone(server);
    const { session, device, knownId } = await signedInWithQueuedWork(server, p, 'me-cross');
    const refused = await p.signInAgain(session, device, TEST_TOKENS.bob);
    expect(refused).toEqual({ ok: false, reason: 'other-user', by: 'me', unsynced: 3 });
    expect(loadToken(p.deps.storage)).toBe(TEST_TOKENS.alice); // the session is unchanged
    expect(await readSyncStatus(device.db)).toMatchObject({ needsSignIn: true, pendingCount: 3 });
    expect(await device.db.uploadChunks.count()).toBe(1);
    expect(writesWith(p.net, TEST_TOKENS.bob)).toEqual([]);
    expect(device.net.seen.filter((r) => r.headers.Authorization === `Bearer ${TEST_TOKENS.bob}`)).toEqual([]);
    await expectUntouched(server, TEST_TOKENS.bob, 'me-cross');

    // The same user's new token: accepted, and the kept changes (upload bytes included) go to alice.
    const accepted = await p.signInAgain(session, device, ALICE_2);
    expect(accepted).toEqual({ ok: true, session: { token: ALICE_2, database: session.database } });
    await device.settle();
    await expectArrived(server, 'me-cross', knownId);
    await expectUntouched(server, TEST_TOKENS.bob, 'me-cross');
    device.close();
  });

  it('a new token of the same user reuses the database, its outbox and upload bytes, across a restart', async () => {
    const p = phone(server);
    const { session, device, knownId } = await signedInWithQueuedWork(server, p, 'me-reuse');
    device.engine.stop();
    device.close();
    // The next start, after the token was replaced by hand (e.g. pasted into a fresh sign-in).
    p.deps.storage.removeItem('parley:token');
    expect(storedSessionDatabase(p.deps.storage)).toBeNull();
    expect(resumeSession(p.deps)).toBeNull();
    const again = await signIn(p.deps, ALICE_2);
    expect(again).toEqual({ ok: true, session: { token: ALICE_2, database: session.database } });
    // What the page opens early for the list's first rows (first-rows.ts): the session's database.
    expect(storedSessionDatabase(p.deps.storage)).toBe(session.database);
    expect(resumeSession(p.deps)).toEqual({ token: ALICE_2, database: session.database });
    const reopened = p.open({ token: ALICE_2, database: session.database });
    expect(await reopened.db.outbox.count()).toBe(3);
    expect(await reopened.db.uploadChunks.count()).toBe(1);
    await reopened.engine.signedIn(); // the app hands every session's token to its worker
    await reopened.settle();
    await expectArrived(server, 'me-reuse', knownId);
    reopened.close();
  });

  it('adopts a database named after the token by an earlier version, and learns its owner', async () => {
    const p = phone(server);
    const legacy = legacyDatabaseName(TEST_TOKENS.alice);
    const old = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB: p.indexedDB, name: legacy });
    await old.client.createConversation({ contact_id: 'legacy-queued' });
    old.close();
    p.deps.storage.setItem('parley:token', TEST_TOKENS.alice); // all an earlier version kept

    // Not opened early: only resumeSession adopts it (and records it, which the early look must not).
    expect(storedSessionDatabase(p.deps.storage)).toBeNull();
    expect(readRegistry(p.deps.storage)).toEqual([]);
    const session = resumeSession(p.deps);
    expect(session).toEqual({ token: TEST_TOKENS.alice, database: legacy });
    expect(readRegistry(p.deps.storage)).toEqual([{ name: legacy, origin: server.baseUrl, userId: null, legacy: true }]);
    await learnOwner(p.deps, session!);
    expect(readRegistry(p.deps.storage)[0]).toMatchObject({ name: legacy, userId: 'alice' });
    // A new token of alice finds it too, and its queued change goes to alice.
    p.deps.storage.removeItem('parley:token');
    const again = await signIn(p.deps, ALICE_2);
    expect(again).toEqual({ ok: true, session: { token: ALICE_2, database: legacy } });
    const device = p.open({ token: ALICE_2, database: legacy });
    await device.engine.signedIn();
    await device.settle();
    expect((await serverConversations(server.baseUrl, TEST_TOKENS.alice)).some((c) => c.contact_id === 'legacy-queued')).toBe(true);
    device.close();
  });

  it("sign-out removes every database of the user (not another user's), the files' cache records, and says what", async () => {
    const p = phone(server);
    // bob was here before (his database stays), then alice: an adopted legacy database and her own.
    const bob = await signIn(p.deps, TEST_TOKENS.bob);
    const bobDevice = p.open((bob as { session: LocalSession }).session);
    await bobDevice.client.createConversation({ contact_id: 'bob-stays' });
    bobDevice.close();
    const { session, device } = await signedInWithQueuedWork(server, p, 'signout');
    device.close();
    // A second database of alice's: one an earlier version made, adopted and its owner learned.
    const legacy = legacyDatabaseName('an-older-token-of-alice');
    const old = makeDevice(server.baseUrl, TEST_TOKENS.alice, { indexedDB: p.indexedDB, name: legacy });
    await old.client.createConversation({ contact_id: 'legacy-unsynced' });
    old.close();
    register(p.deps.storage, { name: legacy, origin: server.baseUrl, userId: 'alice', legacy: true });
    // Workbox's bookkeeping of the opened-files cache lists the files' URLs.
    const expiration = new Dexie('workbox-expiration', { indexedDB: p.indexedDB, IDBKeyRange });
    expiration.version(1).stores({ 'cache-entries': 'id, cacheName, timestamp' });
    await expiration.table('cache-entries').bulkAdd([
      { id: 'parley-files|/files/a.pdf', cacheName: 'parley-files', url: '/files/a.pdf', timestamp: 1 },
      { id: 'other|/x', cacheName: 'other', url: '/x', timestamp: 1 },
    ]);
    expiration.close();
    expect(await p.databases()).toEqual([legacy, userDatabaseName(server.baseUrl, 'alice'), userDatabaseName(server.baseUrl, 'bob'), 'workbox-expiration'].sort());

    // What alice's two databases hold (the mirror holds all her conversations on this server).
    let conversations = 0;
    let files = 0;
    for (const name of [session.database, legacy]) {
      const db = openSyncDb(name, p.deps.dexie);
      conversations += await db.conversations.count();
      files += await db.files.count();
      db.close();
    }
    expect(conversations).toBeGreaterThanOrEqual(3); // known + queued + the legacy one

    const report = await signOut(p.deps, session);
    expect(report).toEqual({
      databases: 2,
      conversations,
      files,
      unsyncedChanges: 4,
      uploadBytes: 'signout bytes'.length,
      openedDocuments: 0, // no CacheStorage in node; the browser test covers the cache
    });
    expect(describeRemoval({ ...report, conversations: 3, files: 1 })).toBe(
      'Removed from this device: 3 conversations, 1 file, 0 opened documents, 4 unsynced changes (with 13 B of files waiting to upload).',
    );
    expect(await p.databases()).toEqual([userDatabaseName(server.baseUrl, 'bob'), 'workbox-expiration'].sort());
    expect(readRegistry(p.deps.storage).map((e) => e.userId)).toEqual(['bob']);
    expect(resumeSession(p.deps)).toBeNull();
    expect(p.deps.storage.getItem('parley:database')).toBeNull();
    const left = new Dexie('workbox-expiration', { indexedDB: p.indexedDB, IDBKeyRange });
    await left.open();
    expect((await left.table('cache-entries').toArray()).map((e) => e.cacheName)).toEqual(['other']);
    left.close();
  });

  it('a sign-out interrupted half-way stays signed out and is finished at the next start', async () => {
    const p = phone(server);
    const { session, device } = await signedInWithQueuedWork(server, p, 'interrupted');
    device.close();
    // What signOut writes before it deletes anything.
    const [entry] = readRegistry(p.deps.storage);
    p.deps.storage.setItem('parley:databases', JSON.stringify([{ ...entry, removing: true }]));
    // Not opened early (it is being removed), and the look changes nothing: the token is still there.
    expect(storedSessionDatabase(p.deps.storage)).toBeNull();
    expect(loadToken(p.deps.storage)).not.toBeNull();
    expect(resumeSession(p.deps)).toBeNull();
    expect(loadToken(p.deps.storage)).toBeNull();
    expect(await p.databases()).toEqual([session.database]);
    await finishRemovals(p.deps);
    expect(await p.databases()).toEqual([]);
    expect(readRegistry(p.deps.storage)).toEqual([]);
  });
});

describe('a server with only the brief (PARLEY_EXTENSIONS=none): the probe', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PARLEY_TOKENS: TOKENS, PARLEY_EXTENSIONS: 'none' } });
  });
  afterAll(() => server.stop());

  it("another user's token is refused (a mirrored conversation is 404 to it); the same user's is accepted", async () => {
    const p = phone(server);
    const { session, device, knownId } = await signedInWithQueuedWork(server, p, 'probe-cross');
    expect(readRegistry(p.deps.storage)).toEqual([{ name: session.database, origin: server.baseUrl, userId: null }]);
    expect(session.database).toMatch(/^parley-sync-d-[0-9a-f]{18}$/);

    const sent = p.net.seen.length;
    const refused = await p.signInAgain(session, device, TEST_TOKENS.bob);
    expect(refused).toEqual({ ok: false, reason: 'other-user', by: 'probe', unsynced: 3 });
    expect(p.net.seen.slice(sent).map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/me',
      'GET /v1/conversations?limit=1',
      `GET /v1/conversations/${knownId}`,
    ]);
    expect(writesWith(p.net, TEST_TOKENS.bob)).toEqual([]);
    expect(await readSyncStatus(device.db)).toMatchObject({ needsSignIn: true, pendingCount: 3 });
    await expectUntouched(server, TEST_TOKENS.bob, 'probe-cross');

    const accepted = await p.signInAgain(session, device, ALICE_2);
    expect(accepted).toEqual({ ok: true, session: { token: ALICE_2, database: session.database } });
    await device.settle();
    await expectArrived(server, 'probe-cross', knownId);
    await expectUntouched(server, TEST_TOKENS.bob, 'probe-cross');
    device.close();
  });

  it('a fresh sign-in of the same user finds the database by probing; another user gets a new one', async () => {
    const p = phone(server);
    const { session, device } = await signedInWithQueuedWork(server, p, 'probe-find');
    device.close();
    p.deps.storage.removeItem('parley:token');
    expect(await signIn(p.deps, TEST_TOKENS.bob)).toMatchObject({ ok: true, session: { token: TEST_TOKENS.bob } });
    const bobDatabase = resumeSession(p.deps)!.database;
    expect(bobDatabase).not.toBe(session.database);
    expect(await signIn(p.deps, ALICE_2)).toEqual({ ok: true, session: { token: ALICE_2, database: session.database } });
    const reopened = p.open({ token: ALICE_2, database: session.database });
    expect(await reopened.db.outbox.count()).toBe(3);
    expect(await reopened.db.uploadChunks.count()).toBe(1);
    reopened.close();
  });

  it('unprovable (nothing mirrored to probe with) and changes waiting: refused, and says why', async () => {
    const p = phone(server);
    const signedIn = await signIn(p.deps, TEST_TOKENS.alice);
    const session = (signedIn as { session: LocalSession }).session;
    const device = p.open(session);
    device.setToken('revoked-token');
    await device.client.createConversation({ contact_id: 'unproven-queued' }); // only a local_ id
    await device.engine.syncOnce();

    for (const token of [TEST_TOKENS.bob, ALICE_2]) {
      expect(await p.signInAgain(session, device, token)).toEqual({ ok: false, reason: 'unproven', unsynced: 1 });
    }
    expect(writesWith(p.net, TEST_TOKENS.bob)).toEqual([]);
    expect(writesWith(device.net, TEST_TOKENS.bob)).toEqual([]);
    await expectUntouched(server, TEST_TOKENS.bob, 'unproven');
    expect(await device.db.outbox.count()).toBe(1);

    // Nothing waiting (and nothing mirrored): nothing can cross, so a new token is taken.
    await device.client.discardOperation((await device.db.outbox.toArray())[0]!.id);
    expect(await p.signInAgain(session, device, ALICE_2)).toMatchObject({ ok: true });
    device.close();
  });
});
