// An upload's queued bytes as the tus transfer reads them (outbox/chunks.ts `openStoredChunks`):
// only the chunks a PATCH needs, each read once (a chunk is a megabyte from disk), and a chunk not
// of the size it was cut at is refused rather than sent at the wrong offset.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { openSyncDb } from '../../lib/sync/mirror/db';
import { openStoredChunks, prepareChunks, storeChunks, UPLOAD_CHUNK_BYTES } from '../../lib/sync/outbox/chunks';

function db() {
  return openSyncDb(`stored-chunks-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange });
}

/** Counts the chunk rows read from the table. */
function countReads(d: ReturnType<typeof db>) {
  const reads = { count: 0 };
  d.uploadChunks.hook('reading', (row) => {
    reads.count++;
    return row;
  });
  return reads;
}

describe('openStoredChunks', () => {
  it('reads only the chunks asked for, each once; opening reads none', async () => {
    const d = db();
    const size = 2 * UPLOAD_CHUNK_BYTES + 1000;
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 4096) bytes[i] = (i / 4096) % 251;
    await d.transaction('rw', d.uploadChunks, async () => storeChunks(d, 'op1', await prepareChunks(bytes.buffer)));
    const reads = countReads(d);
    const stored = await openStoredChunks(d, 'op1', size, 3);
    expect(reads.count).toBe(0);
    expect(stored!.chunkBytes).toBe(UPLOAD_CHUNK_BYTES);
    const last = await stored!.read(2, 2);
    expect(reads.count).toBe(1);
    expect(new Uint8Array(last![0]!.bytes)).toEqual(bytes.subarray(2 * UPLOAD_CHUNK_BYTES));
    const all = await stored!.read(0, 2);
    expect(reads.count).toBe(4);
    expect(all!.map((c) => c.index)).toEqual([0, 1, 2]);
  });

  it('a file in one chunk: its size is the chunk size; an empty file reads as empty', async () => {
    const d = db();
    await d.transaction('rw', d.uploadChunks, async () => {
      await storeChunks(d, 'small', await prepareChunks(new TextEncoder().encode('hello').buffer as ArrayBuffer));
      await storeChunks(d, 'empty', await prepareChunks(new ArrayBuffer(0)));
    });
    const small = await openStoredChunks(d, 'small', 5, 1);
    expect(small!.chunkBytes).toBe(5);
    expect(new TextDecoder().decode((await small!.read(0, 0))![0]!.bytes)).toBe('hello');
    const empty = await openStoredChunks(d, 'empty', 0, 1);
    expect((await empty!.read(0, 0))![0]!.bytes.byteLength).toBe(0);
  });

  it('refuses a chunk that is not the size it was cut at, and says when chunks are missing', async () => {
    const d = db();
    await d.uploadChunks.bulkAdd([
      { opId: 'odd', index: 0, bytes: new ArrayBuffer(3) },
      { opId: 'odd', index: 1, bytes: new ArrayBuffer(3) },
    ]);
    const odd = await openStoredChunks(d, 'odd', 6, 2);
    await expect(odd!.read(0, 1)).rejects.toThrow(/queued chunk 0 of this upload holds 3 bytes where 1048576 were cut/);
    expect(await openStoredChunks(d, 'odd', 6, 3)).toBeNull();
    await d.uploadChunks.where('opId').equals('odd').delete();
    expect(await odd!.read(0, 1)).toBeNull();
  });
});
