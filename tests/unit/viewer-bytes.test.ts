// Where the viewer gets a file's bytes: a queued upload's chunks from IndexedDB (in order), else
// the network through the service worker; what it says when it cannot.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { openSyncDb, type FileView } from '../../lib/sync/mirror/db';
import type { OutboxOp } from '../../lib/sync/outbox/operations';
import { loadFileBytes } from '../../lib/view/viewer/bytes';

const file = (over: Partial<FileView>): FileView =>
  ({ id: 'f1', message_id: 'm1', filename: 'a.csv', file_url: 'http://h/files/a.csv?id=f1&sig=s', file_type: 'text/csv', file_size: 6, created_at: 1, conversationId: 'c1', syncState: 'synced', ...over }) as FileView;

function db() {
  return openSyncDb(`viewer-bytes-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange });
}

const never = (() => Promise.reject(new Error('no network expected'))) as typeof fetch;

describe('loadFileBytes', () => {
  it('reads a queued upload from its chunks, in order, without the network', async () => {
    const d = db();
    const op = { seq: 1, id: 'op1', entity: 'file', entityId: 'local_x', body: { kind: 'file.upload', conversationId: 'c1', messageId: null, tempMessageId: 'local_m', filename: 'a.csv', fileType: 'text/csv', size: 6, chunkCount: 2 }, state: 'queued' } as unknown as OutboxOp;
    await d.outbox.add(op);
    await d.uploadChunks.bulkAdd([
      { opId: 'op1', index: 1, bytes: new TextEncoder().encode('def').buffer as ArrayBuffer },
      { opId: 'op1', index: 0, bytes: new TextEncoder().encode('abc').buffer as ArrayBuffer },
    ]);
    const loaded = await loadFileBytes(d, file({ id: 'local_x', file_url: '', syncState: 'pending' }), never);
    expect(loaded.ok && new TextDecoder().decode(loaded.bytes)).toBe('abcdef');
    expect(loaded.ok && loaded.from).toBe('queue');
  });

  it('fetches a file on the server, and says why when it cannot', async () => {
    const d = db();
    const ok = await loadFileBytes(d, file({}), (async () => new Response('x,y')) as typeof fetch);
    expect(ok.ok && new TextDecoder().decode(ok.bytes)).toBe('x,y');
    const offline = await loadFileBytes(d, file({}), (() => Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch);
    expect(offline).toMatchObject({ ok: false, reason: 'offline' });
    const gone = await loadFileBytes(d, file({}), (async () => new Response('', { status: 404 })) as typeof fetch);
    expect(gone).toMatchObject({ ok: false, reason: 'gone' });
    const failed = await loadFileBytes(d, file({}), (async () => new Response('', { status: 503 })) as typeof fetch);
    expect(failed).toMatchObject({ ok: false, reason: 'failed' });
    expect(await loadFileBytes(d, file({ file_url: '', syncState: 'pending' }), never)).toMatchObject({ ok: false, reason: 'gone' });
  });
});
