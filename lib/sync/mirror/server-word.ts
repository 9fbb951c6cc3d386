// The server's last word on a row, as this mirror holds it: the kept server copy where pending
// work changes or hides the row (rebase.ts), else the visible row when it is `synced` (shown
// exactly as the server has it). Undefined: not on the server as far as we know (a local create,
// or gone). One definition, read by the rebuild, the pull's diff, the scan, answers and the sweep.
import type { SyncState } from './db';

interface Rows<T> {
  bulkGet(ids: string[]): Promise<(T | undefined)[]>;
}

/** The visible row without its sync state, when it is the server's word (synced). */
export function asServerRow<T extends { syncState: SyncState }>(row: T | undefined): Omit<T, 'syncState'> | undefined {
  if (!row || row.syncState !== 'synced') return undefined;
  const { syncState: _state, ...server } = row;
  return server;
}

/**
 * The server's word on these ids, in order; `copied[i]`: it came from a kept copy. `withCopies`,
 * when the caller knows which ids have a copy, spares reading the copies of the others.
 */
export async function serverWord<S, V extends { syncState: SyncState }>(
  copies: Rows<S>,
  visible: Rows<V>,
  ids: string[],
  withCopies?: ReadonlySet<string>,
): Promise<{ rows: (S | Omit<V, 'syncState'> | undefined)[]; copied: boolean[] }> {
  let kept: (S | undefined)[];
  if (withCopies) {
    const asked = ids.filter((id) => withCopies.has(id));
    const found = asked.length > 0 ? await copies.bulkGet(asked) : [];
    const byId = new Map(asked.map((id, i) => [id, found[i]]));
    kept = ids.map((id) => byId.get(id));
  } else {
    kept = await copies.bulkGet(ids);
  }
  const missing = ids.filter((_, i) => kept[i] === undefined);
  const shown = missing.length > 0 ? await visible.bulkGet(missing) : [];
  let next = 0;
  return { rows: kept.map((copy) => copy ?? asServerRow(shown[next++])), copied: kept.map((copy) => copy !== undefined) };
}

/** Every row the server has, as far as this mirror knows: all copies, and synced rows without one. */
export function wholeServerWord<S extends { id: string }, V extends { id: string; syncState: SyncState }>(
  kept: readonly S[],
  shown: readonly V[],
): (S | Omit<V, 'syncState'>)[] {
  const copied = new Set(kept.map((row) => row.id));
  const settled: Omit<V, 'syncState'>[] = [];
  for (const row of shown) {
    const server = copied.has(row.id) ? undefined : asServerRow(row);
    if (server) settled.push(server);
  }
  return [...kept, ...settled];
}
