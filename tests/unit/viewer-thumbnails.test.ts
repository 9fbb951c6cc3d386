// Thumbnails: made once from bytes the device has (never the network), moved to an upload's
// server id, pruned with their file; their database is deleted with the user's at sign-out.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { openSyncDb, type FileView } from '../../lib/sync/mirror/db';
import type { OutboxOp } from '../../lib/sync/outbox/operations';
import { removeDatabase, thumbnailsDatabaseName } from '../../lib/sync/session/removal';
import { ensureThumbnail, openThumbnails, pruneThumbnails } from '../../lib/view/viewer/thumbnails';

const file = (over: Partial<FileView>): FileView =>
  ({ id: 'f1', message_id: 'm1', filename: 'a.png', file_url: 'http://h/files/a.png?id=f1&sig=s', file_type: 'image/png', file_size: 3, created_at: 1, conversationId: 'c1', syncState: 'synced', ...over }) as FileView;

function setup() {
  const dexie = { indexedDB: new IDBFactory(), IDBKeyRange };
  const name = `parley-sync-thumbs-${Math.random()}`;
  const db = openSyncDb(name, dexie);
  const thumbs = openThumbnails(name, dexie);
  const made: Blob[] = [];
  const make = async (blob: Blob) => {
    made.push(blob);
    return { bytes: new Uint8Array([1, 2]).buffer as ArrayBuffer, type: 'image/webp' };
  };
  return { dexie, name, db, thumbs, made, make };
}

describe('thumbnails', () => {
  it('are made once from a queued upload, and move to the id the server gave it', async () => {
    const { db, thumbs, made, make } = setup();
    await db.outbox.add({ seq: 1, id: 'op1', entity: 'file', entityId: 'local_a', body: { kind: 'file.upload' }, state: 'queued' } as unknown as OutboxOp);
    await db.uploadChunks.add({ opId: 'op1', index: 0, bytes: new Uint8Array([9, 9, 9]).buffer as ArrayBuffer });
    expect(await ensureThumbnail(db, thumbs, file({ id: 'local_a', file_url: '' }), null, make)).toBe(true);
    expect(await ensureThumbnail(db, thumbs, file({ id: 'local_a', file_url: '' }), null, make)).toBe(true);
    expect(made).toHaveLength(1);
    expect(made[0]!.size).toBe(3);
    // Sent: the server's id, the queued bytes gone; the thumbnail follows the alias.
    await db.idAliases.add({ tempId: 'local_a', realId: 'srv1' });
    await db.uploadChunks.clear();
    expect(await ensureThumbnail(db, thumbs, file({ id: 'srv1' }), null, make)).toBe(true);
    expect(made).toHaveLength(1);
    expect(await thumbs.thumbnails.get('srv1')).toMatchObject({ type: 'image/webp' });
    expect(await thumbs.thumbnails.get('local_a')).toBeUndefined();
  });

  it('are not made for a file the device does not have, and go when their file goes', async () => {
    const { db, thumbs, made, make } = setup();
    expect(await ensureThumbnail(db, thumbs, file({}), null, make)).toBe(false);
    expect(made).toHaveLength(0);
    await db.files.add(file({ id: 'kept' }));
    await thumbs.thumbnails.bulkAdd([
      { fileId: 'kept', bytes: new ArrayBuffer(1), type: 'image/webp' },
      { fileId: 'deleted', bytes: new ArrayBuffer(1), type: 'image/webp' },
    ]);
    expect(await pruneThumbnails(db, thumbs)).toBe(1);
    expect(await thumbs.thumbnails.toCollection().primaryKeys()).toEqual(['kept']);
  });

  it('are deleted with the user’s database', async () => {
    const { dexie, name, db, thumbs } = setup();
    await db.files.add(file({}));
    await thumbs.thumbnails.add({ fileId: 'f1', bytes: new ArrayBuffer(1), type: 'image/webp' });
    thumbs.close();
    db.close();
    await removeDatabase(name, dexie);
    const names = (await dexie.indexedDB.databases()).map((d) => d.name);
    expect(names).not.toContain(thumbnailsDatabaseName(name));
    expect(names).not.toContain(name);
  });
});
