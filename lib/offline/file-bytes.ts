// Where the bytes of a file kept on the device live, once complete (issue 28). Two places, one
// downloader (downloader.ts: its queue, budget and eviction are the same for both):
// - Cache Storage ('parley-files'), on a device without a lock: the service worker downloads and
//   serves /files/… from it, Range requests included;
// - the user's own database, as the download's chunks (`downloadChunks`, which the seal
//   middleware encrypts), on a device with a lock: nothing of a file may reach the disk in clear,
//   and Cache Storage cannot be sealed. The page and the sync worker, which hold the keys while the
//   device is unlocked, read and write them (sealed-files.ts); the service worker never does.
// Either way the bytes of a download in progress are chunks in the database, and the row in
// `offlineFiles` says what is held.
import { fileById, type OfflineFile, openBytes, type ParleyDb, type SealedBytes, sealBytes } from '../sync/page';

/** Bytes per IndexedDB chunk of a file (and how often a download's progress is saved). */
export const DOWNLOAD_CHUNK_BYTES = 256 * 1024;

/** A chunk of a file's bytes, in order of offset, as stored (sealed on a device with a lock). */
export interface ByteChunk {
  offset: number;
  bytes: ArrayBuffer | SealedBytes;
}

/** What the sealed bytes of a chunk are bound to. */
const CONTEXT = 'downloadChunks';

/**
 * A chunk's bytes as they are stored: sealed with WebCrypto on a device with a lock, before the
 * transaction that writes them (seal.ts sealBytes says why not in it).
 */
export function sealChunkBytes(bytes: ArrayBuffer): Promise<ArrayBuffer | SealedBytes> {
  return sealBytes(bytes, CONTEXT);
}

/** A stored chunk's plain bytes (outside any transaction). */
export function openChunkBytes(stored: ArrayBuffer | SealedBytes): Promise<ArrayBuffer> {
  return openBytes(stored, CONTEXT);
}

export interface FileBytesStore {
  /** Rows and bytes agree: a complete row whose bytes are gone is dropped (and bytes without a row adopted, where that can be told). */
  reconcile(db: ParleyDb): Promise<void>;
  /** A download has all its bytes (`chunks`, in order, adding up to row.size): they become the file's, and the row complete. */
  complete(db: ParleyDb, row: OfflineFile, chunks: readonly ByteChunk[]): Promise<void>;
  /** Removes what the store holds of a file outside its row and chunks (the caller removes those). */
  remove(row: OfflineFile): Promise<void>;
}

/** Marks a row complete and drops its chunks, or keeps them as the file's bytes. */
async function markComplete(db: ParleyDb, row: OfflineFile, keepChunks: boolean): Promise<void> {
  await db.transaction('rw', db.offlineFiles, db.downloadChunks, async () => {
    if (!keepChunks) await db.downloadChunks.where('fileId').equals(row.fileId).delete();
    row.complete = true;
    row.received = row.size;
    await db.offlineFiles.put(row);
  });
}

/** Cache Storage: the unsealed service worker's file cache, which it serves /files/… from. */
export function cacheStorageFiles(caches: CacheStorage, cacheName: string): FileBytesStore {
  const open = () => caches.open(cacheName);
  return {
    async reconcile(db) {
      const cache = await open();
      const rows = await db.offlineFiles.toArray();
      const byUrl = new Map(rows.map((r) => [r.url, r]));
      for (const row of rows) {
        if (row.complete && !(await cache.match(row.url))) await db.offlineFiles.delete(row.fileId);
      }
      // A file in the cache without a row (opened before rows existed) is adopted.
      for (const request of await cache.keys()) {
        if (byUrl.has(request.url)) continue;
        const fileId = new URL(request.url).searchParams.get('id');
        if (!fileId) continue;
        const file = await fileById(db, fileId);
        if (!file || file.file_url !== request.url || (await db.offlineFiles.get(fileId))) continue;
        await db.offlineFiles.put({ fileId, conversationId: file.conversationId, url: request.url, size: file.file_size, received: file.file_size, complete: true, lastOpenedAt: null, etag: null, headers: [] });
      }
    },
    async complete(db, row, chunks) {
      const headers = new Headers(row.headers);
      headers.set('content-length', String(row.size));
      const blob = new Blob(await Promise.all(chunks.map((c) => openChunkBytes(c.bytes))), { type: headers.get('content-type') ?? '' });
      await (await open()).put(new Request(row.url), new Response(blob, { status: 200, headers }));
      await markComplete(db, row, false);
    },
    async remove(row) {
      await (await open()).delete(row.url);
    },
  };
}

/** The user's database: a complete file's bytes stay its chunks (sealed on a device with a lock). */
export function databaseChunkFiles(): FileBytesStore {
  return {
    async reconcile(db) {
      // A complete row without its chunks (kept in Cache Storage before the device had a lock,
      // which setting the lock up empties) has no bytes here: it goes, and is fetched again.
      const rows = await db.offlineFiles.toArray();
      for (const row of rows) {
        if (!row.complete || row.size === 0) continue;
        if ((await db.downloadChunks.where('fileId').equals(row.fileId).count()) === 0) await db.offlineFiles.delete(row.fileId);
      }
    },
    async complete(db, row) {
      await markComplete(db, row, true);
    },
    async remove() {
      // Nothing outside the row and its chunks.
    },
  };
}
