// Pull: bring the server's state into the mirror in the background.
//
// A pass pages through /v1/conversations, then /v1/files (limit=100, starting_after until
// has_more is false). Each page is written — server copies, rebuilt visible rows (pending work
// rebased on top) and the advanced cursor — in ONE transaction, so an interrupted pass resumes
// where it stopped and never skips a page. Only rows whose server object actually changed are
// written (and only their visible rows rebuilt): a pass over an unchanged mirror writes nothing
// but the cursor.
//
// Sweep: the ids of a list are collected in memory while it is paged from its first page to its
// last without interruption; at its end, stored rows of that list not among them are gone from
// the server and are swept (in the last page's transaction), unless a pending operation still
// mentions them. A list resumed from a cursor (interrupted earlier) is not swept: the next
// complete listing does it.
//
// The file object does not say its conversation, so a "scan" phase lists files per
// conversation (GET /v1/files?conversation_id=) — only while some file's conversation is
// unknown, only conversations whose last_active_at moved since their last complete listing
// (an upload raises it) first, and stopping as soon as every file is placed. A file whose
// conversation is known is never asked about again. The set of unplaced files is read once per
// scan (keys only) and shrunk in memory as listings place files.
import { ConversationPage, FilePage, type Conversation, type FileObject } from '../schemas';
import { allTables, PULL_KEY, type PullCursor } from './apply';
import { getMeta, type ParleyDb, type ServerConversation, type ServerFile } from './db';
import { call, type HttpDeps, type Outcome } from './http';
import { loadPending, rebuildViews } from './rebase';

export const PAGE_LIMIT = 100;

export interface PullDeps extends HttpDeps {
  db: ParleyDb;
  now: () => number;
}

export type PullResult = { kind: 'done' } | Exclude<Outcome<unknown>, { kind: 'ok' }>;

export async function pull(deps: PullDeps): Promise<PullResult> {
  const { db } = deps;
  let cursor = (await getMeta<PullCursor>(db, PULL_KEY)) ?? { passId: 0, phase: 'idle', startingAfter: null };
  if (cursor.phase === 'idle') {
    cursor = { passId: cursor.passId + 1, phase: 'conversations', startingAfter: null };
    await db.meta.put({ key: PULL_KEY, value: cursor });
  }
  // Ids listed so far by the current list, when it started from its first page in this call.
  let seen: Set<string> | null = null;
  let listing: PullCursor['phase'] | null = null;
  for (;;) {
    if (cursor.phase === 'conversations' || cursor.phase === 'files') {
      if (listing !== cursor.phase || cursor.startingAfter === null) {
        // A new list (or a restart of it): a sweep is sound only if we see it from the start.
        listing = cursor.phase;
        seen = cursor.startingAfter === null ? new Set() : null;
      }
      const result = await pullPage(deps, cursor, seen);
      if (result.kind !== 'ok') return result;
      cursor = result.value;
    } else if (cursor.phase === 'scan') {
      const result = await scanUnplacedFiles(deps, cursor.passId);
      if (result.kind !== 'done') return result;
      cursor = { ...cursor, phase: 'idle', startingAfter: null };
      await db.meta.put({ key: PULL_KEY, value: cursor });
    } else {
      return { kind: 'done' };
    }
  }
}

/** Fetches and stores one page of the current list; returns the advanced cursor. */
async function pullPage(deps: PullDeps, cursor: PullCursor, seen: Set<string> | null): Promise<Outcome<PullCursor>> {
  const isConversations = cursor.phase === 'conversations';
  const query = { limit: PAGE_LIMIT, starting_after: cursor.startingAfter ?? undefined };
  const out = isConversations
    ? await call(deps, { method: 'GET', path: 'v1/conversations', query }, ConversationPage)
    : await call(deps, { method: 'GET', path: 'v1/files', query }, FilePage);
  if (out.kind === 'refused' && out.status === 400 && cursor.startingAfter !== null) {
    // The item we resume after was deleted meanwhile: restart this list within the same pass.
    const restarted: PullCursor = { ...cursor, startingAfter: null };
    await deps.db.meta.put({ key: PULL_KEY, value: restarted });
    return { kind: 'ok', value: restarted, replayed: false, serverTime: null };
  }
  if (out.kind !== 'ok') return out;

  const page = out.value;
  const last = page.data.at(-1);
  const next: PullCursor =
    page.has_more && last
      ? { ...cursor, startingAfter: last.id }
      : { ...cursor, phase: isConversations ? 'files' : 'scan', startingAfter: null };
  for (const item of page.data) seen?.add(item.id);
  const { db } = deps;
  await db.transaction('rw', allTables(db), async () => {
    if (isConversations) await storeConversations(db, page.data as Conversation[], deps.now());
    else await storeFiles(db, page.data as FileObject[], null, deps.now());
    if (next.phase !== cursor.phase && seen) await sweep(db, isConversations ? 'conversations' : 'files', seen, deps.now());
    await db.meta.put({ key: PULL_KEY, value: next });
  });
  return { ...out, value: next };
}

/** True when the stored server copy already holds exactly these server fields. */
function sameFields<T extends object>(stored: object | undefined, fresh: T): boolean {
  if (!stored) return false;
  const row = stored as Record<string, unknown>;
  for (const [key, value] of Object.entries(fresh)) {
    if (row[key] !== value) return false;
  }
  return true;
}

/** Writes the conversations whose server copy changed; returns their ids. */
export async function storeConversations(db: ParleyDb, page: Conversation[], nowMs: number): Promise<string[]> {
  const known = await db.serverConversations.bulkGet(page.map((c) => c.id));
  const rows: ServerConversation[] = [];
  page.forEach((c, i) => {
    if (!sameFields(known[i], c)) rows.push(c);
  });
  if (rows.length === 0) return [];
  await db.serverConversations.bulkPut(rows);
  const ids = rows.map((c) => c.id);
  await rebuildViews(db, { conversations: ids }, nowMs);
  return ids;
}

