// The page's reads of the mirror, by name: what a screen asks for ("this conversation", "its
// files"), not which table and index answer it. A screen (app/, lib/view, lib/offline) calls these
// through page.ts instead of querying the tables itself, so a change of schema or of where a fact
// lives (the server's word: server-word.ts) is made here once. The windowed lists and the search
// are lib/view/windows.ts's, on the indexes list-keys.ts keeps.
import type { ConversationView, FileView, IdAlias, ParleyDb } from './db';

/** The conversation as shown (undefined: none here, or a temp id since replaced: `aliasOf`). */
export function conversationById(db: ParleyDb, id: string): Promise<ConversationView | undefined> {
  return db.conversations.get(id);
}

/** The file as shown (undefined: none here, or a temp id since replaced: `aliasOf`). */
export function fileById(db: ParleyDb, id: string): Promise<FileView | undefined> {
  return db.files.get(id);
}

/** A temp id's replacement once its create was replayed (undefined: not a replaced temp id). */
export function aliasOf(db: ParleyDb, id: string): Promise<IdAlias | undefined> {
  return db.idAliases.get(id);
}

/** Every file of one conversation, in no particular order. */
export function filesOfConversation(db: ParleyDb, conversationId: string): Promise<FileView[]> {
  return db.files.where('conversationId').equals(conversationId).toArray();
}

/** Every file of these conversations, in no particular order. */
export function filesOfConversations(db: ParleyDb, conversationIds: Iterable<string>): Promise<FileView[]> {
  const ids = [...conversationIds];
  return ids.length === 0 ? Promise.resolve([]) : db.files.where('conversationId').anyOf(ids).toArray();
}

/** The conversations of these ids that are here, in the order asked. */
export async function conversationsByIds(db: ParleyDb, ids: readonly string[]): Promise<ConversationView[]> {
  return (await db.conversations.bulkGet([...ids])).filter((c) => c !== undefined);
}

/** Every conversation shown. */
export function allConversations(db: ParleyDb): Promise<ConversationView[]> {
  return db.conversations.toArray();
}

/** The pinned conversations. */
export function pinnedConversations(db: ParleyDb): Promise<ConversationView[]> {
  return db.conversations.filter((c) => c.is_pinned).toArray();
}

/** Whether any conversation is shown (one key read). */
export async function hasConversations(db: ParleyDb): Promise<boolean> {
  return (await db.conversations.limit(1).count()) > 0;
}

/** How many files are shown. */
export function fileCount(db: ParleyDb): Promise<number> {
  return db.files.count();
}

/** How many changes are queued and not yet accepted by the server (failed ones included). */
export function queuedChangeCount(db: ParleyDb): Promise<number> {
  return db.outbox.count();
}

/** Nothing stored at all: no state, no queued change, no conversation (shown or kept). */
export async function mirrorIsEmpty(db: ParleyDb): Promise<boolean> {
  const counts = await Promise.all([db.meta.count(), db.outbox.count(), db.serverConversations.count(), db.conversations.count()]);
  return counts.every((n) => n === 0);
}
