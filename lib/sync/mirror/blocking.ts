// Which operations a failed one holds up, and the id rules that decides it with (temp ids, what an
// operation needs, creates and mentions). Pure, and apart from outbox/operations.ts (which
// re-exports it): the mirror's rebase reads it below the outbox, and the page's status line reads
// blockedOpIds, which keeps the rest of the outbox's rules off the first screen.
import type { OpBody } from './bodies';
import type { OutboxOp } from './outbox-row';

export const TEMP_PREFIX = 'local_';

export function isTempId(id: string): boolean {
  return id.startsWith(TEMP_PREFIX);
}

/** Ids of things (conversations, messages) this operation needs to exist before it can run. */
export function prerequisites(op: OutboxOp): string[] {
  if (op.body.kind === 'file.upload') {
    return op.body.messageId ? [op.body.conversationId, op.body.messageId] : [op.body.conversationId];
  }
  // Pinning the message of an upload still queued: that upload creates it.
  if (op.body.kind === 'conversation.update' && op.body.patch.pinned_message_id && isTempId(op.body.patch.pinned_message_id)) {
    return [op.body.patch.pinned_message_id];
  }
  return [];
}

/** Ids this operation brings into existence. */
export function creates(op: OutboxOp): string[] {
  if (op.body.kind === 'conversation.create') return [op.entityId];
  if (op.body.kind === 'file.upload') {
    return op.body.tempMessageId ? [op.entityId, op.body.tempMessageId] : [op.entityId];
  }
  return [];
}

/**
 * Which operations cannot run because of a failed one. An operation depends on every earlier
 * operation on the same entity (strict order per entity) and on the operation that creates the
 * things it refers to. Nothing else: a failed rename does not hold up another file's upload.
 */
export function blockedOpIds(ordered: readonly OutboxOp[]): Set<string> {
  const blocked = new Set<string>();
  const stuckEntities = new Set<string>();
  const unavailable = new Set<string>();
  for (const op of ordered) {
    const isBlocked =
      stuckEntities.has(op.entityId) ||
      (op.after ?? []).some((id) => stuckEntities.has(id)) ||
      prerequisites(op).some((id) => unavailable.has(id));
    if (isBlocked) blocked.add(op.id);
    if (isBlocked || op.state === 'failed') {
      stuckEntities.add(op.entityId);
      for (const id of creates(op)) unavailable.add(id);
    }
  }
  return blocked;
}

/** The ids an operation mentions, for remapping and for "does pending work need this row". */
export function mentionedIds(op: OutboxOp): string[] {
  const ids = [op.entityId];
  if (op.body.kind === 'file.upload') {
    ids.push(op.body.conversationId);
    if (op.body.messageId) ids.push(op.body.messageId);
    if (op.body.tempMessageId) ids.push(op.body.tempMessageId);
  }
  if (op.body.kind === 'conversation.update' && op.body.patch.pinned_message_id) {
    ids.push(op.body.patch.pinned_message_id);
  }
  return ids;
}

/**
 * Whether a refused change says the server no longer has its file: a rename (or delete) of it was
 * answered 404 or 410. Not an upload's: its 404 is about the conversation or message it goes into.
 * Read by "Upload my copy again" (outbox/intents/reupload-file.ts) and the failed changes' words.
 */
export function lostOnServer(change: { kind: OpBody['kind']; error: { status: number } | null }): boolean {
  const status = change.error?.status;
  return (change.kind === 'file.rename' || change.kind === 'file.delete') && (status === 404 || status === 410);
}
