// Outbox replay: send queued operations in order, one at a time, and settle each by the
// server's answer. Exactly-once rests on three things:
//  1. An operation is marked in flight (and "outcome unknown" is remembered) before it is sent,
//     so a crash or a lost response is never mistaken for "not sent".
//  2. Every request carries Idempotency-Key = operation id: a server that supports it replays
//     the first answer instead of acting twice.
//  3. For a server that ignores the key, a retry after an unknown outcome is made safe per kind:
//     - PUT (update, rename) sets absolute values: sending it again is harmless.
//     - DELETE again answers 404 when the first one worked: taken as success.
//     - Conversation create: the server allows one conversation per contact/group, so a repeat
//       answers 409 conversation_exists with existing_id, and we adopt that conversation.
//     - File upload is the only truly non-idempotent request. See verifyUpload.
import { Conversation, FileObject, FilePage, type FileObject as FileObjectT } from '../schemas';
import * as apply from './apply';
import { getMeta, setMeta, type ParleyDb } from './db';
import { call, type HttpDeps, type Outcome } from './http';
import {
  backoffDelay,
  blockedOpIds,
  creates,
  isTempId,
  mentionedIds,
  retryAfterMs,
  type OutboxOp,
  type UploadSnapshot,
} from './operations';
import { rebuildViews } from './rebase';

export interface ReplayDeps extends HttpDeps {
  db: ParleyDb;
  now: () => number;
  random: () => number;
  backoff: { baseMs: number; maxMs: number };
}

export type PushResult =
  | { kind: 'done' }
  /** A retryable failure (or a backoff still running): try again at `until` (ms). */
  | { kind: 'waiting'; until: number; reason: 'network' | 'server' | 'rate_limited' | 'backoff' }
  | { kind: 'unauthenticated'; message: string };

/** The key sent with an operation's request; a new suffix once a 4xx made the old one useless. */
export function idempotencyKeyOf(op: OutboxOp): string {
  return op.keyVersion ? `${op.id}.${op.keyVersion}` : op.id;
}

/**
 * Call once per engine start, holding the sync lock: anything still in flight belongs to a
 * replay that died (tab closed, crash) — its outcome is unknown and must be verified.
 */
export async function recoverInflight(db: ParleyDb): Promise<number> {
  return db.outbox.where('state').equals('inflight').modify({ state: 'queued', outcomeUnknown: true });
}

export async function serverSupportsIdempotency(db: ParleyDb): Promise<boolean> {
  return (await getMeta<boolean>(db, apply.IDEMPOTENCY_KEY)) === true;
}

type Next = { op: OutboxOp } | { wait: number } | null;

/**
 * The outbox as this replay last read it, in seq order, with the blocked set computed once.
 * Read whole once per push; then kept current by our own changes (re-reading only the settled
 * operation), by appending operations queued meanwhile (a key range above the last seq), and
 * read whole again whenever something else may have changed it: a remap of ids other queued
 * operations mention, a new dead letter, or a claim that found the operation changed or gone.
 * A stale copy is never acted on blindly: `claim` compares it with the stored operation.
 */
class OutboxView {
  ops: OutboxOp[] = [];
  blocked = new Set<string>();
  lastSeq = 0;
  /** Whole-outbox reads (for tests: one per push unless something forced a reload). */
  static reads = 0;

  constructor(private readonly db: ParleyDb) {}

  async reload(): Promise<void> {
    OutboxView.reads++;
    this.ops = await this.db.outbox.orderBy(':id').toArray();
    this.lastSeq = this.ops.at(-1)?.seq ?? this.lastSeq;
    this.blocked = blockedOpIds(this.ops);
  }

  /** Picks up operations queued since the last read (cheap when there are none). */
  async appendNew(): Promise<void> {
    const added = await this.db.outbox.where(':id').above(this.lastSeq).toArray();
    if (added.length === 0) return;
    this.ops.push(...added);
    this.lastSeq = added.at(-1)!.seq!;
    this.blocked = blockedOpIds(this.ops);
  }

  pick(now: number): Next {
    for (const op of this.ops) {
      if (op.state !== 'queued' || this.blocked.has(op.id)) continue;
      // A temp id it does not create itself means that create has not been replayed (it failed,
      // or waits behind a backoff): this one waits too.
      const own = new Set(creates(op));
      if (mentionedIds(op).some((id) => isTempId(id) && !own.has(id))) continue;
      if (op.nextAttemptAt > now) return { wait: op.nextAttemptAt };
      return { op };
    }
    return null;
  }

