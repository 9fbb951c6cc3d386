// Pull: bring the server's state into the mirror in the background.
//
// A pass pages through /v1/conversations, then /v1/files (limit=100, starting_after until
// has_more is false). Each page is written — server copies, rebuilt visible rows (pending work
// rebased on top) and the advanced cursor — in ONE transaction, so an interrupted pass resumes
// where it stopped and never skips a page. Every row written is stamped with the pass id; when a
// list is complete, rows of that list with an older stamp are gone from the server and are
// swept, unless a pending operation still mentions them.
//
// The file object does not say its conversation, so a "scan" phase lists files per
// conversation (GET /v1/files?conversation_id=) — only while some file's conversation is
// unknown, only conversations whose last_active_at moved since their last complete listing
// (an upload raises it) first, and stopping as soon as every file is placed. A file whose
// conversation is known is never asked about again.
import { ConversationPage, FilePage, type Conversation, type FileObject } from '../schemas';
import { allTables, PULL_KEY, type PullCursor } from './apply';
import { getMeta, type ParleyDb, type ServerFile } from './db';
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
  for (;;) {
    if (cursor.phase === 'conversations' || cursor.phase === 'files') {
      const result = await pullPage(deps, cursor);
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
async function pullPage(deps: PullDeps, cursor: PullCursor): Promise<Outcome<PullCursor>> {
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
  const { db } = deps;
  await db.transaction('rw', allTables(db), async () => {
    if (isConversations) await storeConversations(db, page.data as Conversation[], cursor.passId, deps.now());
    else await storeFiles(db, page.data as FileObject[], null, cursor.passId, deps.now());
    if (next.phase !== cursor.phase) await sweep(db, isConversations ? 'conversations' : 'files', cursor.passId, deps.now());
    await db.meta.put({ key: PULL_KEY, value: next });
  });
  return { ...out, value: next };
}

async function storeConversations(db: ParleyDb, page: Conversation[], passId: number, nowMs: number) {
  await db.serverConversations.bulkPut(page.map((c) => ({ ...c, seenInPass: passId })));
  await rebuildViews(db, { conversations: page.map((c) => c.id) }, nowMs);
}

/** `conversationId` null = not known from this listing: keep what we knew. */
async function storeFiles(db: ParleyDb, page: FileObject[], conversationId: string | null, passId: number, nowMs: number) {
  const known = await db.serverFiles.bulkGet(page.map((f) => f.id));
  const rows: ServerFile[] = page.map((f, i) => ({
    ...f,
    conversationId: conversationId ?? known[i]?.conversationId ?? null,
    seenInPass: passId,
  }));
  await db.serverFiles.bulkPut(rows);
  await rebuildViews(db, { files: page.map((f) => f.id) }, nowMs);
}

/** Remove what a complete listing did not contain, except what pending work still needs. */
async function sweep(db: ParleyDb, list: 'conversations' | 'files', passId: number, nowMs: number) {
  const pending = await loadPending(db);
  const table = list === 'conversations' ? db.serverConversations : db.serverFiles;
  const stale = (await table.where('seenInPass').below(passId).primaryKeys()).filter((id) => !pending.mentioned.has(id));
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
}

/** Learns the conversation of every file that has none yet. */
async function scanUnplacedFiles(deps: PullDeps, passId: number): Promise<PullResult> {
  const { db } = deps;
  const unplaced = async () => (await db.serverFiles.filter((f) => f.conversationId === null).count()) > 0;
  if (!(await unplaced())) return { kind: 'done' };

  const conversations = (await db.serverConversations.toArray()).sort(
    (a, b) => (b.last_active_at ?? 0) - (a.last_active_at ?? 0),
  );
  const scans = new Map((await db.fileScans.toArray()).map((s) => [s.conversationId, s]));
  // last_active_at null: nothing ever happened in it, so it holds no file.
  const moved = conversations.filter((c) => c.last_active_at !== null && scans.get(c.id)?.lastActiveAt !== c.last_active_at);
  // Fallback, once per pass: an upload in the same second as a listing leaves last_active_at
  // unchanged, so if files remain unplaced, list the rest too.
  const rest = conversations.filter((c) => !moved.includes(c) && scans.get(c.id)?.passId !== passId);
  const state: ScanState = { passId };
  for (const conversation of [...moved, ...rest]) {
    if (!(await unplaced())) return { kind: 'done' };
    const result = await listConversationFiles(deps, conversation, state);
    if (result.kind !== 'done') return result;
  }
  return { kind: 'done' };
}

async function listConversationFiles(deps: PullDeps, conversation: Conversation, state: ScanState): Promise<PullResult> {
  const { db } = deps;
  let startingAfter: string | undefined;
  for (;;) {
    const out = await call(
      deps,
      { method: 'GET', path: 'v1/files', query: { conversation_id: conversation.id, limit: PAGE_LIMIT, starting_after: startingAfter } },
      FilePage,
    );
    // Deleted since we listed conversations (404), or its list changed under us (400): skip it.
    if (out.kind === 'refused' && (out.status === 404 || out.status === 400)) return { kind: 'done' };
    if (out.kind !== 'ok') return out;
    const page = out.value;
    const finished = !page.has_more || page.data.length === 0;
    await db.transaction('rw', allTables(db), async () => {
      await storeFiles(db, page.data, conversation.id, state.passId, deps.now());
      if (finished) {
        await db.fileScans.put({ conversationId: conversation.id, lastActiveAt: conversation.last_active_at, passId: state.passId });
      }
    });
    if (finished) return { kind: 'done' };
    startingAfter = page.data.at(-1)!.id;
  }
}
