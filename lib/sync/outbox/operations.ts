// The outbox's vocabulary and the pure rules over it: what an operation touches, which
// operations are blocked by a failure, and how consecutive operations combine. No I/O here.

// What an operation does (its body): mirror/bodies.ts (below the outbox: the mirror's rebase reads it).
export { partyOf, type ConversationPatch, type OpBody, type OpKind, type Party, type UploadBody } from '../mirror/bodies';

// The stored operation and what each field means: mirror/outbox-row.ts; its states: lifecycle.ts.
export type { CancelledUpload, OpError, OpState, OutboxOp, TusState, UploadSnapshot } from '../mirror/outbox-row';
import { neverSent, type OutboxOp } from './lifecycle';
import type { Party } from '../mirror/bodies';
import { creates, isTempId, mentionedIds, TEMP_PREFIX } from '../mirror/blocking';
export { neverSent };
// What blocks what and what an operation mentions (read by the mirror's rebase and the page's
// status too, so in a module of their own, below the outbox): mirror/blocking.ts.
export { blockedOpIds, creates, isTempId, mentionedIds, prerequisites, TEMP_PREFIX } from '../mirror/blocking';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A temp id: can never equal a server id (those are 16 characters of [A-Za-z0-9], no `_`). */
export function newTempId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let out = TEMP_PREFIX;
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

export function newOpId(): string {
  return crypto.randomUUID();
}

/**
 * A create the server certainly does not have: never sent, or refused (a 4xx answer means the
 * request did not act) with no earlier attempt whose outcome is unknown. Deleting what it
 * created can then simply cancel it.
 */
export function certainlyNotCreated(op: OutboxOp): boolean {
  return neverSent(op) || (op.state === 'failed' && !op.outcomeUnknown);
}

/** What may be sent now (see readyBatch); `waitUntil`: the backoff that stopped the search. */
export interface ReadyBatch {
  ops: OutboxOp[];
  waitUntil: number | null;
}

/**
 * The operations that may be sent now, together and in any order: up to `max`, in seq order.
 * Each is queued, not blocked by a failure (`blocked`, from blockedOpIds), and independent of
 * every earlier operation still pending (queued or in flight): they mention no common id — so
 * one entity's operations go strictly in order, and anything naming a conversation or message
 * waits for the operations before it on that conversation or message — and it mentions no temp
 * id it does not create (that create has not been answered yet), and it waits for the pending
 * operations of the entities it is ordered `after` (a create behind the queued delete of the same
 * contact's conversation, see intents/create-conversation.ts). A change to a conversation also
 * waits for every earlier unanswered conversation create (a create, only for one of the same
 * contact or group): the server may answer that create with a conversation that is already known
 * (409 conversation_exists, adopted) — this one, or another pending create's — and the changes of
 * the two, merged, must reach it in the order the user made them. The cost: a change to a
 * conversation made behind a create goes one round trip later; creates of different contacts
 * still go together. Failed and blocked operations hold up nothing here (blockedOpIds says what
 * they block).
 *
 * The search stops at the first operation that could go but for its backoff (`waitUntil`): as
 * before batching, a retry that is not due holds back what was queued after it.
 */
export function readyBatch(ordered: readonly OutboxOp[], blocked: ReadonlySet<string>, now: number, max: number): ReadyBatch {
  const held = new Set<string>();
  const ops: OutboxOp[] = [];
  // An unanswered create of a conversation may be answered with one already known (409
  // conversation_exists adopts it), or with another pending create's of the same contact or group:
  // until it is answered, no later change to a conversation is known to be independent of it.
  let conversationCreatePending = false;
  const partiesBeingCreated = new Set<string>();
  for (const op of ordered) {
    if (op.state === 'failed' || blocked.has(op.id)) continue;
    const mentioned = mentionedIds(op);
    // A cancelled upload names the temp id of a file that will never exist: nothing to wait for.
    const own = op.cancelledUpload ? [op.entityId] : creates(op);
    const waits =
      op.state === 'inflight' ||
      (op.body.kind === 'conversation.create'
        ? partiesBeingCreated.has(partyKey(op.body))
        : conversationCreatePending && op.entity === 'conversation') ||
      mentioned.some((id) => held.has(id) || (isTempId(id) && !own.includes(id))) ||
      (op.after ?? []).some((id) => held.has(id));
    if (!waits && op.nextAttemptAt > now) return { ops, waitUntil: op.nextAttemptAt };
    if (op.body.kind === 'conversation.create') {
      conversationCreatePending = true;
      partiesBeingCreated.add(partyKey(op.body));
    }
    for (const id of mentioned) held.add(id);
    if (waits) continue;
    ops.push(op);
    if (ops.length >= max) break;
  }
  return { ops, waitUntil: null };
}

/** Whom a create is with, as one string: creates with the same may end as one conversation. */
function partyKey(party: Party): string {
  return party.contact_id != null ? `contact ${party.contact_id}` : `group ${party.group_id}`;
}

/** Replace a temp id by the real one wherever the operation mentions it. Returns a new object. */
export function remapOp(op: OutboxOp, tempId: string, realId: string): OutboxOp {
  const swap = (id: string) => (id === tempId ? realId : id);
  const next: OutboxOp = { ...op, entityId: swap(op.entityId) };
  if (op.after) next.after = op.after.map(swap);
  const body = op.body;
  if (body.kind === 'file.upload') {
    next.body = {
      ...body,
      conversationId: swap(body.conversationId),
      messageId: body.messageId ? swap(body.messageId) : null,
      // Once the message exists it is no longer "to be created".
      tempMessageId: body.tempMessageId === tempId ? null : body.tempMessageId,
    };
  } else if (body.kind === 'conversation.update' && body.patch.pinned_message_id) {
    next.body = { ...body, patch: { ...body.patch, pinned_message_id: swap(body.patch.pinned_message_id) } };
  }
  if (op.cancelledUpload) {
    const upload = op.cancelledUpload.upload;
    next.cancelledUpload = { ...op.cancelledUpload, upload: { ...upload, conversationId: swap(upload.conversationId), messageId: upload.messageId ? swap(upload.messageId) : null } };
  }
  return next;
}

/** Exponential backoff with "equal jitter": half fixed, half random, capped. */
export function backoffDelay(attempts: number, random: () => number, baseMs: number, maxMs: number): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** Retry-After as delta-seconds or an HTTP date (read one way, with the pacing: core/pace.ts). */
export { retryAfterMs } from '../core/pace';
