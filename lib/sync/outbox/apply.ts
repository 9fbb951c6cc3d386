// Writing the server's answers into the mirror, in one transaction with the outbox change that
// goes with them: an answered operation leaves the outbox in the same commit that records its
// effect, so a crash in between can neither lose the effect nor replay it. Answers are recorded
// in batches (recordAnswers): one transaction and one rebuild for many.
import type { Conversation, FileObject } from '../../schemas';
import type { ParleyDb } from '../mirror/db';
import { answerScope } from '../mirror/scopes';
import { mentionedIds, remapOp, type OutboxOp } from './operations';
import { done, type Write } from './lifecycle';
import { dropChunks } from './chunks';
import { rebuildViews } from '../mirror/rebase';
import { filesIn, forget } from '../mirror/store';
import { serverFileRows } from '../mirror/server-word';

/** Writes what a transition (lifecycle.ts) made of the stored row `seq`, inside the caller's transaction. */
export async function writeOutbox(db: ParleyDb, seq: number, write: Write): Promise<void> {
  switch (write.kind) {
    case 'update':
      await db.outbox.update(seq, write.change);
      return;
    case 'remove':
      await db.outbox.delete(seq);
      return;
    case 'requeue':
      // The same operation (its id is unique) in a new row: the old row goes first.
      await db.outbox.delete(seq);
      await db.outbox.add(write.op as OutboxOp);
      return;
  }
}

/**
 * The server gave `realId` to what we called `tempId`: rewrite every queued operation that
 * mentions it and remember the alias. Returns the ids whose visible rows must be rebuilt.
 */
async function remap(db: ParleyDb, tempId: string, realId: string): Promise<Set<string>> {
  const touched = new Set<string>([tempId, realId]);
  const ops = await db.outbox.toArray();
  for (const op of ops) {
    if (!mentionedIds(op).includes(tempId) && !op.after?.includes(tempId)) continue;
    const next = remapOp(op, tempId, realId);
    await db.outbox.put(next);
    touched.add(next.entityId);
    touched.add(op.entityId);
  }
  await db.idAliases.put({ tempId, realId });
  return touched;
}

/**
 * What a server answer changes in the mirror, written inside the caller's transaction (see
 * `recordAnswers`). Returns the ids whose visible rows must be rebuilt.
 */
export type Effect = (db: ParleyDb, op: OutboxOp) => Promise<Iterable<string>>;

export interface Answer {
  op: OutboxOp;
  effect: Effect;
}

/**
 * Records answered operations in ONE transaction: each one's effect and its removal from the
 * outbox (done), then one rebuild of every visible row they touched — so a batch costs one
 * transaction and one read of the pending work, not one of each per operation.
 */
export async function recordAnswers(db: ParleyDb, answers: readonly Answer[], nowMs: number): Promise<void> {
  if (answers.length === 0) return;
  await db.transaction('rw', answerScope(db), async () => {
    const touched = new Set<string>();
    for (const { op, effect } of answers) {
      for (const id of await effect(db, op)) touched.add(id);
      await writeOutbox(db, op.seq, done(op));
    }
    const ids = [...touched];
    await rebuildViews(db, { conversations: ids, files: ids }, nowMs);
  });
}

/**
 * `gone` (in the effects below): the server acted on the operation, but the object is gone since
 * (an idempotent replay, re-read as it is now, found it deleted elsewhere — replay.ts
 * `asItIsNow`). Our copy goes too; temp ids still map to it, so what still mentions it is refused
 * as missing rather than lost.
 */
async function dropConversation(db: ParleyDb, id: string): Promise<string[]> {
  const fileIds = await filesIn(db, [id]);
  // Copies and shown rows both go (store.ts `forget`); the rebuild that follows shows what
  // pending work alone still makes of them.
  await forget(db, { conversations: [id], files: fileIds });
  return fileIds;
}

/** A conversation create answered (201, an idempotent replay, or adoption of an existing one). */
export function conversationCreated(conversation: Conversation, gone = false): Effect {
  return async (db, op) => {
    const touched = await remap(db, op.entityId, conversation.id);
    if (gone) for (const id of await dropConversation(db, conversation.id)) touched.add(id);
    else await db.serverConversations.put(conversation);
    // Any files we already show under the temp id belong to the real conversation now.
    await db.serverFiles.where('conversationId').equals(op.entityId).modify({ conversationId: conversation.id });
    return touched;
  };
}

export function conversationUpdated(conversation: Conversation, gone = false): Effect {
  return async (db) => {
    if (gone) return [conversation.id, ...(await dropConversation(db, conversation.id))];
    await db.serverConversations.put(conversation);
    return [conversation.id];
  };
}

/** 204, or 404 on a retry: either way the conversation and its files are gone. */
export const conversationDeleted: Effect = async (db, op) => [op.entityId, ...(await dropConversation(db, op.entityId))];

export function fileUploaded(file: FileObject, gone = false): Effect {
  return async (db, op) => {
    if (op.body.kind !== 'file.upload') throw new Error('not an upload');
    const touched = await remap(db, op.entityId, file.id);
    if (op.body.tempMessageId) {
      for (const id of await remap(db, op.body.tempMessageId, file.message_id)) touched.add(id);
    }
    if (gone) await forget(db, { files: [file.id] });
    else await db.serverFiles.put({ ...file, conversationId: op.body.conversationId });
    await dropChunks(db, op.id);
    return touched;
  };
}

export function fileRenamed(file: FileObject, gone = false): Effect {
  return async (db) => {
    if (gone) {
      await forget(db, { files: [file.id] });
      return [file.id];
    }
    const [known] = await serverFileRows(db, [file.id]);
    await db.serverFiles.put({ ...file, conversationId: known?.conversationId ?? null });
    return [file.id];
  };
}

export const fileDeleted: Effect = async (db, op) => {
  await forget(db, { files: [op.entityId] });
  return [op.entityId];
};
