// Background Sync (Chromium, Android): changes queued when the app is closed are sent once
// connectivity returns. The page registers a sync tag naming its database after each local write
// (connect.ts); the service worker's 'sync' handler (workers/sw.ts) runs the same engine under the
// same cross-tab lock as the sync worker — never two replays at once — with the token the sync
// worker was last given, kept in the database's meta (sign-out removes it with the database).
// Plain TypeScript: the caller hands in fetch and the LockManager.
import type { DexieOptions } from 'dexie';
import { databaseExists, lockNameFor, openSyncDb, type ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import { SyncEngine } from '../engine/engine';
import type { FetchLike } from '../core/http';

export { databaseOfTag, syncTagFor } from './sync-tag';

const ACCESS_KEY = 'background-sync';

declare module '../mirror/meta' {
  interface MetaValues {
    'background-sync': BackgroundAccess;
  }
}

export interface BackgroundAccess {
  baseUrl: string;
  token: string | null;
}

/** Written by the sync worker whenever it is given a token. */
export async function storeBackgroundAccess(db: ParleyDb, access: BackgroundAccess): Promise<void> {
  const known = await getMeta(db, ACCESS_KEY);
  if (known?.baseUrl === access.baseUrl && known.token === access.token) return;
  await setMeta(db, ACCESS_KEY, access);
}

export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

/** The one lock of a database's replayer: the sync worker and the service worker both take it. */
export function databaseLock(locks: LockManagerLike | undefined, database: string) {
  return <T>(fn: () => Promise<T>): Promise<T> => (locks ? locks.request(lockNameFor(database), fn) : fn());
}

/**
 * 'retry': something queued could not go (network, server, backoff): the service worker rejects
 * the event so the browser tries again later. The others are final for this event.
 */
export type FlushResult = 'sent' | 'nothing-queued' | 'no-access' | 'retry';

export async function flushOutbox(deps: {
  database: string;
  fetch: FetchLike;
  locks?: LockManagerLike;
  /** Tests hand in fake-indexeddb. */
  dexie?: DexieOptions;
}): Promise<FlushResult> {
  // A tag can outlive its database (sign-out deleted it): never create it again.
  if (!(await databaseExists(deps.database, deps.dexie))) return 'no-access';
  const db = openSyncDb(deps.database, { chromeTransactionDurability: 'strict', ...deps.dexie });
  // The database may go between that look and this open (a sign-out deleting it right now): an
  // open then makes a new, empty one, which must not outlive this event (it would be a database of
  // nobody's, left behind after the sign-out said everything was removed).
  let madeHere = false;
  db.on('populate', () => {
    madeHere = true;
  });
  try {
    await db.open();
    if (madeHere) {
      db.close();
      await db.delete();
      return 'no-access';
    }
    const access = await getMeta(db, ACCESS_KEY);
    if (!access?.token) return 'no-access';
    if ((await db.outbox.count()) === 0) return 'nothing-queued';
    const engine = new SyncEngine({
      db,
      fetch: deps.fetch,
      baseUrl: access.baseUrl,
      getToken: () => access.token,
      withLock: databaseLock(deps.locks, deps.database),
      requestTimeoutMs: 60_000,
    });
    const pushed = await engine.flushOnce();
    return pushed.kind === 'waiting' ? 'retry' : 'sent';
  } finally {
    db.close();
  }
}
