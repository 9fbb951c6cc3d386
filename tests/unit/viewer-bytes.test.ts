// Where the viewer gets a file's bytes: a queued upload's chunks from IndexedDB (in order), else
// the network through the service worker; what it says when it cannot.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { openSyncDb, type FileView } from '../../lib/sync/mirror/db';
import type { OutboxOp } from '../../lib/sync/outbox/operations';
import { loadFileBytes, NOT_ON_DEVICE } from '../../lib/view/viewer/bytes';
import { onDeviceFileIds } from '../../lib/offline/on-device';
import { readFileWindow } from '../../lib/view/file-window';

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
    const loaded = await loadFileBytes(d, file({ id: 'local_x', file_url: '', syncState: 'pending' }), { fetcher: never, caches: null });
    expect(loaded.ok && new TextDecoder().decode(loaded.bytes)).toBe('abcdef');
    expect(loaded.ok && loaded.from).toBe('queue');
  });

  it('fetches a file on the server, and says why when it cannot', async () => {
    const d = db();
    const ok = await loadFileBytes(d, file({}), { fetcher: (async () => new Response('x,y')) as typeof fetch, caches: null });
    expect(ok.ok && new TextDecoder().decode(ok.bytes)).toBe('x,y');
    const offline = await loadFileBytes(d, file({}), { fetcher: (() => Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch, caches: null });
    expect(offline).toEqual({ ok: false, reason: 'offline', message: NOT_ON_DEVICE });
    const gone = await loadFileBytes(d, file({}), { fetcher: (async () => new Response('', { status: 404 })) as typeof fetch, caches: null });
    expect(gone).toMatchObject({ ok: false, reason: 'gone' });
    const failed = await loadFileBytes(d, file({}), { fetcher: (async () => new Response('', { status: 503 })) as typeof fetch, caches: null });
    expect(failed).toMatchObject({ ok: false, reason: 'failed' });
    expect(await loadFileBytes(d, file({ file_url: '', syncState: 'pending' }), { fetcher: never, caches: null })).toMatchObject({ ok: false, reason: 'gone' });
  });

  it('reports the bytes received of the total as they arrive, and stops on the signal', async () => {
    const d = db();
    const encoder = new TextEncoder();
    // A body that sends its first part, then holds until the test says.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const body = () =>
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode('abcd'));
          await held;
          controller.enqueue(encoder.encode('ef'));
          controller.close();
        },
      });
    const steps: Array<[number, number | null]> = [];
    const loading = loadFileBytes(d, file({}), {
      fetcher: (async () => new Response(body(), { headers: { 'content-length': '6' } })) as typeof fetch,
      caches: null,
      onProgress: (received, total) => steps.push([received, total]),
    });
    await expect.poll(() => steps.at(-1)).toEqual([4, 6]);
    release();
    const loaded = await loading;
    expect(loaded.ok && new TextDecoder().decode(loaded.bytes)).toBe('abcdef');
    expect(steps).toEqual([[0, 6], [4, 6], [6, 6]]);

    // Cancelled mid-body: the read stops, and the result says so (not "offline").
    const controller = new AbortController();
    const stalled = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(encoder.encode('ab'));
        controller.signal.addEventListener('abort', () => c.error(new DOMException('The operation was aborted.', 'AbortError')));
      },
    });
    const partial: number[] = [];
    const cancelling = loadFileBytes(d, file({}), {
      fetcher: (async () => new Response(stalled, { headers: { 'content-length': '6' } })) as typeof fetch,
      caches: null,
      signal: controller.signal,
      onProgress: (received) => partial.push(received),
    });
    await expect.poll(() => partial.at(-1)).toBe(2);
    controller.abort();
    expect(await cancelling).toMatchObject({ ok: false, reason: 'cancelled' });
    // Cancelled before any answer: the fetch's AbortError.
    const before = new AbortController();
    before.abort();
    const refused = loadFileBytes(d, file({}), {
      fetcher: ((_: string, init?: RequestInit) => Promise.reject(init?.signal?.aborted ? new DOMException('aborted', 'AbortError') : new Error('no signal'))) as typeof fetch,
      caches: null,
      signal: before.signal,
    });
    expect(await refused).toMatchObject({ ok: false, reason: 'cancelled' });
  });
});

describe('files on the device', () => {
  const row = (fileId: string, url: string, complete: boolean) => ({ fileId, conversationId: 'c1', url, size: 6, received: complete ? 6 : 2, complete, lastOpenedAt: null, etag: null, headers: [] as Array<[string, string]> });

  it('are those held whole under their current URL; the files list marks them and filters on them', async () => {
    const d = db();
    const url = (id: string, name = 'a.csv') => `http://h/files/${name}?id=${id}&sig=s`;
    await d.files.bulkPut([
      file({ id: 'held', file_url: url('held'), created_at: 1 }),
      file({ id: 'partial', file_url: url('partial'), created_at: 2 }),
      file({ id: 'renamed', file_url: url('renamed', 'new.csv'), created_at: 3 }),
      file({ id: 'never', file_url: url('never'), created_at: 4 }),
      file({ id: 'elsewhere', conversationId: 'c2', file_url: url('elsewhere'), created_at: 5 }),
    ]);
    await d.offlineFiles.bulkPut([row('held', url('held'), true), row('partial', url('partial'), false), row('renamed', url('renamed'), true), row('elsewhere', url('elsewhere'), true)]);
    expect([...(await onDeviceFileIds(d, await d.files.toArray()))].sort()).toEqual(['elsewhere', 'held']);

    const all = await readFileWindow(d, { conversationId: '', family: 'any', name: '' }, null, 0, 50);
    expect(all.rows.map((r) => [r.id, r.onDevice])).toEqual([['elsewhere', true], ['never', false], ['renamed', false], ['partial', false], ['held', true]]);
    const held = await readFileWindow(d, { conversationId: '', family: 'any', name: '', onDevice: true }, null, 0, 50);
    expect(held.rows.map((r) => r.id)).toEqual(['elsewhere', 'held']);
    expect(held.total).toBe(2);
    const ofOne = await readFileWindow(d, { conversationId: 'c1', family: 'any', name: '', onDevice: true }, null, 0, 50);
    expect(ofOne.rows.map((r) => r.id)).toEqual(['held']);
  });
});
