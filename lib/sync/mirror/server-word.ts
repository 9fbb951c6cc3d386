// The server's last word on a row, as this mirror holds it: the kept server copy where pending
// work changes or hides the row (rebase.ts), else the visible row when it is `synced` (shown
// exactly as the server has it). Undefined: not on the server as far as we know (a local create,
// or gone). One definition, read by the rebuild, the pull's diff, the scan, answers, the sweep,
// the identity probe and the failed changes' names: nothing else reads the copy tables
// (`serverConversations`, `serverFiles`) to learn what the server has.
import type { ConversationView, FileView, ParleyDb, ServerConversation, ServerFile, SyncState } from './db';
import { isTempId, TEMP_PREFIX } from './blocking';

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

// ---- Bound to the mirror's tables. ----

/** Every conversation the server has, as far as this mirror knows. */
export async function serverConversationRows(db: ParleyDb): Promise<ServerConversation[]> {
  // Whole tables read with getAll (a filtered cursor costs a round trip per row).
  const [kept, shown] = await Promise.all([db.serverConversations.toArray(), db.conversations.toArray()]);
  return wholeServerWord(kept, shown);
}

/** The server's last word on these conversations (undefined: not known to be on the server). */
export async function serverConversationWord(db: ParleyDb, ids: string[]): Promise<(ServerConversation | undefined)[]> {
  return (await serverWord(db.serverConversations, db.conversations, ids)).rows;
}

/** The server's last word on these files (undefined: not known to be on the server). */
export async function serverFileRows(db: ParleyDb, ids: string[]): Promise<(ServerFile | undefined)[]> {
  return (await serverWord(db.serverFiles, db.files, ids)).rows;
}

/**
 * The server's word on a row where it has one, else the row as this device shows it (a local
 * create's own fields): what the user knows the row by, before a pending change (a rename's new
 * name) — the failed changes dialog names rows this way.
 */
export async function knownConversation(db: ParleyDb, id: string): Promise<ServerConversation | ConversationView | undefined> {
  return (await serverConversationWord(db, [id]))[0] ?? (await db.conversations.get(id));
}

/** The same for a file. */
export async function knownFile(db: ParleyDb, id: string): Promise<ServerFile | FileView | undefined> {
  return (await serverFileRows(db, [id]))[0] ?? (await db.files.get(id));
}

/** Ids of every server row this mirror knows (for the sweep): copies, and visible rows not local. */
export async function knownServerIds(db: ParleyDb, list: 'conversations' | 'files'): Promise<string[]> {
  const [kept, shown] =
    list === 'conversations'
      ? await Promise.all([db.serverConversations.toCollection().primaryKeys(), db.conversations.toCollection().primaryKeys()])
      : await Promise.all([db.serverFiles.toCollection().primaryKeys(), db.files.toCollection().primaryKeys()]);
  return [...new Set([...kept, ...shown.filter((id) => !isTempId(id))])];
}

/** Up to `count` ids of conversations the server gave this database (never `local_` temp ids). */
export async function someServerConversationIds(db: ParleyDb, count: number): Promise<string[]> {
  const kept: string[] = await db.serverConversations.limit(count).primaryKeys();
  if (kept.length >= count) return kept;
  const shown: string[] = await db.conversations
    .filter((c) => asServerRow(c) !== undefined && !kept.includes(c.id))
    .limit(count - kept.length)
    .primaryKeys();
  return [...kept, ...shown];
}

/**
 * Nothing from the server is stored yet (only the user's own creates, if any). A row from the
 * server is either a kept copy or a visible row with a real id; counts only, no row is read.
 */
export async function holdsNoServerWord(db: ParleyDb): Promise<boolean> {
  if ((await db.serverConversations.count()) + (await db.serverFiles.count()) > 0) return false;
  for (const table of [db.conversations, db.files] as const) {
    if ((await table.count()) !== (await table.where(':id').startsWith(TEMP_PREFIX).count())) return false;
  }
  return true;
}

/**
 * Ids of server files whose conversation is unknown, among the kept copies and the visible rows.
 * IndexedDB does not index null, so these are all keys minus the keys the conversationId index
 * holds (keys only: no row is read).
 */
export async function unplacedFileIds(db: ParleyDb): Promise<Set<string>> {
  return db.transaction('r', db.serverFiles, db.files, async () => {
    const unplaced = new Set<string>();
    for (const table of [db.serverFiles, db.files] as const) {
      const keys = await table.toCollection().primaryKeys();
      if (keys.length === 0) continue;
      const placed = new Set(await table.orderBy('conversationId').primaryKeys());
      for (const id of keys) if (!placed.has(id)) unplaced.add(id);
    }
    return unplaced;
  });
}
