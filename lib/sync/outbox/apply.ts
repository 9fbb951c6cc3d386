// Writing the server's answers into the mirror, in one transaction with the outbox change that
// goes with them: an answered operation leaves the outbox in the same commit that records its
// effect, so a crash in between can neither lose the effect nor replay it. Answers are recorded
// in batches (recordAnswers): one transaction and one rebuild for many.
import type { Conversation, FileObject } from '../../schemas';
import type { ParleyDb, ServerFile } from '../mirror/db';
import { recordScope } from '../mirror/scopes';
import { mentionedIds, remapOp, type OutboxOp } from './operations';
import { done, type Write } from './lifecycle';
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
 * What a batch's answers write, gathered while their effects run and written together once they
 * all have (`write`): the server's copies in one bulk put per table, the queued bytes of the
 * uploads answered in one delete, and the temp ids given real ids applied to the queued
 * operations that mention them in one read of the outbox. One request to IndexedDB per kind of
 * write instead of one or more per answer: recording 50 answers took 70-300 ms on a phone-class
 * machine, each request waiting its round trip, while the replay's claims waited behind it. The
 * operations of one batch are of different entities and never mention each other's temp ids
 * (readyBatch), so no effect reads what an earlier one of the same batch has yet to write.
 */
export class AnswerBatch {
  readonly remaps = new Map<string, string>();
  private readonly conversations: Conversation[] = [];
  private readonly files: ServerFile[] = [];
  private readonly uploads: string[] = [];

  /** The server gave `realId` to what we called `tempId`; returns the ids to rebuild (those of the operations rewritten come from `write`). */
  remap(tempId: string, realId: string): Set<string> {
    this.remaps.set(tempId, realId);
    return new Set([tempId, realId]);
  }

  putConversation(conversation: Conversation): void {
    this.conversations.push(conversation);
  }

  putFile(file: ServerFile): void {
    this.files.push(file);
  }

  /** The upload `opId` was answered: its queued bytes may go (recordAnswers hands them back). */
  uploaded(opId: string): void {
    this.uploads.push(opId);
  }

  /** The answered uploads whose queued bytes may go. */
  get bytesToDrop(): readonly string[] {
    return this.uploads;
  }

  /** Writes what was gathered (inside the caller's transaction, after the answered operations left the outbox); returns more ids to rebuild. */
  async write(db: ParleyDb): Promise<Set<string>> {
    if (this.conversations.length > 0) await db.serverConversations.bulkPut(this.conversations);
    if (this.files.length > 0) await db.serverFiles.bulkPut(this.files);
    return applyRemaps(db, this.remaps);
  }
}

/** Rewrites every queued operation that mentions a remapped temp id and remembers the aliases; returns the ids to rebuild. */
async function applyRemaps(db: ParleyDb, remaps: ReadonlyMap<string, string>): Promise<Set<string>> {
  const touched = new Set<string>();
  if (remaps.size === 0) return touched;
  const changed: OutboxOp[] = [];
  for (const op of await db.outbox.toArray()) {
    let next = op;
    for (const id of [...mentionedIds(op), ...(op.after ?? [])]) {
      const realId = remaps.get(id);
      if (realId !== undefined) next = remapOp(next, id, realId);
    }
    if (next === op) continue;
    changed.push(next);
    touched.add(next.entityId);
    touched.add(op.entityId);
  }
  await db.outbox.bulkPut(changed);
  await db.idAliases.bulkPut([...remaps].map(([tempId, realId]) => ({ tempId, realId })));
  return touched;
}

/**
 * What a server answer changes in the mirror, written inside the caller's transaction (see
 * `recordAnswers`), or gathered in `batch` to be written with the batch's other answers. Returns
 * the ids whose visible rows must be rebuilt.
 */
export type Effect = (db: ParleyDb, op: OutboxOp, batch: AnswerBatch) => Promise<Iterable<string>>;

export interface Answer {
  op: OutboxOp;
  effect: Effect;
}

/**
 * Records answered operations in ONE transaction: each one's effect and its removal from the
 * outbox (done), what they gathered (AnswerBatch), then one rebuild of every visible row they
 * touched — so a batch costs one transaction, a few bulk writes, one read of the outbox and one of
 * the pending work, not some of each per operation. Returns the answered uploads, whose queued
 * bytes the caller drops (chunks.ts `dropChunks`): not here, so that this transaction does not
 * hold up the reads of the next uploads' bytes (scopes.ts `recordScope`). Bytes whose operation
 * has gone are dropped by the next replay in any case (`dropOrphanChunks`).
 */
export async function recordAnswers(db: ParleyDb, answers: readonly Answer[], nowMs: number): Promise<readonly string[]> {
  if (answers.length === 0) return [];
  return db.transaction('rw', recordScope(db), async () => {
    const touched = new Set<string>();
    const batch = new AnswerBatch();
    const removed: number[] = [];
    for (const { op, effect } of answers) {
      for (const id of await effect(db, op, batch)) touched.add(id);
      const write = done(op);
      if (write.kind === 'remove') removed.push(op.seq);
      else await writeOutbox(db, op.seq, write);
    }
    // Before the remaps: an answered operation must not be rewritten back into the outbox.
    await db.outbox.bulkDelete(removed);
    for (const id of await batch.write(db)) touched.add(id);
    const ids = [...touched];
    await rebuildViews(db, { conversations: ids, files: ids }, nowMs);
    return batch.bytesToDrop;
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
  return async (db, op, batch) => {
    const touched = batch.remap(op.entityId, conversation.id);
    if (gone) for (const id of await dropConversation(db, conversation.id)) touched.add(id);
    else batch.putConversation(conversation);
    // Any files we already show under the temp id belong to the real conversation now.
    await db.serverFiles.where('conversationId').equals(op.entityId).modify({ conversationId: conversation.id });
    return touched;
  };
}

export function conversationUpdated(conversation: Conversation, gone = false): Effect {
  return async (db, _op, batch) => {
    if (gone) return [conversation.id, ...(await dropConversation(db, conversation.id))];
    batch.putConversation(conversation);
    return [conversation.id];
  };
}

/** 204, or 404 on a retry: either way the conversation and its files are gone. */
export const conversationDeleted: Effect = async (db, op) => [op.entityId, ...(await dropConversation(db, op.entityId))];

export function fileUploaded(file: FileObject, gone = false): Effect {
  return async (db, op, batch) => {
    if (op.body.kind !== 'file.upload') throw new Error('not an upload');
    const touched = batch.remap(op.entityId, file.id);
    if (op.body.tempMessageId) {
      for (const id of batch.remap(op.body.tempMessageId, file.message_id)) touched.add(id);
    }
    if (gone) await forget(db, { files: [file.id] });
    else batch.putFile({ ...file, conversationId: op.body.conversationId });
    batch.uploaded(op.id);
    return touched;
  };
}

export function fileRenamed(file: FileObject, gone = false): Effect {
  return async (db, _op, batch) => {
    if (gone) {
      await forget(db, { files: [file.id] });
      return [file.id];
    }
    const [known] = await serverFileRows(db, [file.id]);
    batch.putFile({ ...file, conversationId: known?.conversationId ?? null });
    return [file.id];
  };
}

export const fileDeleted: Effect = async (db, op) => {
  await forget(db, { files: [op.entityId] });
  return [op.entityId];
};