  /** After `op` was settled by this replay: take its stored state (or its removal) into account. */
  async settled(op: OutboxOp): Promise<void> {
    const current = await this.db.outbox.get(op.seq!);
    const index = this.ops.findIndex((o) => o.seq === op.seq);
    if (!current) {
      if (index >= 0) this.ops.splice(index, 1);
      // Its creations got real ids: every operation that mentions them was rewritten.
      const created = new Set(creates(op));
      if (created.size > 0 && this.ops.some((o) => mentionedIds(o).some((id) => created.has(id)))) await this.reload();
      return;
    }
    if (current.state === 'failed' || index < 0) {
      await this.reload();
      return;
    }
    this.ops[index] = current;
  }
}

export async function push(deps: ReplayDeps): Promise<PushResult> {
  const view = new OutboxView(deps.db);
  await view.reload();
  for (let guard = 0; guard < 100_000; guard++) {
    await view.appendNew();
    const next = view.pick(deps.now());
    if (next === null) return { kind: 'done' };
    if ('wait' in next) return { kind: 'waiting', until: next.wait, reason: 'backoff' };
    const result = await replayOne(deps, next.op);
    if (result === STALE) await view.reload();
    else if (result) return result;
    else await view.settled(next.op);
  }
  throw new Error('outbox replay did not settle');
}

/** Whole-outbox reads made by replays so far (a regression guard for tests). */
export function outboxReads(): number {
  return OutboxView.reads;
}

const STALE = Symbol('stale');

/**
 * Settles one operation. Returns a PushResult when the replay must stop, null to go on, STALE
 * when the operation had changed or gone meanwhile (nothing was sent).
 */
async function replayOne(deps: ReplayDeps, op: OutboxOp): Promise<PushResult | null | typeof STALE> {
  const idempotent = await serverSupportsIdempotency(deps.db);

  if (op.body.kind === 'file.upload' && !idempotent) {
    if (!op.snapshot) {
      const snapshot = await takeUploadSnapshot(deps, op.body.conversationId);
      if (snapshot.kind !== 'ok') return settleFailure(deps, op, snapshot, false);
      op = { ...op, snapshot: snapshot.value };
      await deps.db.outbox.update(op.seq!, { snapshot: op.snapshot });
    } else if (op.outcomeUnknown) {
      const found = await verifyUpload(deps, op);
      if (found.kind !== 'ok') return settleFailure(deps, op, found, false);
      if (found.value) {
        await apply.fileUploaded(found.value)(deps.db, op, deps.now());
        return null;
      }
    }
  }

  if (!(await claim(deps, op))) return STALE; // changed or cancelled meanwhile: look again
  const outcome = await send(deps, op);
  if (outcome.kind === 'ok') {
    if (outcome.replayed) await setMeta(deps.db, apply.IDEMPOTENCY_KEY, true);
    await outcome.value(deps.db, op, deps.now());
    return null;
  }
  return settleFailure(deps, op, outcome, true);
}

/** Marks the operation in flight before anything is sent. False if it is no longer queued. */
async function claim(deps: ReplayDeps, op: OutboxOp): Promise<boolean> {
  return deps.db.transaction('rw', deps.db.outbox, async () => {
    const current = await deps.db.outbox.get(op.seq!);
    if (!current || current.state !== 'queued' || JSON.stringify(current.body) !== JSON.stringify(op.body)) {
      return false;
    }
    await deps.db.outbox.update(op.seq!, {
      state: 'inflight',
      attempts: current.attempts + 1,
      firstSentAt: current.firstSentAt ?? deps.now(),
    });
    return true;
  });
}

type Applier = (db: ParleyDb, op: OutboxOp, nowMs: number) => Promise<void>;

