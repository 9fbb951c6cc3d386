// Writing what the server said into the mirror: the server copies and the visible rows, inside the
// caller's transaction (see `pullTables`). Shared by the listing, the scan and the change feed.
//
// Cost: a row with no pending work is shown exactly as the server has it, so its visible row is
// written straight from the object in hand (no re-read of what was just written, no projection).
// Only rows that pending operations mention go through `rebuildViews` (rebase.ts). `diff: true`
// compares with the stored copy first and writes only what changed (an unchanged pass writes
// nothing); a pass over an empty mirror skips that read (`diff: false`).
import type { Conversation, FileObject } from '../schemas';
import type { ConversationView, FileView, ParleyDb, ServerConversation, ServerFile } from './db';
import { loadPending, rebuildViews, type PendingIndex } from './rebase';

/** Every table a pull transaction touches. */
export function pullTables(db: ParleyDb) {
  return [db.conversations, db.files, db.serverConversations, db.serverFiles, db.outbox, db.fileScans, db.meta];
}

export interface StoreContext {
  db: ParleyDb;
  nowMs: number;
  /** Pending work, read once per transaction. */
  pending: PendingIndex;
}

export async function storeContext(db: ParleyDb, nowMs: number): Promise<StoreContext> {
  return { db, nowMs, pending: await loadPending(db) };
}

/** True when the stored server copy already holds exactly these server fields. */
export function sameFields<T extends object>(stored: object | undefined, fresh: T): boolean {
  if (!stored) return false;
  const row = stored as Record<string, unknown>;
  for (const [key, value] of Object.entries(fresh)) {
    if (row[key] !== value) return false;
  }
  return true;
}

/** Writes the conversations whose server copy changed (all of them without `diff`); returns their ids. */
export async function putConversations(ctx: StoreContext, page: readonly Conversation[], diff: boolean): Promise<string[]> {
  const { db, pending } = ctx;
  let rows: ServerConversation[] = page as ServerConversation[];
  if (diff) {
    const known = await db.serverConversations.bulkGet(page.map((c) => c.id));
    rows = page.filter((c, i) => !sameFields(known[i], c));
  }
  if (rows.length === 0) return [];
  await db.serverConversations.bulkPut(rows);
  const plain: ConversationView[] = [];
  const rebased: string[] = [];
  for (const c of rows) {
    if (pending.byEntity.has(c.id)) rebased.push(c.id);
    else plain.push({ ...c, syncState: 'synced' });
  }
  if (plain.length > 0) await db.conversations.bulkPut(plain);
  if (rebased.length > 0) await rebuildViews(db, { conversations: rebased }, ctx.nowMs, pending);
  return rows.map((c) => c.id);
}

/**
 * Writes files with the conversation each is in (`placement`: one id for all, a function per
 * file, or null = unknown here, keep what we knew). Only changed rows unless `diff` is false.
 */
export async function putFiles(
  ctx: StoreContext,
  page: readonly FileObject[],
  placement: string | null | ((file: FileObject) => string | null),
  diff: boolean,
): Promise<string[]> {
  const { db, pending } = ctx;
  const placeOf = typeof placement === 'function' ? placement : () => placement;
  const known = diff || placement === null ? await db.serverFiles.bulkGet(page.map((f) => f.id)) : null;
  const rows: ServerFile[] = [];
  page.forEach((f, i) => {
    const stored = known?.[i];
    const placedIn = placeOf(f) ?? stored?.conversationId ?? null;
    if (diff && stored && stored.conversationId === placedIn && sameFields(stored, f)) return;
    rows.push({ ...f, conversationId: placedIn });
  });
  if (rows.length === 0) return [];
  await db.serverFiles.bulkPut(rows);
  const plain: FileView[] = [];
  const rebased: string[] = [];
  for (const f of rows) {
    const hidden = f.conversationId !== null && pending.deletingConversations.has(f.conversationId);
    if (pending.byEntity.has(f.id) || hidden) rebased.push(f.id);
    else plain.push({ ...f, syncState: 'synced' });
  }
  if (plain.length > 0) await db.files.bulkPut(plain);
  if (rebased.length > 0) await rebuildViews(db, { files: rebased }, ctx.nowMs, pending);
  return rows.map((f) => f.id);
}

/**
 * The server no longer has these: drop their server copies (a conversation's files with it) and
 * visible rows — except what pending work still mentions, which stays until that work is settled
 * (the user sees their change and, if it fails, the server's answer). Returns the ids kept.
 */
export async function removeGone(ctx: StoreContext, gone: { conversations?: Iterable<string>; files?: Iterable<string> }): Promise<{ conversations: string[]; files: string[] }> {
  const { db, pending } = ctx;
  const kept = { conversations: [] as string[], files: [] as string[] };
  const conversations: string[] = [];
  for (const id of gone.conversations ?? []) (pending.mentioned.has(id) ? kept.conversations : conversations).push(id);
  const files: string[] = [];
  for (const id of gone.files ?? []) (pending.mentioned.has(id) ? kept.files : files).push(id);
  if (conversations.length > 0) {
    // Their files went with them on the server (the feed also sends each file's deletion).
    for (const id of await db.serverFiles.where('conversationId').anyOf(conversations).primaryKeys()) {
      if (pending.mentioned.has(id)) kept.files.push(id);
      else files.push(id);
    }
    await db.serverConversations.bulkDelete(conversations);
    await db.fileScans.bulkDelete(conversations);
  }
  if (files.length > 0) await db.serverFiles.bulkDelete(files);
  if (conversations.length > 0 || files.length > 0) {
    await rebuildViews(db, { conversations, files }, ctx.nowMs, pending);
  }
  return kept;
}
