// The life of an outbox operation, in one place: its states, the transitions between them, and
// the rules on its stored fields (the fields themselves: mirror/outbox-row.ts). Pure functions: each takes the stored operation and returns the
// change to store (or the new operation); replay.ts, cancellation.ts and the client's intents
// write what they return and never compose a state change themselves.
//
//   new ──► queued ── claim (in a batch) ──► inflight ── answered: 2xx (a delete: or 404) ──► done
//            ▲  ▲                             │  │  │       (row deleted in the transaction
//            │  └──── release (never sent) ───┘  │  │        that records the effect)
//            │  └──── retry later ───────────────┘  │
//            │        network, 5xx, 429, 409 in     │
//            │        progress: after a backoff;    │
//            │        401: as it was, until sign-in;│
//            │        a body the server can take    │
//            │        only in part: rewritten       │
//            │                                      ▼ refused (any other 4xx)
//            └──────── user Retry ─────────────── failed (dead letter) ──► discarded by the user
//
//   And: inflight left behind by a replayer that died → queued with outcomeUnknown (recovered).
//
//   Cancelling an upload (the user's "Cancel upload", intents/cancel-upload.ts):
//     never sent (or refused, nothing unknown) ──► gone, with its bytes and what waits on it
//     otherwise (queued, inflight or failed)   ──► `cancelled`: the same row becomes a deletion
//       (body file.delete, `cancelledUpload` kept) in the one transaction that drops its queued
//       bytes and its dependents; the file's row goes at once. The replay then ends it on the
//       server: the tus upload terminated (DELETE <tus.url>; 404 = done) and, if the upload
//       completed (its HEAD names the file, or the completion raced the cancel), the file deleted.
//       Sent, retried and dead-lettered like any other operation.
//     An inflight upload is the one case where someone other than the replayer changes an inflight
//     row: the replayer sees it (it watches the row while a tus transfer runs, and re-reads it
//     before recording an answer), aborts the transfer, and goes on with the deletion.
//
// - queued: waiting to be sent (not before `nextAttemptAt`). While it has never been sent
//   (`firstSentAt === null`) the client may still amend its body (coalescing edits) or cancel it.
// - inflight: claimed by the one replayer holding the sync lock; a request may be on the wire.
//   Nobody else touches it. A replayer that dies leaves it inflight; the next one (holding the
//   lock, so nothing can really be in flight) recovers it to queued with `outcomeUnknown`.
// - failed: the server refused it (4xx, it did not act). It stays, visible, until the user
//   retries (→ queued, with a fresh key) or discards it. Later operations on the same entity,
//   and those needing what it creates, are blocked behind it (operations.ts, blockedOpIds).
// - done: no state — the row is deleted in the transaction that records the server's answer
//   (apply.ts), so a crash can neither lose the effect nor replay it.
//
// outcomeUnknown: a request went out whose answer was never handled (lost response, 5xx, a crash
// while inflight, a request still running under the same key). The server may have acted, so
// before sending again the replay must make the repeat harmless: the same Idempotency-Key (a
// server with idempotency answers from its store), or, without that, the per-kind rules of
// replay.ts (absolute PUTs, DELETE 404 = done, 409 conversation_exists adopted, uploads verified
// against their snapshot). It is cleared only when the server answers "I did not act" (4xx).

import type { OpBody } from '../mirror/bodies';
import type { OpError, OpState, OutboxOp, TusState, UploadSnapshot } from '../mirror/outbox-row';
// The stored shape (what each field means) is the outbox table's row type, beside the mirror's
// (mirror/outbox-row.ts: the mirror's rebase reads operations and may not import the outbox).
export type { CancelledUpload, OpError, OpState, OutboxOp, TusState, UploadSnapshot } from '../mirror/outbox-row';

/** The states of an operation still to be sent (the stuck-queue watchdog's, Keep offline's wait). */
export const UNSENT_STATES: readonly OpState[] = ['queued', 'inflight'];

/** An operation about to be queued: IndexedDB gives it its seq. */
export type NewOp = Omit<OutboxOp, 'seq'>;

/** A change to a stored operation. */
export type OpChange = Partial<Omit<OutboxOp, 'seq' | 'id'>>;

/**
 * What becomes of a stored row (apply.ts `writeOutbox` writes it): changed; removed (done, or
 * nothing left to send); or removed with the same operation queued again as a new row.
 */
export type Write = { kind: 'update'; change: OpChange } | { kind: 'remove' } | { kind: 'requeue'; op: NewOp };