/** Sends the operation's request; on success returns how to apply it. */
async function send(deps: ReplayDeps, op: OutboxOp): Promise<Outcome<Applier>> {
  const key = idempotencyKeyOf(op);
  const body = op.body;
  switch (body.kind) {
    case 'conversation.create': {
      const input = body.contact_id !== null ? { contact_id: body.contact_id } : { group_id: body.group_id! };
      const out = await call(deps, { method: 'POST', path: 'v1/conversations', json: input, idempotencyKey: key }, Conversation);
      if (out.kind === 'refused' && out.error?.code === 'conversation_exists' && out.error.existing_id) {
        // Made by another device, or by our own earlier attempt whose response was lost: adopt it.
        const existing = await call(deps, { method: 'GET', path: `v1/conversations/${out.error.existing_id}` }, Conversation);
        return map(existing, (c) => apply.conversationCreated(c));
      }
      return map(out, (c) => apply.conversationCreated(c));
    }
    case 'conversation.update': {
      const json: Record<string, unknown> = { ...body.patch };
      // The contract clears with an empty string; every server accepts that form.
      if (json.pinned_message_id === null) json.pinned_message_id = '';
      if (json.archived_at === null) json.archived_at = '';
      const out = await call(deps, { method: 'PUT', path: `v1/conversations/${op.entityId}`, json, idempotencyKey: key }, Conversation);
      return map(out, (c) => apply.conversationUpdated(c));
    }
    case 'conversation.delete': {
      const out = await call(deps, { method: 'DELETE', path: `v1/conversations/${op.entityId}`, idempotencyKey: key }, null);
      return goneIsDone(out, apply.conversationDeleted);
    }
    case 'file.upload': {
      const chunks = await deps.db.uploadChunks.where('opId').equals(op.id).sortBy('index');
      if (chunks.length !== body.chunkCount) {
        return { kind: 'refused', status: 0, error: null, message: 'the bytes of this upload are missing on this device' };
      }
      const form = new FormData();
      if (body.messageId) form.append('message_id', body.messageId);
      else form.append('conversation_id', body.conversationId);
      form.append('file', new Blob(chunks.map((c) => c.bytes), { type: body.fileType }), body.filename);
      const out = await call(deps, { method: 'POST', path: 'v1/files', form, idempotencyKey: key }, FileObject);
      return map(out, (f) => apply.fileUploaded(f));
    }
    case 'file.rename': {
      const out = await call(deps, { method: 'PUT', path: `v1/files/${op.entityId}`, json: { filename: body.filename }, idempotencyKey: key }, FileObject);
      return map(out, (f) => apply.fileRenamed(f));
    }
    case 'file.delete': {
      const out = await call(deps, { method: 'DELETE', path: `v1/files/${op.entityId}`, idempotencyKey: key }, null);
      return goneIsDone(out, apply.fileDeleted);
    }
  }
}

function map<T, U>(out: Outcome<T>, f: (value: T) => U): Outcome<U> {
  return out.kind === 'ok' ? { ...out, value: f(out.value) } : out;
}

/** A delete answered 404 already happened (our lost first attempt, or someone else). */
function goneIsDone(out: Outcome<unknown>, applier: Applier): Outcome<Applier> {
  if (out.kind === 'ok' || (out.kind === 'refused' && out.status === 404)) {
    return { kind: 'ok', value: applier, replayed: out.kind === 'ok' && out.replayed, serverTime: null };
  }
  return out;
}

/**
 * Records a failure. `sent`: the operation's own request went out (vs. a preparatory GET).
 * Network errors and 5xx leave the outcome unknown; 429 and 4xx say the server did not act.
 */
async function settleFailure(
  deps: ReplayDeps,
  op: OutboxOp,
  outcome: Exclude<Outcome<unknown>, { kind: 'ok' }>,
  sent: boolean,
): Promise<PushResult | null> {
  const now = deps.now();
  const { db } = deps;
  return db.transaction('rw', allTablesOf(db), async () => {
    const current = await db.outbox.get(op.seq!);
    if (!current) return null;
    const attempts = Math.max(1, current.attempts);
    const requeue = {
      state: 'queued' as const,
      error: { status: 'status' in outcome ? outcome.status : 0, code: outcome.kind, message: outcome.message },
    };
    switch (outcome.kind) {
      case 'network':
      case 'server': {
        const until = now + backoffDelay(attempts, deps.random, deps.backoff.baseMs, deps.backoff.maxMs);
        await db.outbox.update(op.seq!, { ...requeue, outcomeUnknown: current.outcomeUnknown || sent, nextAttemptAt: until });
        return { kind: 'waiting', until, reason: outcome.kind };
      }
      case 'rate_limited': {
        const hinted = retryAfterMs(outcome.retryAfter, now);
        const until = now + (hinted ?? backoffDelay(attempts, deps.random, deps.backoff.baseMs, deps.backoff.maxMs));
        await db.outbox.update(op.seq!, { ...requeue, nextAttemptAt: until });
        return { kind: 'waiting', until, reason: 'rate_limited' };
      }
      case 'unauthenticated': {
        // Not the operation's fault: it waits, unchanged, until the user signs in again.
        await db.outbox.update(op.seq!, { state: 'queued', attempts: Math.max(0, current.attempts - (sent ? 1 : 0)) });
        return { kind: 'unauthenticated', message: outcome.message };
      }
      case 'refused': {
        if (op.body.kind === 'conversation.update' && lacksLastOpened(outcome)) {
          // A server with only the brief's interface has no last_opened_at: not the user's
          // fault and nothing to retry. Send the rest, and stop reporting opens to this server
          // (markOpened becomes a no-op; the field then stays what the server says, null).
          const { last_opened_at: _dropped, ...rest } = op.body.patch;
          await db.meta.put({ key: apply.NO_LAST_OPENED_KEY, value: true });
          if (Object.keys(rest).length === 0) {
            await db.outbox.delete(op.seq!);
            await rebuildViews(db, { conversations: [op.entityId] }, now);
          } else {
            await db.outbox.update(op.seq!, {
              state: 'queued',
              body: { kind: 'conversation.update', patch: rest },
              keyVersion: (current.keyVersion ?? 0) + 1, // a different body needs a different key
            });
          }
          return null;
        }
        const code = outcome.error?.code ?? `http_${outcome.status}`;
        await db.outbox.update(op.seq!, {
          state: 'failed',
          error: { status: outcome.status, code, message: outcome.message },
          // The server answered: it did not act. A user's "retry" must get a fresh hearing, not
          // the stored refusal an idempotent server would replay for the old key.
          outcomeUnknown: false,
          keyVersion: (current.keyVersion ?? 0) + 1,
        });
        await rebuildViews(db, { conversations: mentionedIds(op), files: mentionedIds(op) }, now);
        return null;
      }
    }
  });
}

