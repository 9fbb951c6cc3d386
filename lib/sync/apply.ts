// Writing the server's answers into the mirror, each in one transaction with the outbox change
// that goes with it: an answered operation leaves the outbox in the same commit that records
// its effect, so a crash in between can neither lose the effect nor replay it.
import type { Conversation, FileObject } from '../schemas';
import { getMeta, type ParleyDb } from './db';
import { mentionedIds, remapOp, type OutboxOp } from './operations';
import { rebuildViews } from './rebase';

export interface PullCursor {
  /** Increases with every full pull; rows stamped with an older pass are candidates for the sweep. */
  passId: number;
  phase: 'conversations' | 'files' | 'scan' | 'idle';
  startingAfter: string | null;
}

export const PULL_KEY = 'pull';
export const IDEMPOTENCY_KEY = 'serverIdempotency';
/** Set when the server refused last_opened_at as an unknown parameter (a brief-only server). */
export const NO_LAST_OPENED_KEY = 'serverLacksLastOpened';

export function allTables(db: ParleyDb) {
  return [
    db.conversations,
    db.files,
    db.serverConversations,
    db.serverFiles,
    db.outbox,
    db.uploadChunks,
    db.idAliases,
    db.fileScans,
    db.meta,
  ];
}

/**
 * The server gave `realId` to what we called `tempId`: rewrite every queued operation that
 * mentions it and remember the alias. Returns the ids whose visible rows must be rebuilt.
 */
async function remap(db: ParleyDb, tempId: string, realId: string): Promise<Set<string>> {
  const touched = new Set<string>([tempId, realId]);
  const ops = await db.outbox.toArray();
  for (const op of ops) {
    if (!mentionedIds(op).includes(tempId)) continue;
    const next = remapOp(op, tempId, realId);
    await db.outbox.put(next);
    touched.add(next.entityId);
    touched.add(op.entityId);
  }
  await db.idAliases.put({ tempId, realId });
  return touched;
}

type Done = (db: ParleyDb, op: OutboxOp, nowMs: number) => Promise<void>;

async function finish(db: ParleyDb, op: OutboxOp, nowMs: number, touched: Iterable<string>): Promise<void> {
  await db.outbox.delete(op.seq!);
  const ids = [...touched];
  await rebuildViews(db, { conversations: ids, files: ids }, nowMs);
}

/** A conversation create answered (201, an idempotent replay, or adoption of an existing one). */
export function conversationCreated(conversation: Conversation): Done {
  return (db, op, nowMs) =>
    db.transaction('rw', allTables(db), async () => {
      const touched = await remap(db, op.entityId, conversation.id);
      await db.serverConversations.put(conversation);
      // Any files we already show under the temp id belong to the real conversation now.
      await db.serverFiles.where('conversationId').equals(op.entityId).modify({ conversationId: conversation.id });
      await finish(db, op, nowMs, touched);
    });
}

export function conversationUpdated(conversation: Conversation): Done {
  return (db, op, nowMs) =>
    db.transaction('rw', allTables(db), async () => {
      await db.serverConversations.put(conversation);
      await finish(db, op, nowMs, [conversation.id]);
    });
}

/** 204, or 404 on a retry: either way the conversation and its files are gone. */
export const conversationDeleted: Done = (db, op, nowMs) =>
  db.transaction('rw', allTables(db), async () => {
    const fileIds = await db.serverFiles.where('conversationId').equals(op.entityId).primaryKeys();
    await db.serverConversations.delete(op.entityId);
    await db.serverFiles.bulkDelete(fileIds);
    await db.fileScans.delete(op.entityId);
    await finish(db, op, nowMs, [op.entityId, ...fileIds]);
  });

export function fileUploaded(file: FileObject): Done {
  return (db, op, nowMs) =>
    db.transaction('rw', allTables(db), async () => {
      if (op.body.kind !== 'file.upload') throw new Error('not an upload');
      const touched = await remap(db, op.entityId, file.id);
      if (op.body.tempMessageId) {
        for (const id of await remap(db, op.body.tempMessageId, file.message_id)) touched.add(id);
      }
      await db.serverFiles.put({ ...file, conversationId: op.body.conversationId });
      await db.uploadChunks.where('opId').equals(op.id).delete();
      await finish(db, op, nowMs, touched);
    });
}

export function fileRenamed(file: FileObject): Done {
  return (db, op, nowMs) =>
    db.transaction('rw', allTables(db), async () => {
      const known = await db.serverFiles.get(file.id);
      await db.serverFiles.put({ ...file, conversationId: known?.conversationId ?? null });
      await finish(db, op, nowMs, [file.id]);
    });
}

export const fileDeleted: Done = (db, op, nowMs) =>
  db.transaction('rw', allTables(db), async () => {
    await db.serverFiles.delete(op.entityId);
    await finish(db, op, nowMs, [op.entityId]);
  });
