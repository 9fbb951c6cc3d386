// The pull's saved state, as the page reads it for the first-sync progress line. A module of its
// own so the page does not load the pull (and the schemas it validates pages with) to show it.
import { getMeta, type ParleyDb } from './db';
import type { PullProgress, PullState } from './pull';

/** Meta key of the pull's state (apply.ts re-exports it for the sync side). */
export const PULL_KEY = 'pull';

export async function readPullState(db: ParleyDb): Promise<PullState> {
  return (await getMeta<PullState>(db, PULL_KEY)) ?? { passId: 0, phase: 'idle', startingAfter: null };
}

/** What a first sync (a pass that began on an empty mirror) has mirrored so far; null otherwise. */
export async function readFirstSyncProgress(db: ParleyDb): Promise<(PullProgress & { phase: PullState['phase'] }) | null> {
  const state = await readPullState(db);
  if (!state.fresh || state.phase === 'idle') return null;
  return { phase: state.phase, ...(state.progress ?? { conversations: 0, files: 0 }) };
}