// ---- Transitions. Each names its precondition; the caller checks it against the stored row. ----

/** [queue]: a new intention, sent as soon as what it depends on is done. */
export function queued(fields: { id: string; entity: OutboxOp['entity']; entityId: string; body: OpBody; now: number; after?: string[] }): NewOp {
  return {
    ...(fields.after && fields.after.length > 0 ? { after: fields.after } : {}),
    id: fields.id,
    entity: fields.entity,
    entityId: fields.entityId,
    body: fields.body,
    state: 'queued',
    attempts: 0,
    nextAttemptAt: 0,
    firstSentAt: null,
    outcomeUnknown: false,
    error: null,
    createdAt: fields.now,
  };
}

/** Whether the client may still change or cancel it: it never left the device. */
export function neverSent(op: Pick<OutboxOp, 'state' | 'firstSentAt'>): boolean {
  return op.state === 'queued' && op.firstSentAt === null;
}

/**
 * queued, never sent → queued with another body (the client coalescing unsent edits into one
 * request). Null once it has been sent: the caller queues a new operation instead.
 */
export function amended(op: OutboxOp, body: OpBody): OpChange | null {
  return neverSent(op) ? { body } : null;
}

/**
 * queued, waiting → due at `now` (the network is back, the app visible, "Sync now"): its backoff
 * ends — except an upload whose answer was lost, against a server without idempotency keys: it
 * is verified by listing the conversation's files (upload-verification.ts), which would miss a
 * request the server is still processing, so it keeps its wait, up to `settleMs` from now.
 */
export function woken(op: OutboxOp, now: number, server: { idempotent: boolean; settleMs: number }): OpChange {
  if (op.state !== 'queued' || op.nextAttemptAt <= now) return {};
  const verifying = !server.idempotent && op.outcomeUnknown && op.body.kind === 'file.upload' && !op.tus;
  return { nextAttemptAt: verifying ? Math.min(op.nextAttemptAt, now + server.settleMs) : now };
}

/** queued → inflight, before anything is sent. Precondition: queued, body as the replayer read it. */
export function claim(op: OutboxOp, now: number): OpChange {
  return { state: 'inflight', attempts: op.attempts + 1, firstSentAt: op.firstSentAt ?? now };
}

/** inflight → queued: claimed but never sent (the replay stopped first). Undoes `claim` exactly. */
export function release(claimed: OutboxOp, before: Pick<OutboxOp, 'attempts' | 'firstSentAt' | 'tus'>): OpChange {
  if (claimed.state !== 'inflight') return {};
  // `tus` as it was: the claim may have noted an upload's creation key (resumable-upload.ts
  // `bytesKeyAtClaim`) for a creation never sent. (Undefined removes the field.)
  return { state: 'queued', attempts: before.attempts, firstSentAt: before.firstSentAt, tus: before.tus };
}

/** inflight, an upload to a server without confirmed idempotency: its snapshot, taken before the first send. */
export function snapshotTaken(snapshot: UploadSnapshot): OpChange {
  return { snapshot };
}

/** inflight, a tus upload: where its bytes go, stored as it changes (resumable-upload.ts). */
export function tusNoted(tus: TusState): OpChange {
  return { tus: { ...tus } };
}

/** inflight, a tus upload whose bytes moved before it failed: the next try need not wait as if nothing had (the backoff starts again). */
export const progressed: OpChange = { attempts: 1 };

/**
 * inflight → done: its answer's effect is recorded, and the row deleted in the same transaction
 * (apply.ts). An upload the user cancelled while its request was out, whose answer says it made
 * `madeFileId`: recorded answers leave the outbox, so the cancellation is queued again as a new
 * row naming the file (`cancelRequeued`).
 */
export function done(current: OutboxOp, madeFileId?: string): Write {
  if (madeFileId !== undefined && current.cancelledUpload) return { kind: 'requeue', op: cancelRequeued(current, madeFileId) };
  return { kind: 'remove' };
}

/** inflight (orphaned by a replayer that died) → queued; whatever it sent may have acted. */
export const recovered: OpChange = { state: 'queued', outcomeUnknown: true };

/**
 * inflight → queued, to try again at `until`: a network error, a 5xx, a 429 or a 409 "in progress".
 * `unknown`: the answer does not prove the server did not act (the request went out and no
 * refusal came back).
 */
export function retryLater(op: OutboxOp, until: number, error: OpError, unknown: boolean): OpChange {
  return { state: 'queued', error, nextAttemptAt: until, outcomeUnknown: op.outcomeUnknown || unknown };
}

