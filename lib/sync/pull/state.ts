// The pull's saved state (meta `pull`): its shape, and reading it. The page reads it for the
// first-sync progress line: a module of its own so the page does not load the pull (and the
// schemas it validates pages with) to show it.
import type { ParleyDb } from '../mirror/db';
import { getMeta } from '../mirror/meta';

/** Meta key of the pull's state. */
export const PULL_KEY = 'pull';

declare module '../mirror/meta' {
  interface MetaValues {
    pull: PullState;
  }
}

export interface PullCursor {
  /** Increases with every full pull; rows stamped with an older pass are candidates for the sweep. */
  passId: number;
  phase: 'conversations' | 'files' | 'scan' | 'idle';
  startingAfter: string | null;
}

/** The pull's saved state (meta `pull`). */
export interface PullState extends PullCursor {
  /** This pass began on an empty mirror: pages need no comparison with stored rows. */
  fresh?: boolean;
  /** Head of the change feed taken before this pass's listing: the feed cursor once it completes. */
  feedHead?: string | null;
  /** Rows written by this pass so far, for the progress line of a first sync. */
  progress?: PullProgress;
  /**
   * A first sync on a plain server: the active conversations' files are listed (placed) BEFORE the
   * files listing — 'before-files' while that runs, 'done' after it (see scanAllActive).
   */
  scanFirst?: 'before-files' | 'done';
}

export interface PullProgress {
  conversations: number;
  files: number;
  /** During the scan: files placed in their conversation so far, of `unplaced`. */
  placed?: number;
  unplaced?: number;
}

export async function readPullState(db: ParleyDb): Promise<PullState> {
  return (await getMeta(db, PULL_KEY)) ?? { passId: 0, phase: 'idle', startingAfter: null };
}

/** What a first sync (a pass that began on an empty mirror) has mirrored so far; null otherwise. */
export async function readFirstSyncProgress(db: ParleyDb): Promise<(PullProgress & { phase: PullState['phase'] }) | null> {
  const state = await readPullState(db);
  if (!state.fresh || state.phase === 'idle') return null;
  return { phase: state.phase, ...(state.progress ?? { conversations: 0, files: 0 }) };
}