/**
 * Writes the files whose server copy (or known conversation) changed; returns their ids.
 * `conversationId` null = not known from this listing: keep what we knew.
 */
export async function storeFiles(
  db: ParleyDb,
  page: FileObject[],
  conversationId: string | null,
  nowMs: number,
): Promise<string[]> {
  const known = await db.serverFiles.bulkGet(page.map((f) => f.id));
  const rows: ServerFile[] = [];
  page.forEach((f, i) => {
    const stored = known[i];
    const placedIn = conversationId ?? stored?.conversationId ?? null;
    if (stored && stored.conversationId === placedIn && sameFields(stored, f)) return;
    rows.push({ ...f, conversationId: placedIn });
  });
  if (rows.length === 0) return [];
  await db.serverFiles.bulkPut(rows);
  const ids = rows.map((f) => f.id);
  await rebuildViews(db, { files: ids }, nowMs);
  return ids;
}

/** Remove what a complete listing (`seen`) did not contain, except what pending work still needs. */
async function sweep(db: ParleyDb, list: 'conversations' | 'files', seen: Set<string>, nowMs: number) {
  const table = list === 'conversations' ? db.serverConversations : db.serverFiles;
  const missing = (await table.toCollection().primaryKeys()).filter((id) => !seen.has(id));
  if (missing.length === 0) return;
  const pending = await loadPending(db);
  const stale = missing.filter((id) => !pending.mentioned.has(id));
  if (stale.length === 0) return;
  await table.bulkDelete(stale);
  if (list === 'conversations') {
    await db.fileScans.bulkDelete(stale);
    await rebuildViews(db, { conversations: stale }, nowMs, pending);
  } else {
    await rebuildViews(db, { files: stale }, nowMs, pending);
  }
}

interface ScanState {
  passId: number;
  /** Files whose conversation is still unknown; shrinks as listings place them. */
  unplaced: Set<string>;
}

/**
 * Ids of server files whose conversation is unknown. IndexedDB does not index null, so these are
 * all keys minus the keys the conversationId index holds (keys only: no row is read).
 */
export async function unplacedFileIds(db: ParleyDb): Promise<Set<string>> {
  return db.transaction('r', db.serverFiles, async () => {
    const unplaced = new Set(await db.serverFiles.toCollection().primaryKeys());
    if (unplaced.size === 0) return unplaced;
    for (const id of await db.serverFiles.orderBy('conversationId').primaryKeys()) unplaced.delete(id);
    return unplaced;
  });
}

/** Learns the conversation of every file that has none yet. */
async function scanUnplacedFiles(deps: PullDeps, passId: number): Promise<PullResult> {
  const { db } = deps;
  const state: ScanState = { passId, unplaced: await unplacedFileIds(db) };
  if (state.unplaced.size === 0) return { kind: 'done' };

  const conversations = (await db.serverConversations.toArray()).sort(
    (a, b) => (b.last_active_at ?? 0) - (a.last_active_at ?? 0),
  );
  const scans = new Map((await db.fileScans.toArray()).map((s) => [s.conversationId, s]));
  // last_active_at null: nothing ever happened in it, so it holds no file.
  const moved = conversations.filter((c) => c.last_active_at !== null && scans.get(c.id)?.lastActiveAt !== c.last_active_at);
  const movedIds = new Set(moved.map((c) => c.id));
  // Fallback, once per pass: an upload in the same second as a listing leaves last_active_at
  // unchanged, so if files remain unplaced, list the rest too.
  const rest = conversations.filter((c) => !movedIds.has(c.id) && scans.get(c.id)?.passId !== passId);
  for (const conversation of [...moved, ...rest]) {
    if (state.unplaced.size === 0) return { kind: 'done' };
    const result = await listConversationFiles(deps, conversation, state);
    if (result.kind !== 'done') return result;
  }
  return { kind: 'done' };
}

/** Lists one conversation's files completely, then stores them (and the scan record) in one transaction. */
async function listConversationFiles(deps: PullDeps, conversation: Conversation, state: ScanState): Promise<PullResult> {
  const { db } = deps;
  const listed: FileObject[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const out = await call(
      deps,
      { method: 'GET', path: 'v1/files', query: { conversation_id: conversation.id, limit: PAGE_LIMIT, starting_after: startingAfter } },
      FilePage,
    );
    // Deleted since we listed conversations (404), or its list changed under us (400): skip it.
    if (out.kind === 'refused' && (out.status === 404 || out.status === 400)) break;
    if (out.kind !== 'ok') {
      // Keep what was learned so far; the conversation is listed again next time.
      if (listed.length > 0) await storeListing(deps, conversation, listed, state, false);
      return out;
    }
    const page = out.value;
    listed.push(...page.data);
    if (!page.has_more || page.data.length === 0) {
      await storeListing(deps, conversation, listed, state, true);
      return { kind: 'done' };
    }
    startingAfter = page.data.at(-1)!.id;
  }
  if (listed.length > 0) await storeListing(deps, conversation, listed, state, false);
  return { kind: 'done' };
}

async function storeListing(deps: PullDeps, conversation: Conversation, files: FileObject[], state: ScanState, complete: boolean) {
  const { db } = deps;
  await db.transaction('rw', allTables(db), async () => {
    await storeFiles(db, files, conversation.id, deps.now());
    if (complete) {
      await db.fileScans.put({ conversationId: conversation.id, lastActiveAt: conversation.last_active_at, passId: state.passId });
    }
  });
  for (const file of files) state.unplaced.delete(file.id);
}
