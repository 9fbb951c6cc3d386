// A mirror the browser cleared behind the app's back (Safari evicts the storage of sites unused
// for a week; any browser may under storage pressure). The database then opens empty, and an
// empty database looks exactly like a first sign-in — so a marker kept OUTSIDE it, in the device
// registry (localStorage), remembers that it was filled and how many changes were not yet sent.
// On start: marker says filled, database empty → it was cleared. The sync worker pulls everything
// again by itself (an empty mirror is a first sync); this records a notice for the UI, with the
// number of queued changes that were lost with it, so the app never claims all is synced.
import type { DexieOptions } from 'dexie';
import { deleteMeta, MIRROR_CLEARED_KEY, mirrorIsEmpty, type MirrorCleared, openSyncDb, type ParleyDb, setMeta } from '../sync/page';
import { entryFor, register, type StorageLike } from './device';

/** Called whenever the sync status changes: `filled` once anything was synced or queued. */
export function recordMirror(storage: StorageLike, database: string, now: { filled: boolean; pending: number }): void {
  const entry = entryFor(storage, database);
  if (!entry) return;
  // Sticky: a database that held data once must never open empty unnoticed.
  const next = { filled: (entry.mirror?.filled ?? false) || now.filled, pending: now.pending };
  if (entry.mirror?.filled === next.filled && entry.mirror?.pending === next.pending) return;
  register(storage, { ...entry, mirror: next });
}

/**
 * Before the session's database is used (the worker would fill it at once): was it cleared?
 * If so, the notice is stored in the (new, empty) database and returned. `session`: the session's
 * own instance, used and left open (one schema parse and one open on the first screen, not two);
 * without it the check opens and closes one of its own.
 */
export async function checkMirror(
  deps: { storage: StorageLike; dexie?: DexieOptions; now?: () => number },
  database: string,
  session?: ParleyDb,
): Promise<MirrorCleared | null> {
  const marker = entryFor(deps.storage, database)?.mirror;
  if (!marker?.filled) return null;
  const db = session ?? openSyncDb(database, deps.dexie);
  try {
    if (!(await mirrorIsEmpty(db))) return null;
    const cleared: MirrorCleared = { at: (deps.now ?? Date.now)(), lostChanges: marker.pending };
    await setMeta(db, MIRROR_CLEARED_KEY, cleared);
    return cleared;
  } finally {
    if (!session) db.close();
  }
}

export async function dismissMirrorCleared(db: ParleyDb): Promise<void> {
  await deleteMeta(db, MIRROR_CLEARED_KEY);
}
