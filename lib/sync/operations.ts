// The outbox's vocabulary and the pure rules over it: what an operation touches, which
// operations are blocked by a failure, and how consecutive operations combine. No I/O here.

/** Normalised conversation fields an update sets (zod-validated before queueing). */
export interface ConversationPatch {
  pinned_message_id?: string | null;
  is_pinned?: boolean;
  is_muted?: boolean;
  archived_at?: number | null;
  last_opened_at?: number;
}

export type OpBody =
  | { kind: 'conversation.create'; contact_id: string | null; group_id: string | null }
  | { kind: 'conversation.update'; patch: ConversationPatch }
  | { kind: 'conversation.delete' }
  | {
      kind: 'file.upload';
      /** The conversation the file goes into (temp or real); always known, also for message uploads. */
      conversationId: string;
      /** Attach to this existing message (temp or real); null = the server creates a new message. */
      messageId: string | null;
      /** The temp id of the message the server will create when messageId is null. */
      tempMessageId: string | null;
      filename: string;
      fileType: string;
      size: number;
      chunkCount: number;
    }
  | { kind: 'file.rename'; filename: string }
  | { kind: 'file.delete' };

export type OpKind = OpBody['kind'];

/** queued: waiting to be sent; inflight: sent, response not yet handled; failed: dead letter. */
export type OpState = 'queued' | 'inflight' | 'failed';

export interface OpError {
  status: number;
  code: string;
  message: string;
}

/**
 * Taken before the first send of an upload when the server's idempotency is not confirmed: the
 * newest file of the target conversation and the server's clock, so that after a lost response
 * the files created since can be told apart from older ones (see replay.ts, verifyUpload).
 */
export interface UploadSnapshot {
  newestFileId: string | null;
  serverTime: number | null;
}

export interface OutboxOp {
  /** Global replay order (auto-increment). */
  seq?: number;
  /** Operation id, sent as the Idempotency-Key. Never changes once the operation has been sent. */
  id: string;
  entity: 'conversation' | 'file';
  /** The conversation or file this operation is about (a temp id until its create is replayed). */
  entityId: string;
  body: OpBody;
  state: OpState;
  attempts: number;
  /** Not before this time (ms) — exponential backoff after a retryable failure. */
  nextAttemptAt: number;
  /** When it was first sent (ms); null = never sent, so it may still be merged or cancelled. */
  firstSentAt: number | null;
  /** A request went out whose response was never handled: the server may have acted. */
  outcomeUnknown: boolean;
  error: OpError | null;
  createdAt: number;
  snapshot?: UploadSnapshot;
  /** Bumped when the server refused the operation, so a user's retry is not answered from the stored refusal. */
  keyVersion?: number;
}

export const TEMP_PREFIX = 'local_';

export function isTempId(id: string): boolean {
  return id.startsWith(TEMP_PREFIX);
}

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

/** Ids of things (conversations, messages) this operation needs to exist before it can run. */
export function prerequisites(op: OutboxOp): string[] {
  if (op.body.kind === 'file.upload') {
    return op.body.messageId ? [op.body.conversationId, op.body.messageId] : [op.body.conversationId];
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

export function neverSent(op: OutboxOp): boolean {
  return op.state === 'queued' && op.firstSentAt === null;
}

/**
 * A create the server certainly does not have: never sent, or refused (a 4xx answer means the
 * server did not act). Deleting what it created can then simply cancel it.
 */
export function certainlyNotCreated(op: OutboxOp): boolean {
  return neverSent(op) || op.state === 'failed';
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
      stuckEntities.has(op.entityId) || prerequisites(op).some((id) => unavailable.has(id));
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

/** Replace a temp id by the real one wherever the operation mentions it. Returns a new object. */
export function remapOp(op: OutboxOp, tempId: string, realId: string): OutboxOp {
  const swap = (id: string) => (id === tempId ? realId : id);
  const next: OutboxOp = { ...op, entityId: swap(op.entityId) };
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
  return next;
}

/** Exponential backoff with "equal jitter": half fixed, half random, capped. */
export function backoffDelay(attempts: number, random: () => number, baseMs: number, maxMs: number): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
