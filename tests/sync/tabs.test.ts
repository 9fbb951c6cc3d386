// @vitest-environment node
// Two tabs on one database: each has its own engine, the lock keeps them from replaying at the
// same time, and together they send every change exactly once and see one consistent mirror.
// Also: the schema upgrade path.
import { Dexie } from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BY_ARCHIVED_INDEX, ORDER_INDEX, WORDS_INDEX } from '../../lib/sync/mirror/list-keys';
import { DEFAULT_FILTERS } from '../../lib/view/conversations';
import { readConversationWindow } from '../../lib/view/windows';
import { openSyncDb } from '../../lib/sync/mirror/db';
import { startTestServer, type TestServer } from '../helpers/server';
import { byId, makeDevice, mirrorState, serverConversations, serverFilesWithConversation, sharedLock } from './harness';


describe('two tabs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PARLEY_DISABLE_IDEMPOTENCY: '1' } });
  });
  afterAll(async () => server.stop());

  it('sync concurrently from both tabs: every change reaches the server exactly once', async () => {
    const indexedDB = new IDBFactory();
    const options = { indexedDB, name: 'two-tabs', engine: { withLock: sharedLock() } };
    const tabA = makeDevice(server.baseUrl, server.tokens.alice, options);
    const tabB = makeDevice(server.baseUrl, server.tokens.alice, options);

    const conv = await tabA.client.createConversation({ contact_id: 'tabs' });
    // Tab B sees tab A's conversation (same database) and works in it.
    expect(await tabB.db.conversations.get(conv)).toBeDefined();
    const files = [];
    for (let i = 0; i < 4; i++) {
      const tab = i % 2 ? tabA : tabB;
      files.push(await tab.client.uploadFile({ conversationId: conv }, { name: `t${i}.txt`, bytes: new TextEncoder().encode(`tab ${i}`) }));
    }
    await tabB.client.updateConversation(conv, { is_pinned: true });
    // Tab A's first upload crawls; tab B starts syncing while it is in flight. Without the
    // lock, B would take A's in-flight upload for an orphan and send it a second time.
    tabA.net.inject({ delayMs: 150 }, 'POST', /^\/v1\/files/);
    tabA.net.inject('lose-response', 'POST', /^\/v1\/files/);
    tabB.net.inject('lose-response', 'POST', /^\/v1\/files/);
    const inFlight = new Promise<void>((resolve) => (tabA.net.onDelay = resolve));
    const syncA = tabA.engine.syncOnce();
    await inFlight;
    await Promise.all([syncA, tabB.engine.syncOnce(), tabA.engine.syncOnce(), tabB.engine.syncOnce()]);
    tabA.clock.advance(600_000);
    tabB.clock.advance(600_000);
    await Promise.all([tabA.settle(), tabB.settle()]);

    const convId = await tabA.client.resolveId(conv);
    const onServer = await serverFilesWithConversation(server.baseUrl, server.tokens.alice);
    const names = [...onServer.values()].filter((f) => f.conversationId === convId).map((f) => f.file.filename).sort();
    expect(names).toEqual(['t0.txt', 't1.txt', 't2.txt', 't3.txt']);
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === convId)?.is_pinned).toBe(true);
    const mirror = await mirrorState(tabB.db);
    expect(mirror.files.map(({ conversationId: _c, ...f }) => f).sort(byId)).toEqual([...onServer.values()].map((f) => f.file).sort(byId));
    expect(await tabA.db.outbox.count()).toBe(0);
    tabA.close();
    tabB.close();
  });
});