function lacksLastOpened(outcome: Extract<Outcome<unknown>, { kind: 'refused' }>): boolean {
  return outcome.status === 400 && outcome.error?.code === 'parameter_unknown' && outcome.error.param === 'last_opened_at';
}

function allTablesOf(db: ParleyDb) {
  return apply.allTables(db);
}

// ---- Uploads against a server without idempotency ----
//
// Before the first send we record the newest file of the target conversation and the server's
// clock (snapshot). If the response is then lost, before sending again we list the
// conversation's files newer than that snapshot (the list is newest-first by an internal
// sequence, so everything created since sits before the snapshot's file) and look for one with
// our filename and byte size (and message, when attaching to one), created no earlier than the
// snapshot's server time, that is not already the result of another of our uploads (idAliases).
// If found, that is our upload: adopt it instead of sending. If not, the server never acted:
// send. The residual risk is another device uploading a file of identical name and size into
// the same conversation in that window; we would then show theirs as ours — no data is lost
// on the server and no duplicate is created. A request still being processed when we check
// would be missed; the backoff before any retry makes that window small, and a server with
// idempotency closes it entirely (we skip all this once we have seen Idempotent-Replayed).

async function takeUploadSnapshot(deps: ReplayDeps, conversationId: string): Promise<Outcome<UploadSnapshot>> {
  const out = await call(deps, { method: 'GET', path: 'v1/files', query: { conversation_id: conversationId, limit: 1 } }, FilePage);
  if (out.kind !== 'ok') return out;
  return { ...out, value: { newestFileId: out.value.data[0]?.id ?? null, serverTime: out.serverTime } };
}

async function verifyUpload(deps: ReplayDeps, op: OutboxOp): Promise<Outcome<FileObjectT | null>> {
  if (op.body.kind !== 'file.upload' || !op.snapshot) return { kind: 'ok', value: null, replayed: false, serverTime: null };
  const body = op.body;
  const snapshot = op.snapshot;
  const candidates: FileObjectT[] = [];
  let startingAfter: string | undefined;
  scan: for (;;) {
    const page = await call(
      deps,
      { method: 'GET', path: 'v1/files', query: { conversation_id: body.conversationId, limit: 100, starting_after: startingAfter } },
      FilePage,
    );
    if (page.kind !== 'ok') return page;
    for (const file of page.value.data) {
      if (file.id === snapshot.newestFileId) break scan;
      const matches =
        file.filename === body.filename &&
        file.file_size === body.size &&
        (body.messageId === null || file.message_id === body.messageId) &&
        (snapshot.serverTime === null || file.created_at >= snapshot.serverTime - 1);
      if (matches && (await deps.db.idAliases.where('realId').equals(file.id).count()) === 0) candidates.push(file);
    }
    if (!page.value.has_more || page.value.data.length === 0) break;
    startingAfter = page.value.data.at(-1)!.id;
  }
  // Oldest first: if several match, the earliest one created after our first send is ours.
  return { kind: 'ok', value: candidates.at(-1) ?? null, replayed: false, serverTime: null };
}

