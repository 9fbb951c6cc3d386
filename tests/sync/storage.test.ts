// @vitest-environment node
// Storage trouble the browser causes, met by the client API: an upload that cannot fit is refused
// before anything is queued (the estimate says so, or IndexedDB refuses the chunks: the whole
// transaction rolls back), and a connection the browser closed is reopened and the write retried.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import type { DBCore, Middleware } from 'dexie';
import { describe, expect, it } from 'vitest';
import { createSyncClient } from '../../lib/sync/outbox/client';
import { inputValidators } from '../../lib/sync/outbox/validate-input';
import { openSyncDb, type ParleyDb } from '../../lib/sync/mirror/db';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { StorageFullError } from '../../lib/sync/core/storage';

let counter = 0;
function freshDb(): ParleyDb {
  return openSyncDb(`storage-${++counter}`, { indexedDB: new IDBFactory(), IDBKeyRange });
}

/** A device whose disk is full: every write of upload chunks fails as IndexedDB fails it then. */
function quotaOnChunks(): Middleware<DBCore> {
  return {
    stack: 'dbcore',
    name: 'full-disk',
    create: (down) => ({
      ...down,
      table(name) {
        const table = down.table(name);
        if (name !== 'uploadChunks') return table;
        return {
          ...table,
          mutate: async () => {
            throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
          },
        };
      },
    }),
  };
}

const bytes = (n: number) => new Uint8Array(n).fill(7);

/** What the outbox, the stored bytes and the visible files hold: nothing may change on a refusal. */
async function snapshot(db: ParleyDb) {
  return {
    outbox: (await db.outbox.toArray()).map((op) => op.body.kind),
    chunks: await db.uploadChunks.count(),
    files: (await db.files.toArray()).map((f) => f.filename).sort(),
  };
}

describe('an upload that does not fit', () => {
  it('is refused at once when the estimate says it will not fit, and nothing else changes', async () => {
    const db = freshDb();
    let free = 10_000;
    const client = createSyncClient(db, { validate: inputValidators, estimateStorage: async () => ({ usage: 1_000_000 - free, quota: 1_000_000 }) });
    const conversationId = await client.createConversation({ contact_id: 'storage-contact' });
    await client.uploadFile({ conversationId }, { name: 'small.txt', bytes: bytes(100) });
    const before = await snapshot(db);

    const refusal = client.uploadFile({ conversationId }, { name: 'scan.pdf', bytes: new Blob([bytes(20_000)]) });
    await expect(refusal).rejects.toBeInstanceOf(StorageFullError);
    await expect(refusal).rejects.toThrow(/Not enough storage on this device to keep “scan\.pdf”.*It was not queued/);
    expect(await snapshot(db)).toEqual(before);
    expect((await readSyncStatus(db)).pendingCount).toBe(2);

    // Room again: the same file is accepted.
    free = 50_000;
    await client.uploadFile({ conversationId }, { name: 'scan.pdf', bytes: new Blob([bytes(20_000)]) });
    expect((await snapshot(db)).files).toEqual(['scan.pdf', 'small.txt']);
  });

  it('an estimate that fails does not block the upload', async () => {
    const db = freshDb();
    const client = createSyncClient(db, { validate: inputValidators, estimateStorage: async () => Promise.reject(new Error('no estimate here')) });
    const conversationId = await client.createConversation({ contact_id: 'storage-contact' });
    await client.uploadFile({ conversationId }, { name: 'a.txt', bytes: bytes(10) });
    expect((await snapshot(db)).files).toEqual(['a.txt']);
  });

  it('is refused with the same message when IndexedDB runs out of quota storing the chunks; the transaction leaves nothing behind', async () => {
    const db = freshDb();
    db.use(quotaOnChunks());
    // The estimate says it fits (estimates are coarse): the write is what finds the disk full.
    const client = createSyncClient(db, { validate: inputValidators, estimateStorage: async () => ({ usage: 0, quota: 1e12 }) });
    const conversationId = await client.createConversation({ contact_id: 'storage-contact' });
    await client.updateConversation(conversationId, { is_muted: true });
    const before = await snapshot(db);

    const refusal = client.uploadFile({ conversationId }, { name: 'photo.jpg', bytes: bytes(3 * 1024 * 1024) });
    await expect(refusal).rejects.toBeInstanceOf(StorageFullError);
    await expect(refusal).rejects.toThrow(/Not enough storage on this device to keep “photo\.jpg”/);
    // The upload's outbox row (added before the chunks, in the same transaction) was rolled back.
    expect(await snapshot(db)).toEqual(before);
    expect((await db.conversations.get(conversationId))?.is_muted).toBe(true);
  });
});

describe('a lost connection', () => {
  it('is reopened and the write retried once', async () => {
    const db = freshDb();
    const client = createSyncClient(db, { validate: inputValidators });
    const conversationId = await client.createConversation({ contact_id: 'closed-contact' });
    // What the browser does on iOS: the connection goes away under the app (Dexie 4 then refuses
    // every operation with DatabaseClosedError rather than opening again by itself).
    db.close();
    await client.updateConversation(conversationId, { is_pinned: true });
    expect(db.isOpen()).toBe(true);
    expect((await db.conversations.get(conversationId))?.is_pinned).toBe(true);
    expect((await db.outbox.toArray()).map((op) => op.body.kind)).toEqual(['conversation.create', 'conversation.update']);
  });

  it('an upload after the connection was lost is stored whole', async () => {
    const db = freshDb();
    const client = createSyncClient(db, { validate: inputValidators });
    const conversationId = await client.createConversation({ contact_id: 'closed-contact' });
    db.close();
    await client.uploadFile({ conversationId }, { name: 'late.txt', bytes: bytes(2 * 1024 * 1024 + 5) });
    expect(await snapshot(db)).toEqual({ outbox: ['conversation.create', 'file.upload'], chunks: 3, files: ['late.txt'] });
  });
});
