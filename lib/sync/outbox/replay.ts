// Outbox replay: send queued operations — independent ones in batches, a few requests at once,
// dependent ones in order — and settle each by the server's answer. The operation's states and
// transitions are lifecycle.ts's. Exactly-once rests on three things:
//  1. An operation is marked in flight (and "outcome unknown" is remembered) before it is sent,
//     so a crash or a lost response is never mistaken for "not sent".
//  2. Every request carries Idempotency-Key = operation id: a server that supports it replays
//     the first answer instead of acting twice.
//  3. For a server that ignores the key, a retry after an unknown outcome is made safe per kind:
//     - PUT (update, rename) sets absolute values: sending it again is harmless.
//     - DELETE again answers 404 when the first one worked: taken as success.
//     - Conversation create: the server allows one conversation per contact/group, so a repeat
//       answers 409 conversation_exists with existing_id, and we adopt that conversation.
//     - File upload is the only truly non-idempotent request. See upload-verification.ts.
// A cancelled upload is ended by cancellation.ts; the tus requests that takes are tus-requests.ts's,
// a resumable upload's transfer resumable-upload.ts's.
import { Conversation, FileObject, type FileObject as FileObjectT } from '../../objects';
import * as apply from './apply';
import type { ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import { answerScope } from '../mirror/scopes';
import { call, type HttpDeps, type Outcome } from '../core/http';
import { gone } from '../core/classify';
import * as lifecycle from './lifecycle';
import { answered, settle, type SettleContext, type Stop } from './settle';
import {
  backoffDelay,
  blockedOpIds,
  creates,
  mentionedIds,
  partyOf,
  readyBatch,
  type OutboxOp,
} from './operations';
import { rebuildViews } from '../mirror/rebase';
import type { ResumableUploads } from './resumable-upload';
import { dropChunks, dropOrphanChunks, readChunks } from './chunks';
import { cancelledAfterTransfer, cancelledMeanwhile, endCancelledUpload, unlessCancelled, type CancellationDeps } from './cancellation';
import { takeUploadSnapshot, verifyUpload } from './upload-verification';

export interface ReplayDeps extends HttpDeps {
  db: ParleyDb;
  now: () => number;
  random: () => number;
  backoff: { baseMs: number; maxMs: number };
  /**
   * Bytes of an upload sent so far, by the uploaded file's id (when the transport can tell).
   * `resumed`: a resumable upload that went on from the server's offset (not from zero);
   * `onServer`: the bytes the server confirmed holding (resumable uploads only).
   */
  onUploadProgress?: (fileId: string, sent: number, total: number, resumed?: boolean, onServer?: number) => void;
  /**
   * Resumable uploads (resumable-upload.ts `resumableUploads`), handed in by the sync worker so
   * that tus-js-client is loaded there only. Without it every upload is a POST /v1/files.
   */
  resumable?: ResumableUploads;
  /**
   * Uploads (tus, and POST /v1/files where the transport reports bytes sent): abandon a request
   * after this long without a byte moving or an answer (default UPLOAD_STALL_MS), never after a
   * fixed time.
   */
  uploadStallMs?: number;
  /** Resumable uploads: bytes per PATCH (default 4 MiB). */
  uploadPatchBytes?: number;
  /** Resumable uploads: how often a running transfer looks for the user's cancel (default 250 ms). */
  uploadCancelPollMs?: number;
  /** Told of the replay's costly steps (tests count them: a regression guard). */
  probe?: ReplayProbe;
}

export interface ReplayProbe {
  /** The whole outbox was read (once per push unless something forced a reload). */
  onRead?(): void;
  /** A readwrite transaction of the replay's own: a claim, or a batch of recorded answers. */
  onTransaction?(): void;
  /** A batch of answers is being recorded (true), or its transaction has ended (false). */
  onRecording?(active: boolean): void;
  /** A claimed operation was taken into a free slot (its request is being made). */
  onStart?(): void;
}

export type PushResult =
  | { kind: 'done' }
  /** A backoff still running: try again at `until` (ms). */
  | { kind: 'waiting'; until: number; reason: 'backoff' }
  /** A retryable failure (try again at `until`), or no valid token (settle.ts). */
  | Stop;

/** The key sent with an operation's request; a new suffix once a 4xx made the old one useless. */
export function idempotencyKeyOf(op: OutboxOp): string {
  return op.keyVersion ? `${op.id}.${op.keyVersion}` : op.id;
}

/**
 * Call once per engine start, holding the sync lock: anything still in flight belongs to a
 * replay that died (tab closed, crash) — its outcome is unknown and must be verified.
 */
export async function recoverInflight(db: ParleyDb): Promise<number> {
  return db.outbox.where('state').equals('inflight').modify(lifecycle.recovered);
}

export async function serverSupportsIdempotency(db: ParleyDb): Promise<boolean> {
  return (await getMeta(db, 'serverIdempotency')) === true;
}

/** Operations one claim transaction takes (and most answers one apply transaction records). */
export const BATCH_SIZE = 50;
/** Requests in flight at once. */
export const IN_FLIGHT = 4;
/**
 * Operations one claim takes: enough to keep the slots busy while the recording of a batch of
 * answers holds the outbox (a claim, which writes it too, waits for that transaction).
 */
export const CLAIM_SIZE = 2 * BATCH_SIZE;
/** The next claim is made when fewer than this many claimed operations are left to send. */
const CLAIM_AHEAD = BATCH_SIZE;
/** An upload's request is abandoned after this long without a byte moving or an answer. */
export const UPLOAD_STALL_MS = 30_000;

/**
 * The outbox as this replay last read it, in seq order, with the blocked set computed once.
 * Read whole once per push; then kept current by our own changes (claims, and answers recorded,
 * which leave it), by appending operations queued meanwhile (a key range above the last seq),
 * and read whole again whenever something else may have changed it: a remap of ids other queued
 * operations mention, a failure settled (a new dead letter, a backoff, a rewritten body), or a
 * claim that found an operation changed or gone. A stale copy is never acted on blindly: the
 * claim compares it with the stored operation.
 */
class OutboxView {
  ops: OutboxOp[] = [];
  blocked = new Set<string>();
  lastSeq = 0;

  constructor(
    private readonly db: ParleyDb,
    private readonly probe?: ReplayProbe,
  ) {}

  async reload(): Promise<void> {
    this.probe?.onRead?.();
    this.ops = await this.db.outbox.orderBy(':id').toArray();
    this.lastSeq = this.ops.at(-1)?.seq ?? this.lastSeq;
    this.blocked = blockedOpIds(this.ops);
  }

  /** Picks up operations queued since the last read (cheap when there are none). */
  async appendNew(): Promise<void> {
    const added = await this.db.outbox.where(':id').above(this.lastSeq).toArray();
    if (added.length === 0) return;
    this.ops.push(...added);
    this.lastSeq = added.at(-1)!.seq;
    this.blocked = blockedOpIds(this.ops);
  }

  /** Our claim is stored: these are in flight now. */
  claimed(ops: readonly OutboxOp[]): void {
    const bySeq = new Map(ops.map((op) => [op.seq, op]));
    this.ops = this.ops.map((op) => bySeq.get(op.seq) ?? op);
  }

  /** These answers are recorded: they left the outbox, and may have remapped ids others mention. */
  async answered(ops: readonly OutboxOp[]): Promise<void> {
    const done = new Set(ops.map((op) => op.seq));
    this.ops = this.ops.filter((op) => !done.has(op.seq));
    // Their creations got real ids: every operation that mentions them was rewritten.
    const created = new Set(ops.flatMap(creates));
    if (created.size > 0 && this.ops.some((o) => mentionedIds(o).some((id) => created.has(id)))) await this.reload();
  }
}

/**
 * Sends what can go: independent operations are claimed in batches (one transaction each), sent
 * with up to IN_FLIGHT requests at once, and their answers recorded in batches (recordAnswers,
 * one transaction each). Order is kept where it matters — per entity and along temp ids (see
 * readyBatch): an operation is picked only once everything before it that it depends on has been
 * answered and recorded. A retryable failure stops the replay (what is in flight is still
 * settled; what was claimed but not yet sent is released, as if never claimed).
 *
 * The claims and the recording run beside the requests, never in their way: a free slot takes
 * the next claimed operation while the answers before it are being written, and the next batch is
 * claimed before the claimed ones run out. (Awaited in turn, the two transactions of every batch
 * left the slots empty while they ran.) An answered operation stays in the view as in flight until its answer is recorded, so nothing
 * that depends on it is picked before that.
 */
export async function push(deps: ReplayDeps): Promise<PushResult> {
  const pipeline = new Pipeline(deps);
  try {
    return await pipeline.run();
  } finally {
    // Also when the replay fails (IndexedDB trouble): no request of ours may outlive it, or the
    // next replay would recover an operation still on the wire and send it a second time.
    await pipeline.settleRunning();
    await pipeline.releaseUnsent();
    await pipeline.dropAnsweredBytes();
  }
}

class Pipeline {
  private readonly view: OutboxView;
  /** Claimed (stored as in flight), not yet sent, in seq order; with each one's state before the claim. */
  private toSend: Claimed[] = [];
  /** Requests on their way, by seq. */
  private readonly running = new Map<number, Promise<void>>();
  /** Answered, to be recorded by the next apply transaction. */
  private answers: apply.Answer[] = [];
  /** The claim transaction under way, if any (one at a time). */
  private claiming: Promise<void> | null = null;
  /** The apply transaction under way, if any (one at a time). */
  private recording: Promise<void> | null = null;
  /**
   * Answered uploads whose queued bytes are still stored: dropped when the replay ends (a
   * read-write transaction over the bytes, which every later read of them would wait for).
   */
  private bytesToDrop: string[] = [];
  /**
   * Whether the server offers tus (resumable-upload.ts `uploadsOffered`, remembered in the
   * database): asked once per replay, by the first upload, for all (not a read before each, nor
   * one OPTIONS per request slot while none has been answered). A failure to ask is asked again.
   */
  private tusOffered: Promise<Outcome<boolean>> | null = null;
  /**
   * The last claim found nothing that may go: no new claim until something changes what may (an
   * answer recorded, a request settled, an operation queued meanwhile is looked for then too).
   */
  private dry = false;
  /** Why the replay stops (a retryable failure, or no valid token). */
  private stop: PushResult | null = null;
  /** The backoff that held back the rest, as of the last pick. */
  private waitUntil: number | null = null;
  /** Something else changed the outbox: read it whole before the next pick. */
  private stale = false;
  /** Whether the server is known to honour Idempotency-Key (read with each claim, learned from answers). */
  private idempotent = false;
  /** An exception (not an answer) from one of the requests or transactions: rethrown once the rest has settled. */
  private crash: { error: unknown } | null = null;

  constructor(private readonly deps: ReplayDeps) {
    this.view = new OutboxView(deps.db, deps.probe);
  }

  private get halted(): boolean {
    return this.stop !== null || this.crash !== null;
  }

  async run(): Promise<PushResult> {
    await dropOrphanChunks(this.deps.db);
    await this.view.reload();
    for (let guard = 0; guard < 10_000_000; guard++) {
      while (!this.halted && this.running.size < IN_FLIGHT && this.toSend.length > 0) this.start(this.toSend.shift()!);
      // The next claim, made while a batch's worth is still to send: a claim waits for the
      // recording that IndexedDB began before it (both write the outbox), and what is left to send
      // keeps the slots busy meanwhile.
      if (!this.halted && !this.dry && this.claiming === null && this.toSend.length < CLAIM_AHEAD) this.claiming = this.background(this.claimNext(), () => (this.claiming = null));
      // Answers are recorded in batches: when many are waiting, or when a free slot has nothing to
      // send (what could go next may be waiting for exactly these answers).
      const starved = this.halted || (this.running.size < IN_FLIGHT && this.toSend.length === 0);
      if (this.recording === null && (this.answers.length >= BATCH_SIZE || (starved && this.answers.length > 0))) {
        this.recording = this.background(this.recordAnswers(), () => (this.recording = null));
      }
      const busy = [...this.running.values(), this.claiming, this.recording].filter((p): p is Promise<void> => p !== null);
      if (busy.length === 0 && (this.toSend.length === 0 || this.halted) && this.answers.length === 0) break;
      if (busy.length === 0) continue;
      await Promise.race(busy);
    }
    if (this.crash) throw this.crash.error;
    if (this.running.size > 0 || this.answers.length > 0) throw new Error('outbox replay did not settle');
    if (this.stop) return this.stop;
    return this.waitUntil === null ? { kind: 'done' } : { kind: 'waiting', until: this.waitUntil, reason: 'backoff' };
  }

  /** A transaction of the replay's own, run beside the requests; trouble in it stops the replay (rethrown at the end). */
  private background(work: Promise<void>, done: () => void): Promise<void> {
    return work
      .catch((error: unknown) => {
        this.crash ??= { error };
      })
      .finally(done);
  }

  /** Claims the next batch of independent operations in one transaction; `dry` when nothing can go now. */
  private async claimNext(): Promise<void> {
    for (;;) {
      if (this.stale) {
        this.stale = false;
        await this.view.reload();
      } else {
        await this.view.appendNew();
      }
      const next = readyBatch(this.view.ops, this.view.blocked, this.deps.now(), CLAIM_SIZE);
      this.waitUntil = next.waitUntil;
      if (next.ops.length === 0) {
        this.dry = true;
        return;
      }
      const { claimed, idempotent } = await claim(this.deps, next.ops);
      this.deps.probe?.onTransaction?.();
      this.idempotent = this.idempotent || idempotent;
      this.view.claimed(claimed.map((c) => c.op));
      this.toSend.push(...claimed);
      // Changed or cancelled meanwhile: look again.
      if (claimed.length < next.ops.length) this.stale = true;
      if (claimed.length > 0) return;
    }
  }

  private start({ op, bytesKeyClaimed }: Claimed): void {
    this.deps.probe?.onStart?.();
    const request = this.replayOne(op, bytesKeyClaimed)
      .catch((error: unknown) => {
        // Not an answer but trouble here (IndexedDB): stop sending and let the caller see it once
        // the rest has settled. The claim stays: the next replay recovers it as an orphan.
        this.crash ??= { error };
      })
      .finally(() => {
        this.running.delete(op.seq);
        // A failure settled may have changed what may go (a backoff, a dead letter).
        this.dry = false;
      });
    this.running.set(op.seq, request);
  }

  private async recordAnswers(): Promise<void> {
    const answers = this.answers;
    this.answers = [];
    this.deps.probe?.onRecording?.(true);
    try {
      this.bytesToDrop.push(...(await apply.recordAnswers(this.deps.db, answers, this.deps.now())));
    } finally {
      this.deps.probe?.onRecording?.(false);
    }
    this.deps.probe?.onTransaction?.();
    await this.view.answered(answers.map((a) => a.op));
    // What waited for these answers may go now.
    this.dry = false;
  }

  /** A replay must stop: keep the most urgent reason (sign-in first, then the earliest retry). */
  private stopWith(result: PushResult): void {
    const current = this.stop;
    if (current === null || result.kind === 'unauthenticated') this.stop = result;
    else if (current.kind === 'waiting' && result.kind === 'waiting' && result.until < current.until) this.stop = result;
  }

  /**
   * Waits for the requests on their way (their answers, if not recorded, are recovered next time)
   * and the replay's own transactions (a claim that ends now leaves operations to release).
   */
  async settleRunning(): Promise<void> {
    await Promise.all([...this.running.values(), this.claiming, this.recording]);
  }

  /**
   * At the end of a replay: the answered uploads' bytes not dropped yet. Trouble here is not the
   * replay's (its outcome stands): the next replay drops them (`dropOrphanChunks`).
   */
  async dropAnsweredBytes(): Promise<void> {
    const opIds = this.bytesToDrop;
    this.bytesToDrop = [];
    if (opIds.length === 0) return;
    const { db } = this.deps;
    await db.transaction('rw', db.uploadChunks, () => dropChunks(db, opIds)).catch(() => {});
  }

  /** Claimed but not sent (the replay stopped first): back to queued, as if never claimed. */
  async releaseUnsent(): Promise<void> {
    const unsent = this.toSend;
    this.toSend = [];
    if (unsent.length === 0) return;
    const { db } = this.deps;
    await db.transaction('rw', db.outbox, async () => {
      for (const { op, before } of unsent) {
        const current = await db.outbox.get(op.seq);
        if (current) await db.outbox.update(op.seq, lifecycle.release(current, before));
      }
    });
  }

  /** Sends one claimed operation and settles it: an answer to record, or a failure stored. */
  private async replayOne(op: OutboxOp, bytesKeyClaimed = false): Promise<void> {
    const { deps } = this;
    if (op.cancelledUpload) return this.replayCancelled(op);
    if (op.body.kind === 'file.upload') {
      const resumable = await this.resumable(op);
      if (resumable.kind !== 'ok') return this.failed(op, resumable, 'before');
      if (resumable.value) return this.replayResumable(op, bytesKeyClaimed);
    }
    if (op.body.kind === 'file.upload' && !this.idempotent) {
      if (!op.snapshot) {
        const snapshot = await takeUploadSnapshot(deps, op.body.conversationId);
        if (snapshot.kind !== 'ok') return this.failed(op, snapshot, 'before');
        const taken = lifecycle.snapshotTaken(snapshot.value);
        op = { ...op, ...taken };
        await apply.writeOutbox(deps.db, op.seq, { kind: 'update', change: taken });
      } else if (op.outcomeUnknown) {
        const found = await verifyUpload(deps, op);
        if (found.kind !== 'ok') return this.failed(op, found, 'before');
        if (found.value) {
          this.answers.push({ op, effect: unlessCancelled(found.value.id, apply.fileUploaded(found.value)) });
          return;
        }
      }
    }

    const outcome = await send(deps, op);
    const settled = answered(op, outcome, 'request') ? settle(op, outcome, this.context('request')) : null;
    if (settled?.kind === 'done') {
      if (settled.learned === 'serverIdempotency') this.idempotent = true;
      if (settled.learned) await setMeta(deps.db, settled.learned, true);
      // A delete answered 404 has no answer to apply but the deletion itself.
      this.answers.push({ op, effect: outcome.kind === 'ok' ? outcome.value : deletion(op) });
      return;
    }
    if (op.body.kind === 'file.upload') {
      // Cancelled while its request was out: the cancellation goes on at once; a request whose
      // answer was lost may have made the file.
      const current = await cancelledMeanwhile(deps.db, op, outcome.kind === 'network' || outcome.kind === 'server');
      if (current) return this.replayCancelled(current);
    }
    return this.failed(op, outcome, 'request');
  }

  /** What settle.ts needs besides the operation and the outcome. */
  private context(step: SettleContext['step']): SettleContext {
    const { deps } = this;
    return { now: deps.now(), step, delay: (attempts) => backoffDelay(attempts, deps.random, deps.backoff.baseMs, deps.backoff.maxMs) };
  }

  /**
   * Whether this upload goes through tus (resumable-upload.ts). One that has begun so keeps to it;
   * one already sent as POST /v1/files whose outcome is unknown keeps to that (its verification
   * is that path's); otherwise: does the server offer /v1/uploads (asked once, remembered).
   */
  private async resumable(op: OutboxOp): Promise<Outcome<boolean>> {
    const tus = this.deps.resumable;
    if (op.tus) {
      if (tus) return { kind: 'ok', value: true, replayed: false, serverTime: null };
      // Begun through tus (by the app's worker); this replayer cannot go on with it (the service
      // worker's flush has no tus client): it waits for the app.
      return { kind: 'server', status: 0, message: 'this resumable upload continues when the app is open' };
    }
    if (!tus || op.outcomeUnknown) return { kind: 'ok', value: false, replayed: false, serverTime: null };
    this.tusOffered ??= tus.offered(this.tusDeps());
    const offered = await this.tusOffered;
    if (offered.kind !== 'ok') this.tusOffered = null;
    return offered;
  }

  private tusDeps() {
    const { deps } = this;
    return { ...deps, stallMs: deps.uploadStallMs, patchBytes: deps.uploadPatchBytes, cancelPollMs: deps.uploadCancelPollMs, idempotent: this.idempotent };
  }

  /** A cancelled upload (lifecycle.ts `cancelled`), ended on the server by cancellation.ts. */
  private async replayCancelled(op: OutboxOp): Promise<void> {
    const { deps } = this;
    const cancellationDeps: CancellationDeps = { ...deps, stallMs: deps.uploadStallMs ?? UPLOAD_STALL_MS };
    const ended = await endCancelledUpload(cancellationDeps, op, idempotencyKeyOf(op), this.idempotent);
    if (ended.kind !== 'ok') return this.failed(op, ended, 'after');
    this.answers.push({ op, effect: ended.value });
  }

  /**
   * Sends (or resumes) an upload through tus; its completion names the file, which is then read as
   * it is now (GET /v1/files/:id) and applied exactly as POST /v1/files's answer would be.
   */
  private async replayResumable(op: OutboxOp, bytesKeyClaimed: boolean): Promise<void> {
    const { deps } = this;
    const onProgress =
      deps.onUploadProgress &&
      ((sent: number, total: number, resumed: boolean, onServer: number) => deps.onUploadProgress!(op.entityId, sent, total, resumed, onServer));
    const attempt = await deps.resumable!.send(this.tusDeps(), op, idempotencyKeyOf(op), onProgress, bytesKeyClaimed);
    // The user cancelled it while it ran (the transfer was aborted), or just as it completed or
    // failed: whatever the attempt's outcome, end it now, under the same claim.
    const current = await cancelledMeanwhile(deps.db, op);
    if (current) return this.replayCancelled(await cancelledAfterTransfer(deps.db, current, attempt));
    if (attempt.outcome.kind !== 'ok') {
      // Bytes moved: the next try need not wait as if nothing had (the backoff starts again).
      if (attempt.progressed) await apply.writeOutbox(deps.db, op.seq, { kind: 'update', change: lifecycle.progressed });
      return this.failed(op, attempt.outcome, attempt.sent ? 'request' : 'before');
    }
    const fileId = attempt.outcome.value;
    // The completion's answer carried the file (as it is now: it was just made), else read it.
    if (attempt.file) {
      this.answers.push({ op, effect: unlessCancelled(fileId, apply.fileUploaded(attempt.file)) });
      return;
    }
    const file = await call(deps, { method: 'GET', path: `v1/files/${fileId}` }, FileObject);
    if (file.kind === 'ok') {
      this.answers.push({ op, effect: unlessCancelled(fileId, apply.fileUploaded(file.value)) });
      return;
    }
    if (gone(file) && op.body.kind === 'file.upload') {
      // Made, then deleted (elsewhere) before we could read it: ours, and gone.
      const body = op.body;
      const stub = { id: fileId, message_id: body.messageId ?? body.tempMessageId ?? fileId } as FileObjectT;
      this.answers.push({ op, effect: unlessCancelled(fileId, apply.fileUploaded(stub, true)) });
      return;
    }
    // The file exists (the upload is complete): the next attempt's HEAD names it again.
    return this.failed(op, file, 'after');
  }

  private async failed(op: OutboxOp, outcome: Outcome<unknown>, step: SettleContext['step']): Promise<void> {
    const result = await settleFailure(this.deps, op, outcome, this.context(step));
    this.stale = true; // its stored state changed (queued with a backoff, failed, rewritten or gone)
    if (result) this.stopWith(result);
  }
}

/** A claimed operation as stored, its state before the claim, and whether the claim noted its creation key. */
interface Claimed {
  op: OutboxOp;
  before: OutboxOp;
  bytesKeyClaimed: boolean;
}

/**
 * Marks these operations in flight before anything is sent, in one transaction, and reads
 * whether the server is known to be idempotent. Skips any that is no longer queued as read, or
 * whose body changed meanwhile (the client amended it). An upload that will go whole with its tus
 * creation gets its creation key noted in the same write (resumable-upload.ts `bytesKeyAtClaim`;
 * `bytesKeyClaimed`). Returns the claimed ones as stored.
 */
async function claim(
  deps: ReplayDeps,
  ops: readonly OutboxOp[],
): Promise<{ claimed: Claimed[]; idempotent: boolean }> {
  const { db } = deps;
  return db.transaction('rw', db.outbox, db.meta, async () => {
    const stored = await db.outbox.bulkGet(ops.map((op) => op.seq));
    const idempotent = await serverSupportsIdempotency(db);
    const resumable = deps.resumable;
    const tus = resumable !== undefined && ops.some((op) => op.body.kind === 'file.upload') && (await getMeta(db, 'uploads'))?.server === 'tus';
    const claimed: Claimed[] = [];
    const now = deps.now();
    ops.forEach((op, i) => {
      const current = stored[i];
      if (!current || current.state !== 'queued' || JSON.stringify(current.body) !== JSON.stringify(op.body)) return;
      const noted = tus && resumable ? resumable.atClaim(current, idempotencyKeyOf(current), { tus, idempotent }, deps.uploadPatchBytes) : null;
      const change = { ...lifecycle.claim(current, now), ...(noted ? lifecycle.tusNoted(noted) : {}) };
      claimed.push({ op: { ...current, ...change }, before: current, bytesKeyClaimed: noted !== null });
    });
    await db.outbox.bulkPut(claimed.map((c) => c.op));
    return { claimed, idempotent };
  });
}

/** Sends the operation's request; on success returns how to apply it. */
async function send(deps: ReplayDeps, op: OutboxOp): Promise<Outcome<apply.Effect>> {
  const key = idempotencyKeyOf(op);
  const body = op.body;
  switch (body.kind) {
    case 'conversation.create': {
      const input = partyOf(body);
      const out = await call(deps, { method: 'POST', path: 'v1/conversations', json: input, idempotencyKey: key }, Conversation);
      if (out.kind === 'refused' && out.error?.code === 'conversation_exists' && out.error.existing_id) {
        // Made by another device, or by our own earlier attempt whose response was lost: adopt it.
        const existing = await call(deps, { method: 'GET', path: `v1/conversations/${out.error.existing_id}` }, Conversation);
        return map(existing, (c) => apply.conversationCreated(c));
      }
      return map(await asItIsNow(deps, out, (c) => `v1/conversations/${c.id}`, Conversation), (c, deleted) => apply.conversationCreated(c, deleted));
    }
    case 'conversation.update': {
      const json: Record<string, unknown> = { ...body.patch };
      // The contract clears with an empty string; every server accepts that form.
      if (json.pinned_message_id === null) json.pinned_message_id = '';
      if (json.archived_at === null) json.archived_at = '';
      const out = await call(deps, { method: 'PUT', path: `v1/conversations/${op.entityId}`, json, idempotencyKey: key }, Conversation);
      return map(await asItIsNow(deps, out, (c) => `v1/conversations/${c.id}`, Conversation), (c, deleted) => apply.conversationUpdated(c, deleted));
    }
    case 'conversation.delete': {
      const out = await call(deps, { method: 'DELETE', path: `v1/conversations/${op.entityId}`, idempotencyKey: key }, null);
      return map(out, () => apply.conversationDeleted);
    }
    case 'file.upload': {
      const chunks = await readChunks(deps.db, op.id, body.chunkCount);
      if (!chunks) {
        return { kind: 'refused', status: 0, code: null, error: null, message: 'the bytes of this upload are missing on this device' };
      }
      const form = new FormData();
      if (body.messageId) form.append('message_id', body.messageId);
      else form.append('conversation_id', body.conversationId);
      form.append('file', new Blob(chunks, { type: body.fileType }), body.filename);
      const onUploadProgress = deps.onUploadProgress && ((sent: number, total: number) => deps.onUploadProgress!(op.entityId, sent, total));
      // No fixed limit for the transfer: abandoned when stalled, then sent again with the same key.
      const stallMs = deps.uploadStallMs ?? UPLOAD_STALL_MS;
      const out = await call(deps, { method: 'POST', path: 'v1/files', form, idempotencyKey: key, onUploadProgress, stallMs }, FileObject);
      return map(await asItIsNow(deps, out, (f) => `v1/files/${f.id}`, FileObject), (f, deleted) => unlessCancelled(f.id, apply.fileUploaded(f, deleted)));
    }
    case 'file.rename': {
      const out = await call(deps, { method: 'PUT', path: `v1/files/${op.entityId}`, json: { filename: body.filename }, idempotencyKey: key }, FileObject);
      return map(await asItIsNow(deps, out, (f) => `v1/files/${f.id}`, FileObject), (f, deleted) => apply.fileRenamed(f, deleted));
    }
    case 'file.delete': {
      const out = await call(deps, { method: 'DELETE', path: `v1/files/${op.entityId}`, idempotencyKey: key }, null);
      return map(out, () => apply.fileDeleted);
    }
  }
}

function map<T, U>(out: Outcome<T | Gone<T>>, f: (value: T, deleted: boolean) => U): Outcome<U> {
  if (out.kind !== 'ok') return out;
  const deleted = out.value instanceof Gone;
  return { ...out, value: f(deleted ? (out.value as Gone<T>).object : (out.value as T), deleted) };
}

/** The object of a replayed answer that has been deleted since. */
class Gone<T> {
  constructor(readonly object: T) {}
}

/**
 * An idempotent server replays the answer it stored when it first acted: the object as it was
 * THEN. It may have changed since (another device's mute) or be gone (deleted elsewhere), and a
 * pull since may already have brought that news, which the change feed will not repeat: so ask
 * for the object as it is now. Replays are rare (a lost answer, then a retry): one GET each.
 */
async function asItIsNow<T>(
  deps: ReplayDeps,
  out: Outcome<T>,
  path: (object: T) => string,
  schema: Parameters<typeof call<T>>[2],
): Promise<Outcome<T | Gone<T>>> {
  if (out.kind !== 'ok' || !out.replayed) return out;
  const now = await call(deps, { method: 'GET', path: path(out.value) }, schema);
  if (gone(now)) return { ...out, value: new Gone(out.value) };
  return now.kind === 'ok' ? { ...now, replayed: true } : now;
}

/** The effect of a delete the server answered 404 (settle.ts: done): the object is gone. */
function deletion(op: OutboxOp): apply.Effect {
  return op.body.kind === 'conversation.delete' ? apply.conversationDeleted : apply.fileDeleted;
}

/**
 * Records a failure: what settle.ts makes of it, written to the row as stored now (with what it
 * teaches about the server, and the views it changes) in one transaction.
 */
async function settleFailure(
  deps: ReplayDeps,
  op: OutboxOp,
  outcome: Outcome<unknown>,
  context: SettleContext,
): Promise<PushResult | null> {
  const { db } = deps;
  return db.transaction('rw', answerScope(db), async () => {
    const current = await db.outbox.get(op.seq);
    if (!current) return null;
    const settled = settle(current, outcome, context);
    if (settled.kind === 'done') return null; // not a failure (the caller records answers)
    if (settled.learned) await setMeta(db, settled.learned, true);
    await apply.writeOutbox(db, op.seq, settled.write);
    if (settled.rebuild === 'entity') await rebuildViews(db, { conversations: [op.entityId] }, context.now);
    if (settled.rebuild === 'mentioned') await rebuildViews(db, { conversations: mentionedIds(op), files: mentionedIds(op) }, context.now);
    return settled.stop;
  });
}
