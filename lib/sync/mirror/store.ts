// Writing what the server said into the mirror: the visible rows (and, where pending work changes
// a row, its server copy), inside the caller's transaction (see `pullScope`, scopes.ts). Shared by the
// listing, the scan and the change feed.
//
// Cost: a row with no pending work is shown exactly as the server has it, so it is written once,
// as its visible row, straight from the object in hand: no server copy, no re-read, no projection
// (rebase.ts keeps copies only for rows pending work changes or hides). Only rows that pending
// operations mention go through `rebuildViews`. `diff: true` compares with what is stored first
// and writes only what changed (an unchanged pass writes nothing); a pass over an empty mirror
// skips that read (`diff: false`).
import type { Conversation, FileObject } from '../../schemas';
import type { ConversationView, FileView, ParleyDb, ServerConversation, ServerFile } from './db';
import { loadPending, rebuildViews, type PendingIndex } from './rebase';
import { serverWord } from './server-word';

export interface StoreContext {
  db: ParleyDb;
  nowMs: number;
  /** Pending work, read once per transaction. */
  pending: PendingIndex;
  /** Ids of the server copies kept (few: rows pending work changes or hides; rebase.ts). */
  copies: { conversations: Set<string>; files: Set<string> };
}

export async function storeContext(db: ParleyDb, nowMs: number): Promise<StoreContext> {
  const [pending, conversations, files] = await Promise.all([
    loadPending(db),
    db.serverConversations.toCollection().primaryKeys(),
    db.serverFiles.toCollection().primaryKeys(),
  ]);
  return { db, nowMs, pending, copies: { conversations: new Set(conversations), files: new Set(files) } };
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

/** Writes the conversations the server changed (all of them without `diff`); returns their ids. */
export async function putConversations(ctx: StoreContext, page: readonly Conversation[], diff: boolean): Promise<string[]> {
  const { db, pending, copies } = ctx;
  let rows: readonly ServerConversation[] = page;
  if (diff) {
    const known = (await serverWord(db.serverConversations, db.conversations, page.map((c) => c.id), copies.conversations)).rows;
    rows = page.filter((c, i) => !sameFields(known[i], c));
  }
  if (rows.length === 0) return [];
  // One row per record where nothing is pending (the initial sync's case); a copy, rebased, where
  // pending work changes what is shown.
  const plain: ConversationView[] = [];
  const rebased: ServerConversation[] = [];
  const stale: string[] = [];
  for (const c of rows) {
    if (pending.byEntity.has(c.id)) rebased.push(c);
    else {
      plain.push({ ...c, syncState: 'synced' });
      if (copies.conversations.has(c.id)) stale.push(c.id);
    }
  }
  if (plain.length > 0) await db.conversations.bulkPut(plain);
  if (stale.length > 0) {
    await db.serverConversations.bulkDelete(stale);
    for (const id of stale) copies.conversations.delete(id);
  }
  if (rebased.length > 0) {
    await db.serverConversations.bulkPut(rebased);
    for (const c of rebased) copies.conversations.add(c.id);
    await rebuildViews(db, { conversations: rebased.map((c) => c.id) }, ctx.nowMs, pending);
  }
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
  const { db, pending, copies } = ctx;
  const placeOf = typeof placement === 'function' ? placement : () => placement;
  const known =
    diff || placement === null ? (await serverWord(db.serverFiles, db.files, page.map((f) => f.id), copies.files)).rows : null;
  const rows: ServerFile[] = [];
  page.forEach((f, i) => {
    const stored = known?.[i];
    const placedIn = placeOf(f) ?? stored?.conversationId ?? null;
    if (diff && stored && stored.conversationId === placedIn && sameFields(stored, f)) return;
    rows.push({ ...f, conversationId: placedIn });
  });
  if (rows.length === 0) return [];
  const plain: FileView[] = [];
  const rebased: ServerFile[] = [];
  const stale: string[] = [];
  for (const f of rows) {
    const hidden = f.conversationId !== null && pending.deletingConversations.has(f.conversationId);
    if (pending.byEntity.has(f.id) || hidden) rebased.push(f);
    else {
      plain.push({ ...f, syncState: 'synced' });
      if (copies.files.has(f.id)) stale.push(f.id);
    }
  }
  if (plain.length > 0) await db.files.bulkPut(plain);
  if (stale.length > 0) {
    await db.serverFiles.bulkDelete(stale);
    for (const id of stale) copies.files.delete(id);
  }
  if (rebased.length > 0) {
    await db.serverFiles.bulkPut(rebased);
    for (const f of rebased) copies.files.add(f.id);
    await rebuildViews(db, { files: rebased.map((f) => f.id) }, ctx.nowMs, pending);
  }
  return rows.map((f) => f.id);
}

/**
 * The server no longer has these rows: their server copies and visible rows go (both: a visible
 * row without a copy would stand in for it, rebase.ts). Nothing else is rebuilt: callers pass
 * only rows no pending work mentions.
 */
export async function forget(db: ParleyDb, gone: { conversations?: readonly string[]; files?: readonly string[] }): Promise<void> {
  const conversations = [...(gone.conversations ?? [])];
  const files = [...(gone.files ?? [])];
  if (conversations.length > 0) {
    await db.serverConversations.bulkDelete(conversations);
    await db.conversations.bulkDelete(conversations);
    await db.fileScans.bulkDelete(conversations);
  }
  if (files.length > 0) {
    await db.serverFiles.bulkDelete(files);
    await db.files.bulkDelete(files);
  }
}

/** Ids of the files the server has (as far as we know) in these conversations: kept copies and shown rows. */
export async function filesIn(db: ParleyDb, conversations: readonly string[]): Promise<string[]> {
  const ids = [...conversations];
  const [kept, shown] = await Promise.all([
    db.serverFiles.where('conversationId').anyOf(ids).primaryKeys(),
    db.files.where('conversationId').anyOf(ids).primaryKeys(),
  ]);
  return [...new Set([...kept, ...shown])];
}

/**
 * The server no longer has these: drop their server copies (a conversation's files with it) and
 * visible rows — except what pending work still mentions, which stays until that work is settled
 * (the user sees their change and, if it fails, the server's answer). Returns the ids kept.
 */
export async function removeGone(ctx: StoreContext, gone: { conversations?: Iterable<string>; files?: Iterable<string> }): Promise<{ conversations: string[]; files: string[] }> {
  const { db, pending } = ctx;
  const kept: { conversations: string[]; files: string[] } = { conversations: [], files: [] };
  const conversations: string[] = [];
  for (const id of gone.conversations ?? []) (pending.mentioned.has(id) ? kept.conversations : conversations).push(id);
  const files: string[] = [];
  for (const id of gone.files ?? []) (pending.mentioned.has(id) ? kept.files : files).push(id);
  if (conversations.length > 0) {
    // Their files went with them on the server (the feed also sends each file's deletion).
    for (const id of await filesIn(db, conversations)) {
      if (pending.mentioned.has(id)) kept.files.push(id);
      else files.push(id);
    }
  }
  await forget(db, { conversations, files });
  for (const id of conversations) ctx.copies.conversations.delete(id);
  for (const id of files) ctx.copies.files.delete(id);
  return kept;
}
