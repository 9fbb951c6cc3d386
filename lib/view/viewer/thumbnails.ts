// Image thumbnails for the file lists, made on the device from bytes it already has — a queued
// upload's chunks, or the service worker's copy of a file opened or kept offline — or, for a file
// the device does not have, from its bytes fetched for the purpose and then dropped
// (thumbnail-fetch.ts). Kept small (WebP, 96 px, ≤ 16 KB) in a database of their own next to the user's
// database (no change to the sync schema), deleted with it at sign-out (lib/sync/session/removal.ts),
// and dropped when their file is gone from the mirror (pruneThumbnails).
import { Dexie, type DexieOptions, type EntityTable } from 'dexie';
import { readDeviceFile } from '../../offline/device-files';
import { type FileView, OPENED_FILES_CACHE, type ParleyDb, queuedUploadBytes, sealMiddleware, thumbnailsDatabaseName } from '../../sync/page';

export interface Thumbnail {
  fileId: string;
  /** ArrayBuffer, not Blob: Safari fails storing Blobs in IndexedDB. */
  bytes: ArrayBuffer;
  type: string;
}

export type ThumbnailsDb = Dexie & { thumbnails: EntityTable<Thumbnail, 'fileId'> };

export const THUMBNAIL_SIZE = 96;

const opened = new Map<string, ThumbnailsDb>();

export function openThumbnails(database: string, options: DexieOptions = {}): ThumbnailsDb {
  const name = thumbnailsDatabaseName(database);
  let db = opened.get(name);
  // Closed by a sign-out elsewhere (the database deleted): a new connection.
  if (!db || db.hasBeenClosed()) {
    db = new Dexie(name, options) as ThumbnailsDb;
    db.version(1).stores({ thumbnails: 'fileId' });
    // A picture of a patient's file: sealed like the user's database while the device has a lock.
    db.use(sealMiddleware);
    opened.set(name, db);
  }
  return db;
}

/**
 * The bytes the device has for a file, or null: queued upload chunks, else a complete file held in
 * the database (a device with a lock, lib/offline/device-files.ts), else the file cache.
 */
export async function bytesOnDevice(db: ParleyDb, file: FileView, caches: CacheStorage | null): Promise<Blob | null> {
  const queued = await queuedUploadBytes(db, file.id);
  if (queued) return new Blob(queued);
  const held = await readDeviceFile(db, file);
  if (held) return new Blob([held.bytes.buffer as ArrayBuffer]);
  if (!file.file_url || !caches || !(await caches.has(OPENED_FILES_CACHE))) return null;
  const cached = await (await caches.open(OPENED_FILES_CACHE)).match(file.file_url);
  return cached ? cached.blob() : null;
}

/**
 * Makes the thumbnail of an image file if the device has its bytes and none exists. An upload
 * that reached the server has a new id: its thumbnail (made from the queued bytes, which are gone
 * now) moves to it.
 */
export async function ensureThumbnail(
  db: ParleyDb,
  thumbs: ThumbnailsDb,
  file: FileView,
  caches: CacheStorage | null,
  make: (blob: Blob) => Promise<{ bytes: ArrayBuffer; type: string } | null>,
  /** Bytes the caller already holds (the viewer's), instead of reading them again. */
  held?: Blob,
): Promise<boolean> {
  if (await thumbs.thumbnails.get(file.id)) return true;
  const alias = await db.idAliases.filter((a) => a.realId === file.id).first();
  const earlier = alias && (await thumbs.thumbnails.get(alias.tempId));
  if (earlier) {
    await thumbs.thumbnails.put({ ...earlier, fileId: file.id });
    await thumbs.thumbnails.delete(earlier.fileId);
    return true;
  }
  const blob = held ?? (await bytesOnDevice(db, file, caches));
  if (!blob) return false;
  const made = await make(blob);
  if (!made) return false;
  await thumbs.thumbnails.put({ fileId: file.id, ...made });
  return true;
}

/** Removes thumbnails whose file is no longer in the mirror (deleted, or a cancelled upload). */
export async function pruneThumbnails(db: ParleyDb, thumbs: ThumbnailsDb): Promise<number> {
  const ids = (await thumbs.thumbnails.toCollection().primaryKeys()) as string[];
  if (ids.length === 0) return 0;
  const files = await db.files.bulkGet(ids);
  const aliases = new Set((await db.idAliases.bulkGet(ids)).filter((a) => a !== undefined).map((a) => a!.tempId));
  const gone = ids.filter((id, i) => files[i] === undefined && !aliases.has(id));
  await thumbs.thumbnails.bulkDelete(gone);
  return gone.length;
}
