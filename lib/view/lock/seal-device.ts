// Rows kept in clear from before the device had a lock (an earlier version, or a deployment that
// turned the lock on later) are sealed once the keys exist (lib/sync/mirror/seal-existing.ts): at
// the set-up, and at the first unlock of a lock set up by a version that did not do it yet
// (`LockRecord.clearRowsSealed`). Every user database of this origin on the device, and their
// thumbnails. Runs while the lock screen is up: nothing syncs then, and no screen reads a
// half-sealed table.
import { readRegistry, type StorageLike } from '../device';
import { databaseExists, loadSealExisting, openSyncDb, thumbnailsDatabaseName } from '../../sync/page';

/** Seals what is still in clear; returns how many rows it sealed. */
export async function sealDeviceData(storage: StorageLike, origin: string): Promise<number> {
  const [{ sealClearRows }, { openThumbnails }] = await Promise.all([loadSealExisting(), import('../viewer/thumbnails')]);
  let sealed = 0;
  for (const entry of readRegistry(storage).filter((e) => e.origin === origin && !e.removing)) {
    if (await databaseExists(entry.name)) {
      const db = openSyncDb(entry.name);
      try {
        sealed += await sealClearRows(db);
      } finally {
        db.close();
      }
    }
    // The thumbnails' connection is shared with the lists (openThumbnails keeps it): left open.
    if (await databaseExists(thumbnailsDatabaseName(entry.name))) sealed += await sealClearRows(openThumbnails(entry.name));
  }
  return sealed;
}
