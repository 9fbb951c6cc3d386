// A file's bytes held in the user's database (file-bytes.ts databaseChunkFiles), for the page: read
// them, and keep a file just opened from the network, on a device with a lock (issue 28) — what the
// service worker does with Cache Storage on a device without one (workers/sw.ts), here sealed. The
// budget and evictions are the downloader's (woken after a file is kept: sealed-downloads.ts).
import type { FileView, OfflineFile, ParleyDb } from '../sync/page';
import { DOWNLOAD_CHUNK_BYTES } from './file-bytes';
import { wakeDownloader } from './settings';

/** The bytes of a complete file of this URL held in the database, or null (none, partial, or not all there). */
export async function readDeviceFile(db: ParleyDb, file: Pick<FileView, 'id' | 'file_url'>): Promise<{ bytes: Uint8Array; row: OfflineFile } | null> {
  if (!file.file_url) return null;
  return db.transaction('r', db.offlineFiles, db.downloadChunks, async () => {
    const row = await db.offlineFiles.get(file.id);
    if (!row || !row.complete || row.url !== file.file_url) return null;
    const chunks = await db.downloadChunks.where('fileId').equals(file.id).sortBy('offset');
    const out = new Uint8Array(row.size);
    let at = 0;
    for (const chunk of chunks) {
      // A gap or an overlap: not the file (the downloader's reconcile starts it over).
      if (chunk.offset !== at || at + chunk.bytes.byteLength > row.size) return null;
      out.set(new Uint8Array(chunk.bytes), at);
      at += chunk.bytes.byteLength;
    }
    return at === row.size ? { bytes: out, row } : null;
  });
}

/** Records an opening of a file read from the device (least recently opened is evicted first). */
export async function noteDeviceFileOpened(db: ParleyDb, fileId: string, now: number): Promise<void> {
  await db.offlineFiles.update(fileId, { lastOpenedAt: now });
}

/**
 * Keeps a file just opened from the network as a complete file (its bytes as chunks), so it opens
 * offline later; then wakes the downloader, which applies the budget.
 */
export async function keepOpenedFile(db: ParleyDb, file: Pick<FileView, 'id' | 'conversationId' | 'file_url'>, bytes: Uint8Array, headers: Array<[string, string]>, now: number): Promise<void> {
  if (!file.file_url) return;
  const row: OfflineFile = { fileId: file.id, conversationId: file.conversationId, url: file.file_url, size: bytes.byteLength, received: bytes.byteLength, complete: true, lastOpenedAt: now, etag: null, headers };
  await db.transaction('rw', db.offlineFiles, db.downloadChunks, async () => {
    await db.downloadChunks.where('fileId').equals(file.id).delete();
    const chunks = [];
    for (let offset = 0; offset < bytes.byteLength; offset += DOWNLOAD_CHUNK_BYTES) {
      chunks.push({ fileId: file.id, offset, bytes: bytes.slice(offset, offset + DOWNLOAD_CHUNK_BYTES).buffer as ArrayBuffer });
    }
    await db.downloadChunks.bulkPut(chunks);
    await db.offlineFiles.put(row);
  });
  wakeDownloader(db.name);
}
