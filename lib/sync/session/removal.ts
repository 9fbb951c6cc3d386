// Removing a user's data from the device (sign-out): their local databases (mirror, outbox and
// the bytes of queued uploads) and the service worker's cache of opened files. Counts what it
// removes, so the UI can say so.
import { Dexie, type DexieOptions } from 'dexie';
import { isBookkeeping } from '../mirror/bookkeeping';
import { databaseExists, openSyncDb, type ParleyDb } from '../mirror/db';
import { MirrorLockedError } from '../mirror/seal';
import { isSealedDatabase } from '../mirror/sealed-probe';

/** The service worker's cache of opened files (workers/sw.ts): clinical documents. */
export const OPENED_FILES_CACHE = 'parley-files';
/** Where workbox-expiration keeps a timestamp per cached URL (URLs name the files). */
const EXPIRATION_DB = 'workbox-expiration';
const EXPIRATION_STORE = 'cache-entries';

export interface RemovalReport {
  databases: number;
  conversations: number;
  files: number;
  /** Outbox operations, failed ones included: changes that never reached the server. */
  unsyncedChanges: number;
  /** Bytes of queued uploads that were stored on the device. */
  uploadBytes: number;
  /** Files opened or kept offline: responses in the opened-files cache, or held sealed in the database (a device with a lock). */
  openedDocuments: number;
}

export const NOTHING_REMOVED: RemovalReport = {
  databases: 0,
  conversations: 0,
  files: 0,
  unsyncedChanges: 0,
  uploadBytes: 0,
  openedDocuments: 0,
};

/** The image thumbnails of a user's files (lib/view/viewer/thumbnails.ts): not a `parley-sync-` name, which would read as a user's database. */
export function thumbnailsDatabaseName(database: string): string {
  return `parley-thumbnails-${database}`;
}

/** Counts what one database holds, then deletes it (and its thumbnails). A name with no database counts as nothing. */
export async function removeDatabase(name: string, options: DexieOptions = {}): Promise<RemovalReport> {
  // Images of the user's files: gone with the database, whatever else is there.
  await new Dexie(thumbnailsDatabaseName(name), { ...options, addons: [] }).delete().catch(() => {});
  if (!(await databaseExists(name, options))) return NOTHING_REMOVED;
  // A device with a lock keeps the files opened or kept offline in the database, sealed
  // (lib/offline/file-bytes.ts), not in the service worker's cache: counted here, by their rows.
  const sealed = await isSealedDatabase(name, options);
  const db = openSyncDb(name, options);
  let uploadBytes = 0;
  const [conversations, files, unsyncedChanges, heldDocuments] = await db.transaction('r', [db.conversations, db.files, db.outbox, db.uploadChunks, db.offlineFiles], async () => {
    await db.uploadChunks
      .each((chunk) => {
        uploadBytes += chunk.bytes.byteLength;
      })
      // A locked device (10 wrong PINs, a remote wipe) erases without its keys: the bytes of its
      // sealed queued uploads cannot be counted, only the rest (counts need no key).
      .catch((error: unknown) => {
        if (!(error instanceof MirrorLockedError)) throw error;
      });
    return Promise.all([db.conversations.count(), db.files.count(), countUserChanges(db), sealed ? db.offlineFiles.count() : 0]);
  });
  // Other tabs' connections close themselves on the version change (Dexie's default).
  await db.delete();
  return { ...NOTHING_REMOVED, databases: 1, conversations, files, unsyncedChanges, uploadBytes, openedDocuments: heldDocuments };
}

/**
 * The user's changes in the outbox: not the app's bookkeeping (the report of an opening), which
 * the status does not count either. A locked device erased without its keys cannot tell them
 * apart: every operation is counted.
 */
async function countUserChanges(db: ParleyDb): Promise<number> {
  try {
    return (await db.outbox.toArray()).filter((op) => !isBookkeeping(op.body)).length;
  } catch (error) {
    if (!(error instanceof MirrorLockedError)) throw error;
    return db.outbox.count();
  }
}

/**
 * Empties the opened-files cache and workbox's bookkeeping of it (which lists the files' URLs).
 * The cache is per origin, not per user: any sign-out clears it. Returns how many were cached.
 */
export async function forgetOpenedFiles(caches: CacheStorage | null, options: DexieOptions = {}): Promise<number> {
  let count = 0;
  if (caches && (await caches.has(OPENED_FILES_CACHE))) {
    // Entry by entry first: a deleted cache's folder stays on disk while any realm holds a handle
    // to it (the service worker's pass may), a deleted entry's files only while it is read.
    const cache = await caches.open(OPENED_FILES_CACHE);
    const keys = await cache.keys();
    for (const key of keys) await cache.delete(key);
    count = keys.length;
    await caches.delete(OPENED_FILES_CACHE);
  }
  // Opened without a version: the service worker owns the schema (never create it here).
  if (await databaseExists(EXPIRATION_DB, options)) {
    const db = new Dexie(EXPIRATION_DB, { ...options, addons: [] });
    try {
      await db.open();
      if (db.tables.some((t) => t.name === EXPIRATION_STORE)) {
        await db.table(EXPIRATION_STORE).where('cacheName').equals(OPENED_FILES_CACHE).delete();
      }
    } finally {
      db.close();
    }
  }
  return count;
}

export function addReports(a: RemovalReport, b: RemovalReport): RemovalReport {
  return {
    databases: a.databases + b.databases,
    conversations: a.conversations + b.conversations,
    files: a.files + b.files,
    unsyncedChanges: a.unsyncedChanges + b.unsyncedChanges,
    uploadBytes: a.uploadBytes + b.uploadBytes,
    openedDocuments: a.openedDocuments + b.openedDocuments,
  };
}