/**
 * inflight → queued, its wait untouched: the server could not be reached (offline). Not the
 * operation's fault and no load on the server, so the claim's attempt is given back and no
 * backoff added; the engine paces reconnection and retries at once when the network is back.
 * "Unreachable" is a guess, so a request that went out still makes the outcome unknown.
 */
export function unreachable(op: OutboxOp, now: number, error: OpError, unknown: boolean): OpChange {
  return {
    state: 'queued',
    error,
    attempts: Math.max(0, op.attempts - 1),
    nextAttemptAt: Math.min(op.nextAttemptAt, now),
    outcomeUnknown: op.outcomeUnknown || unknown,
  };
}

/**
 * inflight → queued, as it was: a 401 is not the operation's fault; it waits for a sign-in (the
 * claim's attempt is given back).
 */
export function awaitSignIn(op: OutboxOp): OpChange {
  return { state: 'queued', attempts: Math.max(0, op.attempts - 1) };
}

/**
 * inflight → queued with a different body (the server cannot take part of it, e.g. an unknown
 * extension field): a different body needs a different key.
 */
export function rewritten(op: OutboxOp, body: OpBody): OpChange {
  return { state: 'queued', body, keyVersion: (op.keyVersion ?? 0) + 1 };
}

/**
 * inflight → failed: the server refused (4xx) THIS request, which did not act. A user's Retry must
 * get a fresh hearing, not the stored refusal an idempotent server would replay for the old key —
 * unless an earlier attempt's outcome is unknown: it may have acted, so it stays unknown (to be
 * verified, never cancelled as "not created") and the key stays, so that a server with keys
 * answers a Retry with that first success rather than acting twice.
 */
export function deadLettered(op: OutboxOp, error: OpError): OpChange {
  if (op.outcomeUnknown) return { state: 'failed', error };
  // A new key: a Retry begins a new resumable upload too (the refused one is not resumed).
  // A cancellation keeps its upload's URL: a Retry must still end that upload.
  return { state: 'failed', error, outcomeUnknown: false, keyVersion: (op.keyVersion ?? 0) + 1, ...(op.tus && !op.cancelledUpload ? { tus: undefined } : {}) };
}

/** failed → queued: the user pressed Retry; a fresh start, at once. */
export const retriedByUser: OpChange = { state: 'queued', error: null, attempts: 0, nextAttemptAt: 0 };

/**
 * An upload → its cancellation, in any state (queued, inflight or failed) once it may have reached
 * the server (otherwise the client simply drops it). The body becomes a deletion of the upload's
 * file, so nothing shows it and nothing waits on what it would have created; a new key (the
 * upload's key belongs to its creation); at once; a dead letter becomes a live deletion; an
 * inflight one stays inflight (its replayer notices, aborts the transfer and sends the deletion).
 */
export function cancelled(op: OutboxOp, fileId: string | null = null): OpChange {
  if (op.body.kind !== 'file.upload') return {};
  return {
    body: { kind: 'file.delete' },
    cancelledUpload: { upload: op.body, fileId },
    state: op.state === 'inflight' ? 'inflight' : 'queued',
    error: null,
    nextAttemptAt: 0,
    attempts: op.state === 'inflight' ? op.attempts : 0,
    keyVersion: (op.keyVersion ?? 0) + 1,
  };
}

/**
 * The cancelled upload's completion is known (it raced the cancel): its file is to be deleted too.
 * `url`: the upload's URL, when its creation (the whole file in one request) made it and the
 * stored state does not have it yet — so that its record goes too.
 */
export function cancelledUploadMade(op: OutboxOp, fileId: string, url: string | null = null): OpChange {
  if (!op.cancelledUpload) return {};
  const tus = op.tus && !op.tus.url && url ? { tus: { ...op.tus, url } } : {};
  return { cancelledUpload: { ...op.cancelledUpload, fileId }, ...tus };
}

/**
 * The cancelled upload's answer arrived after the cancel (the upload completed; `fileId` is the
 * file it made): recorded answers leave the outbox, so the cancellation is queued again, as a new
 * row in the same transaction, with the file to delete.
 */
export function cancelRequeued(current: OutboxOp, fileId: string): NewOp {
  const { seq: _seq, ...rest } = current;
  return { ...rest, ...cancelledUploadMade(current, fileId), state: 'queued', nextAttemptAt: 0 };
}

/** Whether the user may discard it now (an inflight one belongs to the replayer). */
export function discardable(op: Pick<OutboxOp, 'state'>): boolean {
  return op.state !== 'inflight';
}
