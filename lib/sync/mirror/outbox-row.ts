// An operation as the outbox table stores it (the row type of db.ts's `outbox`): its state, its
// body (bodies.ts), and what each field means. Its life — the states' diagram and the transitions
// that change these fields — is outbox/lifecycle.ts's; the type lives here, below the outbox,
// because the mirror reads operations too (rebase.ts: visible row = server's word + pending work).
import type { OpBody, UploadBody } from './bodies';

/** queued: waiting to be sent; inflight: claimed, possibly on the wire; failed: dead letter. */
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

/**
 * A resumable upload (tus, resumable-upload.ts): where its bytes go. Written before the first
 * creation is sent and again as soon as the creation answers, so that a cut, a reload or a crash
 * resumes that upload (HEAD → the server's offset) instead of starting over or making another.
 */
export interface TusState {
  /** The upload's URL (the creation's Location); null until a creation has answered. */
  url: string | null;
  /**
   * Uploads begun for this operation that the server no longer knows (expired, removed): the
   * creation's Idempotency-Key is the operation's key for the first, `<key>~tus<n>` after that.
   */
  generation: number;
  /**
   * The Idempotency-Key of a creation sent WITH the file's bytes (creation-with-upload: a small
   * file goes in that one request) whose answer has not come: the upload, and even the file, may
   * exist with its URL unknown here. A later attempt asks for it again under this key without the
   * bytes (the server answers with the same upload); a cancellation asks the same way, to end it.
   * Cleared once a creation's Location is known.
   */
  bytesKey?: string;
}

/** An upload the user cancelled after it may have reached the server (see `cancelled`). */
export interface CancelledUpload {
  /** The upload as it was queued (its name and target, for what the row and status say). */
  upload: UploadBody;
  /** The file it created, when known (its completion raced the cancel): deleted by the replay. */
  fileId: string | null;
}

/** An operation as it is stored in the outbox (`seq` assigned by IndexedDB on insert). */
export interface OutboxOp {
  /** Global replay order (auto-increment). Order among dependent operations is seq order. */
  seq: number;
  /** Operation id, sent as the Idempotency-Key. Never changes once the operation has been sent. */
  id: string;
  entity: 'conversation' | 'file';
  /** The conversation or file this operation is about (a temp id until its create is replayed). */
  entityId: string;
  /** What to do (bodies.ts). Amended only while never sent, or with a new keyVersion. */
  body: OpBody;
  state: OpState;
  /** Claims so far (a claim that was released unsent does not count); drives the backoff. */
  attempts: number;
  /** Not before this time (ms) — the backoff after a retryable failure; 0 = at once. */
  nextAttemptAt: number;
  /** When it was first claimed to be sent (ms); null = never sent, so it may still be amended or cancelled. */
  firstSentAt: number | null;
  /** A request went out whose response was never handled: the server may have acted (lifecycle.ts says what then). */
  outcomeUnknown: boolean;
  /** The last failure: a refusal (state failed) or the retryable failure it waits out (queued). */
  error: OpError | null;
  /** When the user made the change (ms); a create's provisional created_at. */
  createdAt: number;
  /** Uploads to a server without confirmed idempotency: taken before the first send. */
  snapshot?: UploadSnapshot;
  /** Uploads sent through tus: the upload's URL and creation key (absent: POST /v1/files, or not sent yet). */
  tus?: TusState;
  /** Bumped when the server refused the operation, so a user's retry is not answered from the stored refusal. */
  keyVersion?: number;
  /**
   * Other entities whose earlier operations must all be settled before this one is sent, as its
   * own entity's are (and it is blocked while one of them is). A conversation create waits behind
   * the queued delete of a conversation with the same contact or group: sent first, the server
   * would answer 409 conversation_exists with the conversation about to be deleted, and the
   * delete would then take the new one along.
   */
  after?: string[];
  /**
   * Set when the user cancelled this upload after it may have reached the server: the body is then
   * `file.delete` of the upload's (temp) file, and the replay ends the upload instead (`op.tus`:
   * DELETE the upload; `fileId`, or the upload's HEAD: DELETE the file).
   */
  cancelledUpload?: CancelledUpload;
}