describe('schema', () => {
  it('upgrades a version 1 database in place, keeping its rows', async () => {
    const indexedDB = new IDBFactory();
    const old = new Dexie('upgrade-me', { indexedDB, IDBKeyRange });
    old.version(1).stores({
      conversations: 'id, contact_id, group_id, last_active_at, syncState',
      files: 'id, conversationId, message_id, syncState',
      serverConversations: 'id, seenInPass',
      serverFiles: 'id, conversationId, seenInPass',
      outbox: '++seq, &id, entityId, state',
      uploadChunks: '[opId+index], opId',
      idAliases: 'tempId, realId',
      fileScans: 'conversationId',
      meta: 'key',
    });
    await old.table('serverFiles').put({ id: 'AAAAAAAAAAAAAAAA', message_id: 'BBBBBBBBBBBBBBBB', filename: 'a', seenInPass: 1 });
    // Version 6 keeps a server copy only where pending work needs it: this rename does, the next row has none.
    await old.table('outbox').add({ id: 'op-1', entity: 'file', entityId: 'AAAAAAAAAAAAAAAA', body: { kind: 'file.rename', filename: 'b' }, state: 'queued', attempts: 0, nextAttemptAt: 0, firstSentAt: null, outcomeUnknown: false, error: null, createdAt: 1 });
    await old.table('serverFiles').put({ id: 'DDDDDDDDDDDDDDDD', message_id: 'EEEEEEEEEEEEEEEE', filename: 'd', conversationId: 'CCCCCCCCCCCCCCCC', seenInPass: 1 });
    await old.table('files').put({ id: 'DDDDDDDDDDDDDDDD', message_id: 'EEEEEEEEEEEEEEEE', filename: 'd', conversationId: 'CCCCCCCCCCCCCCCC', syncState: 'synced' });
    await old.table('meta').put({ key: 'status', value: { lastSyncAt: 5 } });
    const shown = { id: 'CCCCCCCCCCCCCCCC', contact_id: 'x', group_id: null, pinned_message_id: null, is_pinned: true, is_muted: false, last_active_at: null, last_opened_at: null, created_at: 10, archived_at: null, syncState: 'synced' };
    await old.table('conversations').put(shown);
    old.close();

    const db = openSyncDb('upgrade-me', { indexedDB, IDBKeyRange });
    const row = await db.serverFiles.get('AAAAAAAAAAAAAAAA');
    expect(row).toMatchObject({ filename: 'a', conversationId: null });
    expect(row).not.toHaveProperty('seenInPass'); // version 3 drops the unused pass number
    // Version 5: the visible conversations gained the windowed lists' index keys (invisible to readers).
    expect(await db.conversations.where(ORDER_INDEX).between([0], [0, []]).toArray()).toEqual([shown]);
    expect(await db.conversations.where(BY_ARCHIVED_INDEX).between([0, 0], [0, 0, []]).count()).toBe(1);
    // Version 6: a copy nothing pending needs is gone; the visible row stands for it.
    expect(await db.serverFiles.get('DDDDDDDDDDDDDDDD')).toBeUndefined();
    expect((await db.files.get('DDDDDDDDDDDDDDDD'))?.filename).toBe('d');
    expect(db.verno).toBeGreaterThanOrEqual(6);
    db.close();
  });

  it('upgrades a version 7 database to 8: its conversations gain the words index the search reads', async () => {
    const indexedDB = new IDBFactory();
    const old = new Dexie('upgrade-7', { indexedDB, IDBKeyRange });
    // Version 7's stores, as openSyncDb declared them before version 8.
    old.version(7).stores({
      conversations: 'id, contact_id, group_id, listKeys.order, listKeys.byArchived',
      files: 'id, conversationId, created_at, [conversationId+created_at]',
      serverConversations: 'id',
      serverFiles: 'id, conversationId',
      outbox: '++seq, &id, entityId, state',
      uploadChunks: '[opId+index], opId',
      idAliases: 'tempId, realId',
      fileScans: 'conversationId',
      meta: 'key',
      offlineKeep: 'conversationId',
      offlineFiles: 'fileId, conversationId',
      downloadChunks: '[fileId+offset], fileId',
      offlineState: 'key',
    });
    const row = (id: string, contact_id: string) => ({ id, contact_id, group_id: null, pinned_message_id: null, is_pinned: false, is_muted: false, last_active_at: null, last_opened_at: null, created_at: 10, archived_at: null, syncState: 'synced' });
    // As version 7's middleware stored them: the order keys, no words.
    const keys = { order: [1, -10, -10], byArchived: [0, 1, -10, -10] };
    await old.table('conversations').bulkPut([{ ...row('CCCCCCCCCCCCCCC1', 'amelia-hughes'), listKeys: keys }, { ...row('CCCCCCCCCCCCCCC2', 'Zoë_Martin'), listKeys: keys }]);
    old.close();

    const db = openSyncDb('upgrade-7', { indexedDB, IDBKeyRange });
    expect(await db.conversations.where(WORDS_INDEX).startsWith('hug').primaryKeys()).toEqual(['CCCCCCCCCCCCCCC1']);
    expect(await db.conversations.where(WORDS_INDEX).equals('zoe').primaryKeys()).toEqual(['CCCCCCCCCCCCCCC2']);
    const found = await readConversationWindow(db, { ...DEFAULT_FILTERS, text: 'Hughes Amelia' }, null, 0, 10);
    expect(found.rows).toEqual([row('CCCCCCCCCCCCCCC1', 'amelia-hughes')]);
    expect(await db.conversations.orderBy(ORDER_INDEX).count()).toBe(2);
    expect(db.verno).toBe(8);
    db.close();
  });
});
