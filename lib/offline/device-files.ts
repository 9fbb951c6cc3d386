// A file's bytes held on the device, for the page: read them, and keep a file just opened from the
// network. On a device with a lock (issue 28) they are sealed chunks in the user's database
// (file-bytes.ts databaseChunkFiles); without one, Cache Storage — which the service worker fills
// for the pages it controls (workers/sw.ts), and the page itself when none does (the first session
// after installing: the worker controls pages only from their next load). The budget and evictions
// are the downloader's (woken after a file is kept). Which files are held: on-device.ts.
import type { DownloadChunk, FileView, OfflineFile, ParleyDb } from '../sync/page';
import { DOWNLOAD_CHUNK_BYTES, openChunkBytes, sealChunkBytes } from './file-bytes';
import { wakeDownloader } from './settings';

/** Headers of a response kept with a file the page keeps on the device (the downloader keeps more). */
const KEPT_FILE_HEADERS = ['content-type', 'content-disposition'] as const;

/** The bytes of a complete file of this URL held in the database, or null (none, partial, or not all there). */
export async function readDeviceFile(db: ParleyDb, file: Pick<FileView, 'id' | 'file_url'>): Promise<{ bytes: Uint8Array; row: OfflineFile } | null> {
  if (!file.file_url) return null;
  const held = await db.transaction('r', db.offlineFiles, db.downloadChunks, async () => {
    const row = await db.offlineFiles.get(file.id);
    if (!row || !row.complete || row.url !== file.file_url) return null;
    return { row, chunks: await db.downloadChunks.where('fileId').equals(file.id).sortBy('offset') };
  });
  if (!held) return null;
  const { row, chunks } = held;
  const out = new Uint8Array(row.size);
  let at = 0;
  for (const chunk of chunks) {
    // A gap or an overlap: not the file (the downloader's reconcile starts it over).
    if (chunk.offset !== at || at + chunk.bytes.byteLength > row.size) return null;
    // Opened after the transaction: sealed bytes open through WebCrypto, which would end it.
    out.set(new Uint8Array(await openChunkBytes(chunk.bytes)), at);
    at += chunk.bytes.byteLength;
  }
  return at === row.size ? { bytes: out, row } : null;
}

/**
 * Records an opening of a file at `url` (least recently opened is evicted first); `cached`: its
 * whole response is in Cache Storage now, of this size, so a row that was downloading (or none)
 * becomes complete. For the service worker's openings (downloader.ts noteOpened) and the page's.
 */
export async function recordOpened(db: ParleyDb, file: Pick<FileView, 'id' | 'conversationId'>, url: string, cached: { size: number } | null, now: number): Promise<void> {
  const row = await db.offlineFiles.get(file.id);
  if (row && row.url === url) {
    if (cached && !row.complete) {
      // Opened while it was still downloading: the whole response is in the cache now.
      await db.downloadChunks.where('fileId').equals(file.id).delete();
      await db.offlineFiles.update(file.id, { lastOpenedAt: now, complete: true, received: cached.size, size: cached.size });
    } else await db.offlineFiles.update(file.id, { lastOpenedAt: now });
  } else if (cached) {
    if (row) await db.downloadChunks.where('fileId').equals(file.id).delete();
    await db.offlineFiles.put({ fileId: file.id, conversationId: file.conversationId, url, size: cached.size, received: cached.size, complete: true, lastOpenedAt: now, etag: null, headers: [] });
  }
}

/** A file's whole response in the opened-files cache (a device without a lock), or null. */
export async function readCachedFile(caches: CacheStorage, cacheName: string, url: string): Promise<Uint8Array | null> {
  if (!(await caches.has(cacheName))) return null;
  const cached = await (await caches.open(cacheName)).match(url);
  return cached ? new Uint8Array(await cached.arrayBuffer()) : null;
}

/**
 * Keeps a file the page fetched itself (no service worker controls it) in the opened-files cache,
 * as the service worker would have, and records it; then wakes the downloader for the budget.
 */
