// Sync status for the UI. Kept in Dexie, not in memory, so every tab sees the one worker's
// view (read it with a live query: `useLiveQuery(() => readSyncStatus(db))`).
import type { ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import { blockedOpIds } from '../mirror/blocking';
import { isBookkeeping } from '../mirror/bookkeeping';
import type { OpError, OpKind } from '../outbox/operations';
import { readFirstSyncProgress } from '../pull/state';

export const STATUS_KEY = 'status';

/**
 * Set when this database was found cleared by the browser and pulled again (lib/view/mirror.ts);
 * removed when the user dismisses the notice. Until then the status never reads "all synced" if
 * queued changes were lost with it.
 */
export const MIRROR_CLEARED_KEY = 'mirror-cleared';

declare module '../mirror/meta' {
  interface MetaValues {
    status: StoredStatus;
    'mirror-cleared': MirrorCleared;
  }
}

export interface MirrorCleared {
  /** When it was found cleared (ms). */
  at: number;
  /** Changes queued on this device that were lost with it (as last recorded outside it). */
  lostChanges: number;
}

export interface StoredStatus {
  /** False after a request could not reach the server (or the browser says offline); true again once bytes move or an answer comes. */
  online: boolean;
  /** The browser says there is no network (navigator.onLine, its `offline` event): "Offline", not "Server unreachable". */
  noNetwork: boolean;
  syncing: boolean;
  /** The server said 401: sync is paused until the user signs in again. */
  needsSignIn: boolean;
  /**
   * The server said 401 device_wiped: the organisation revoked this device's token with wipe. The
   * page erases everything of the user on this device at once, without asking (session.ts).
   */
  deviceWiped: boolean;
  /** End of the last sync that pushed everything it could and completed a pull pass (ms). */
  lastSyncAt: number | null;
  /** The last retryable problem (network, 5xx, 429), for a tooltip; null once a sync succeeds. */
  lastError: string | null;
  /** When the engine will try again after a retryable failure (ms), if it is waiting. */
  nextRetryAt: number | null;
  /**
   * The stuck-queue watchdog (engine.ts): changes are pending and the server reachable, but
   * nothing has been sent since `since` (ms), for longer than the engine's limit; `error` is
   * the last error met. Null when the queue moves, is empty, or the device is offline.
   */
  stalled: { since: number; error: string | null } | null;
}

export interface FailedOperation {
  opId: string;
  kind: OpKind;
  entityId: string;
  error: OpError | null;
  /** True when it did not fail itself but waits on a failed operation it depends on. */
  blocked: boolean;
}

export interface SyncStatus extends StoredStatus {
  /** The user's changes not yet confirmed by the server (failed ones and the app's bookkeeping excluded). */
  pendingCount: number;
  failed: FailedOperation[];
  /** The browser cleared this device's copy (see MIRROR_CLEARED_KEY); null normally. */
  mirrorCleared: MirrorCleared | null;
  /**
   * A first sync (a pass begun on an empty mirror) not complete yet: what it has mirrored so far.
   * Read with the rest, so the progress line and the pill are one fact (statusLabel).
   */
  firstSync: Awaited<ReturnType<typeof readFirstSyncProgress>>;
}

export const INITIAL_STATUS: StoredStatus = {
  online: true,
  noNetwork: false,
  syncing: false,
  needsSignIn: false,
  deviceWiped: false,
  lastSyncAt: null,
  lastError: null,
  nextRetryAt: null,
  stalled: null,
};

export async function readSyncStatus(db: ParleyDb): Promise<SyncStatus> {
  return db.transaction('r', db.meta, db.outbox, async () => {
    const stored = { ...INITIAL_STATUS, ...(await getMeta(db, STATUS_KEY)) };
    const ordered = await db.outbox.orderBy('seq').toArray();
    const blocked = blockedOpIds(ordered);
    // The app's bookkeeping (bookkeeping.ts) is not the user's change: never counted as pending,
    // nor listed as waiting on a failed change. One that failed (stored before refusals dropped it)
    // is listed: it holds up the conversation's later changes until it is discarded.
    const stuck = ordered.filter((op) => op.state === 'failed' || (blocked.has(op.id) && !isBookkeeping(op.body)));
    return {
      ...stored,
      mirrorCleared: (await getMeta(db, MIRROR_CLEARED_KEY)) ?? null,
      firstSync: await readFirstSyncProgress(db),
      pendingCount: ordered.filter((op) => op.state !== 'failed' && !blocked.has(op.id) && !isBookkeeping(op.body)).length,
      failed: stuck.map((op) => ({
        opId: op.id,
        kind: op.body.kind,
        entityId: op.entityId,
        error: op.state === 'failed' ? op.error : null,
        blocked: op.state !== 'failed',
      })),
    };
  });
}

export async function updateStatus(db: ParleyDb, change: Partial<StoredStatus>): Promise<StoredStatus> {
  return db.transaction('rw', db.meta, async () => {
    const next = { ...INITIAL_STATUS, ...(await getMeta(db, STATUS_KEY)), ...change };
    await setMeta(db, STATUS_KEY, next);
    return next;
  });
}
