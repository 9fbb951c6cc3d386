// Rows kept in clear from before the device had a lock (an earlier version, or a deployment that
// turned the lock on later) are sealed once the keys exist (lib/sync/mirror/seal-existing.ts): at
// the set-up, and at the first unlock of a lock set up by a version that did not do it yet
// (`LockRecord.clearRowsSealed`). Every user database of this origin on the device, and their
// thumbnails. Runs while the lock screen is up: nothing syncs then, and no screen reads a
// half-sealed table.
import { readRegistry, type StorageLike } from '../device';
import { moveCachedFilesToDevice } from '../../offline/device-files';
import { wakeDownloader } from '../../offline/settings';
import { databaseExists, forgetOpenedFiles, loadSealExisting, OPENED_FILES_CACHE, openSyncDb, thumbnailsDatabaseName } from '../../sync/page';

/**
 * Seals what is still in clear; returns how many rows it sealed. Files opened before the lock sit
 * in the service worker's opened-files cache, in clear: each user's database takes its own as
 * sealed chunks, then the cache is emptied (a file no database records is fetched again).
 */
export async function sealDeviceData(storage: StorageLike, origin: string, cacheStorage: CacheStorage | null = typeof caches === 'undefined' ? null : caches): Promise<number> {
  const [{ sealClearRows }, { openThumbnails }] = await Promise.all([loadSealExisting(), import('../viewer/thumbnails')]);
  let sealed = 0;
  for (const entry of readRegistry(storage).filter((e) => e.origin === origin && !e.removing)) {
    if (await databaseExists(entry.name)) {
      const db = openSyncDb(entry.name);
      try {
        sealed += await sealClearRows(db);
        if (cacheStorage) await moveCachedFilesToDevice(db, cacheStorage, OPENED_FILES_CACHE);
        // The service worker drops the cache once it sees the database sealed: tell it now, so a
        // file its pass kept meanwhile does not wait for its next wake.
        wakeDownloader(entry.name);
      } finally {
        db.close();
      }
    }
    // The thumbnails' connection is shared with the lists (openThumbnails keeps it): left open.
    if (await databaseExists(thumbnailsDatabaseName(entry.name))) sealed += await sealClearRows(openThumbnails(entry.name));
  }
  await forgetOpenedFiles(cacheStorage);
  return sealed;
}