export async function keepOpenedInCache(
  db: ParleyDb,
  caches: CacheStorage,
  cacheName: string,
  file: Pick<FileView, 'id' | 'conversationId' | 'file_url'>,
  bytes: Uint8Array<ArrayBuffer>,
  headers: Headers,
  now: number,
): Promise<void> {
  const kept = new Headers(headers);
  kept.set('content-length', String(bytes.byteLength));
  await (await caches.open(cacheName)).put(file.file_url, new Response(bytes.slice().buffer, { status: 200, headers: kept }));
  await recordOpened(db, file, file.file_url, { size: bytes.byteLength }, now);
  wakeDownloader(db.name);
}

/** Records an opening of a file read from the device (least recently opened is evicted first). */
export async function noteDeviceFileOpened(db: ParleyDb, fileId: string, now: number): Promise<void> {
  await db.offlineFiles.update(fileId, { lastOpenedAt: now });
}

/**
 * Keeps a file just opened from the network as a complete file (its bytes as chunks), so it opens
 * offline later; then wakes the downloader, which applies the budget.
 */
export async function keepOpenedFile(db: ParleyDb, file: Pick<FileView, 'id' | 'conversationId' | 'file_url'>, bytes: Uint8Array<ArrayBuffer>, headers: Array<[string, string]>, now: number): Promise<void> {
  if (!file.file_url) return;
  await putCompleteFile(db, { fileId: file.id, conversationId: file.conversationId, url: file.file_url, size: 0, received: 0, complete: true, lastOpenedAt: now, etag: null, headers }, bytes);
  wakeDownloader(db.name);
}

/** The headers of a response kept with a file the page keeps (KEPT_FILE_HEADERS), as the row stores them. */
export function keptFileHeaders(headers: Headers): Array<[string, string]> {
  return KEPT_FILE_HEADERS.flatMap((name): Array<[string, string]> => {
    const value = headers.get(name);
    return value === null ? [] : [[name, value]];
  });
}

/** Writes `row` as a complete file of `bytes` (its size, its chunks), in place of what the database held for it. */
async function putCompleteFile(db: ParleyDb, row: OfflineFile, bytes: Uint8Array<ArrayBuffer>): Promise<void> {
  const chunks: DownloadChunk[] = [];
  for (let offset = 0; offset < bytes.byteLength; offset += DOWNLOAD_CHUNK_BYTES) {
    chunks.push({ fileId: row.fileId, offset, bytes: await sealChunkBytes(bytes.slice(offset, offset + DOWNLOAD_CHUNK_BYTES).buffer) });
  }
  await db.transaction('rw', db.offlineFiles, db.downloadChunks, async () => {
    await db.downloadChunks.where('fileId').equals(row.fileId).delete();
    await db.downloadChunks.bulkPut(chunks);
    await db.offlineFiles.put({ ...row, size: bytes.byteLength, received: bytes.byteLength, complete: true });
  });
}

/**
 * A device that held files opened before it had a lock (issue 28): each file the user's database
 * records, whose response is in the opened-files cache, is kept again as sealed chunks (the
 * database's seal middleware must have its keys). The cache itself is emptied by the caller, once
 * every user's database has taken what is theirs. Returns how many files were moved.
 */
export async function moveCachedFilesToDevice(db: ParleyDb, caches: CacheStorage, cacheName: string): Promise<number> {
  if (!(await caches.has(cacheName))) return 0;
  const cache = await caches.open(cacheName);
  let moved = 0;
  for (const row of await db.offlineFiles.toArray()) {
    const cached = await cache.match(row.url);
    if (!cached) continue;
    const bytes = new Uint8Array(await cached.arrayBuffer());
    // As it was (kept or opened, and when), now complete from the device's own chunks.
    await putCompleteFile(db, { ...row, headers: keptFileHeaders(cached.headers) }, bytes);
    moved += 1;
  }
  return moved;
}
