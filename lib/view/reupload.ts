// "Upload my copy again" (issue 32): a file the server lost — a change to it was answered 404 —
// that this device still holds: a queued upload's chunks, a file kept on a device with a lock, or
// the service worker's copy of a file opened or kept offline (viewer/thumbnails.ts bytesOnDevice
// reads them, in that order). The client's reuploadFile turns the failed change into an upload of
// those bytes under the name the user sees, into the same conversation.
import { OPENED_FILES_CACHE, type FileView, type ParleyDb } from '../sync/page';
import { bytesOnDevice } from './viewer/thumbnails';

/** The page's Cache Storage, where it has one. */
export const pageCaches = (): CacheStorage | null => (typeof caches === 'undefined' ? null : caches);

/** Whether the device holds the file's bytes, told without reading them. */
export async function hasCopyOnDevice(db: ParleyDb, file: FileView, cacheStorage: CacheStorage | null = pageCaches()): Promise<boolean> {
  const upload = await db.outbox.where('entityId').equals(file.id).filter((o) => o.body.kind === 'file.upload').first();
  if (upload && (await db.uploadChunks.where('opId').equals(upload.id).count()) > 0) return true;
  if (!file.file_url) return false;
  const kept = await db.offlineFiles.get(file.id);
  if (kept?.complete && kept.url === file.file_url && (await db.downloadChunks.where('fileId').equals(file.id).count()) > 0) return true;
  if (!cacheStorage || !(await cacheStorage.has(OPENED_FILES_CACHE))) return false;
  return (await (await cacheStorage.open(OPENED_FILES_CACHE)).match(file.file_url)) !== undefined;
}

export class NoCopyError extends Error {
  constructor() {
    super('This device no longer has a copy of the file.');
    this.name = 'NoCopyError';
  }
}

/**
 * Uploads the device's copy of the file a failed change (`opId`, on file `fileId`) was about, in
 * its place. Resolves to the new file's id, or null when the change was already replaced or
 * discarded (a second tap, another tab).
 */
export async function uploadMyCopyAgain(
  db: ParleyDb,
  client: { reuploadFile(opId: string, source: { name: string; type?: string; bytes: Blob }): Promise<string | null> },
  opId: string,
  fileId: string,
  cacheStorage: CacheStorage | null = pageCaches(),
): Promise<string | null> {
  const file = await db.files.get(fileId);
  const bytes = file ? await bytesOnDevice(db, file, cacheStorage) : null;
  if (!file || !bytes) throw new NoCopyError();
  return client.reuploadFile(opId, { name: file.filename, type: file.file_type, bytes });
}
