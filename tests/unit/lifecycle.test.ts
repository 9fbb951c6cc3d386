// An outbox operation's life (lib/sync/outbox/lifecycle.ts, and settle.ts: which answer leads to
// which transition), as tables: a stored operation × what happens → the exact change to store.
// Every transition of lifecycle.ts's diagram has rows, and so do the header's rules on
// outcomeUnknown, keyVersion, attempts and nextAttemptAt.
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../lib/sync/core/http';
import * as lifecycle from '../../lib/sync/outbox/lifecycle';
import type { OpBody, OutboxOp, UploadBody } from '../../lib/sync/outbox/operations';
import { settle, type Settlement, type SettleContext } from '../../lib/sync/outbox/settle';

const NOW = 1_000_000;
/** A visible backoff: 1 s per attempt (the jitter is the replay's, not the lifecycle's). */
const delay = (attempts: number) => attempts * 1000;

const upload: UploadBody = {
  kind: 'file.upload',
  conversationId: 'conv1',
  messageId: null,
  tempMessageId: 'local_msg',
  filename: 'a.txt',
  fileType: 'text/plain',
  size: 3,
  chunkCount: 1,
};
const update: OpBody = { kind: 'conversation.update', patch: { is_pinned: true, last_opened_at: 5 } };

function op(fields: Partial<OutboxOp> = {}): OutboxOp {
  return {
    seq: 7,
    id: 'op1',
    entity: 'conversation',
    entityId: 'conv1',
    body: { kind: 'conversation.update', patch: { is_pinned: true } },
    state: 'queued',
    attempts: 0,
    nextAttemptAt: 0,
    firstSentAt: null,
    outcomeUnknown: false,
    error: null,
    createdAt: 1,
    ...fields,
  };
}

// Stored operations, by state.
const fresh = op();
const queuedSent = op({ attempts: 2, firstSentAt: 500, nextAttemptAt: NOW + 5000, error: { status: 503, code: 'server', message: 'down' } });
const inflight = op({ state: 'inflight', attempts: 3, firstSentAt: 500, nextAttemptAt: NOW - 10 });
const inflightFirst = op({ state: 'inflight', attempts: 1, firstSentAt: NOW });
const inflightUnknown = op({ state: 'inflight', attempts: 2, firstSentAt: 500, outcomeUnknown: true, keyVersion: 1 });
const inflightLater = op({ state: 'inflight', attempts: 1, firstSentAt: 500, nextAttemptAt: NOW + 60_000 });
const inflightUpdate = op({ state: 'inflight', attempts: 1, firstSentAt: 500, body: update });
const inflightOpenOnly = op({ state: 'inflight', attempts: 1, firstSentAt: 500, body: { kind: 'conversation.update', patch: { last_opened_at: 5 } } });
const inflightConvDelete = op({ state: 'inflight', attempts: 1, firstSentAt: 500, body: { kind: 'conversation.delete' } });
const inflightFileDelete = op({ state: 'inflight', attempts: 1, firstSentAt: 500, entity: 'file', entityId: 'local_f', body: { kind: 'file.delete' } });
const tus = { url: 'http://x/v1/uploads/u1', generation: 0 };
const inflightUpload = op({ state: 'inflight', attempts: 1, firstSentAt: 500, entity: 'file', entityId: 'local_f', body: upload, tus });
const inflightCancelled = op({
  state: 'inflight',
  attempts: 1,
  firstSentAt: 500,
  entity: 'file',
  entityId: 'local_f',
  body: { kind: 'file.delete' },
  cancelledUpload: { upload, fileId: null },
  tus,
  keyVersion: 1,
});
const failed = op({ state: 'failed', attempts: 4, firstSentAt: 500, nextAttemptAt: NOW + 10, error: { status: 422, code: 'bad', message: 'no' }, keyVersion: 1 });

const network: Outcome<unknown> = { kind: 'network', message: 'reset' };
const offline: Outcome<unknown> = { kind: 'network', message: 'offline', unreachable: true };
const server503: Outcome<unknown> = { kind: 'server', status: 503, message: 'down' };
const limited: Outcome<unknown> = { kind: 'rate_limited', retryAfter: '7', message: 'slow down' };
const limitedNoHint: Outcome<unknown> = { kind: 'rate_limited', retryAfter: null, message: 'slow down' };
const inProgress: Outcome<unknown> = { kind: 'in_progress', retryAfter: '2', message: 'running' };
const inProgressNoHint: Outcome<unknown> = { kind: 'in_progress', retryAfter: null, message: 'running' };
const signIn: Outcome<unknown> = { kind: 'unauthenticated', message: 'expired' };
const wiped: Outcome<unknown> = { kind: 'unauthenticated', message: 'wiped', wiped: true };
const refused422: Outcome<unknown> = {
  kind: 'refused',
  status: 422,
  code: 'parameter_invalid',
  error: { type: 'invalid_request', code: 'parameter_invalid', message: 'too long' },
  message: 'too long',
};
const refusedBare: Outcome<unknown> = { kind: 'refused', status: 403, code: null, error: null, message: 'HTTP 403' };
/** A body outside the contract's shape (classify.ts: its code is read, `error` is null). */
const refusedLoose: Outcome<unknown> = { kind: 'refused', status: 400, code: 'bad_thing', error: null, message: 'no' };
const notFound: Outcome<unknown> = { kind: 'refused', status: 404, code: 'resource_missing', error: { type: 'invalid_request', code: 'resource_missing', message: 'gone' }, message: 'gone' };
const noLastOpened: Outcome<unknown> = {
  kind: 'refused',
  status: 400,
  code: 'parameter_unknown',
  error: { type: 'invalid_request', code: 'parameter_unknown', message: 'unknown', param: 'last_opened_at' },
  message: 'unknown',
};
const ok: Outcome<unknown> = { kind: 'ok', value: null, replayed: false, serverTime: null };
const okReplayed: Outcome<unknown> = { kind: 'ok', value: null, replayed: true, serverTime: null };

const err = (status: number, code: string, message: string) => ({ status, code, message });
const changed = (change: lifecycle.OpChange, rest: Partial<Extract<Settlement, { kind: 'settled' }>> = {}): Settlement => ({
  kind: 'settled',
  write: { kind: 'update', change },
  stop: null,
  learned: null,
  rebuild: null,
  ...rest,
});
const waiting = (until: number, reason: 'network' | 'server' | 'rate_limited' | 'in_progress' | 'offline') => ({ kind: 'waiting' as const, until, reason });

// ---- settle: stored operation × outcome (× step) → settlement ----
type SettleRow = [name: string, stored: OutboxOp, outcome: Outcome<unknown>, step: SettleContext['step'], expected: Settlement];
const settleTable: SettleRow[] = [
  // inflight → done
  ['2xx → done', inflight, ok, 'request', { kind: 'done', learned: null }],
  ['2xx replayed → done, the server has keys', inflight, okReplayed, 'request', { kind: 'done', learned: 'serverIdempotency' }],
  ['404 to a conversation delete → done', inflightConvDelete, notFound, 'request', { kind: 'done', learned: null }],
  ['404 to a file delete → done', inflightFileDelete, notFound, 'request', { kind: 'done', learned: null }],
  // 404 is done only as the delete's own answer
  ['404 to a step after a cancelled upload was sent → failed', inflightCancelled, notFound, 'after',
    changed({ state: 'failed', error: err(404, 'resource_missing', 'gone'), outcomeUnknown: false, keyVersion: 2 }, { rebuild: 'mentioned' })],
  ['404 to an update → failed', inflight, notFound, 'request',
    changed({ state: 'failed', error: err(404, 'resource_missing', 'gone'), outcomeUnknown: false, keyVersion: 1 }, { rebuild: 'mentioned' })],
  // inflight → queued, unreachable: attempt given back, no backoff added, unknown only if sent
  ['unreachable, sent → queued, attempt back, due now, unknown', inflightLater, offline, 'request',
    changed({ state: 'queued', error: err(0, 'network', 'offline'), attempts: 0, nextAttemptAt: NOW, outcomeUnknown: true }, { stop: waiting(NOW, 'offline') })],
  ['unreachable before sending → known', inflight, offline, 'before',
    changed({ state: 'queued', error: err(0, 'network', 'offline'), attempts: 2, nextAttemptAt: NOW - 10, outcomeUnknown: false }, { stop: waiting(NOW, 'offline') })],
  ['unreachable after an unknown outcome stays unknown', inflightUnknown, offline, 'before',
    changed({ state: 'queued', error: err(0, 'network', 'offline'), attempts: 1, nextAttemptAt: 0, outcomeUnknown: true }, { stop: waiting(NOW, 'offline') })],
  // inflight → queued, retry later with a backoff by attempts
  ['answer lost → backoff, unknown', inflight, network, 'request',
    changed({ state: 'queued', error: err(0, 'network', 'reset'), nextAttemptAt: NOW + 3000, outcomeUnknown: true }, { stop: waiting(NOW + 3000, 'network') })],
  ['network error before sending → backoff, known', inflight, network, 'before',
    changed({ state: 'queued', error: err(0, 'network', 'reset'), nextAttemptAt: NOW + 3000, outcomeUnknown: false }, { stop: waiting(NOW + 3000, 'network') })],
  ['network error in a step after sending → unknown', inflightFirst, network, 'after',
    changed({ state: 'queued', error: err(0, 'network', 'reset'), nextAttemptAt: NOW + 1000, outcomeUnknown: true }, { stop: waiting(NOW + 1000, 'network') })],
  ['5xx → backoff, unknown', inflight, server503, 'request',
    changed({ state: 'queued', error: err(503, 'server', 'down'), nextAttemptAt: NOW + 3000, outcomeUnknown: true }, { stop: waiting(NOW + 3000, 'server') })],
  ['5xx with no attempt counted backs off as the first', op({ state: 'inflight', attempts: 0 }), server503, 'request',
    changed({ state: 'queued', error: err(503, 'server', 'down'), nextAttemptAt: NOW + 1000, outcomeUnknown: true }, { stop: waiting(NOW + 1000, 'server') })],
  ['429 → Retry-After, the server did not act', inflight, limited, 'request',
    changed({ state: 'queued', error: err(0, 'rate_limited', 'slow down'), nextAttemptAt: NOW + 7000, outcomeUnknown: false }, { stop: waiting(NOW + 7000, 'rate_limited') })],
  ['429 without Retry-After → backoff', inflight, limitedNoHint, 'request',
    changed({ state: 'queued', error: err(0, 'rate_limited', 'slow down'), nextAttemptAt: NOW + 3000, outcomeUnknown: false }, { stop: waiting(NOW + 3000, 'rate_limited') })],
  ['429 keeps an earlier unknown outcome', inflightUnknown, limited, 'request',
    changed({ state: 'queued', error: err(0, 'rate_limited', 'slow down'), nextAttemptAt: NOW + 7000, outcomeUnknown: true }, { stop: waiting(NOW + 7000, 'rate_limited') })],
  ['409 in progress → Retry-After, unknown, the server has keys', inflight, inProgress, 'request',
    changed({ state: 'queued', error: err(0, 'in_progress', 'running'), nextAttemptAt: NOW + 2000, outcomeUnknown: true }, { stop: waiting(NOW + 2000, 'in_progress'), learned: 'serverIdempotency' })],
  ['409 in progress without Retry-After → backoff', inflight, inProgressNoHint, 'request',
    changed({ state: 'queued', error: err(0, 'in_progress', 'running'), nextAttemptAt: NOW + 3000, outcomeUnknown: true }, { stop: waiting(NOW + 3000, 'in_progress'), learned: 'serverIdempotency' })],
  // inflight → queued as it was: 401
  ['401 → queued as it was, attempt back, until a sign-in', inflight, signIn, 'request',
    changed({ state: 'queued', attempts: 2 }, { stop: { kind: 'unauthenticated', message: 'expired' } })],
  ['401 never takes attempts below zero', op({ state: 'inflight', attempts: 0 }), signIn, 'request',
    changed({ state: 'queued', attempts: 0 }, { stop: { kind: 'unauthenticated', message: 'expired' } })],
  ['401 device_wiped → as any 401, the stop says wiped', inflight, wiped, 'request',
    changed({ state: 'queued', attempts: 2 }, { stop: { kind: 'unauthenticated', message: 'wiped', wiped: true } })],
  // inflight → queued rewritten: a body the server can take only in part
  ['400 unknown last_opened_at → rewritten without it, a new key', inflightUpdate, noLastOpened, 'request',
    changed({ state: 'queued', body: { kind: 'conversation.update', patch: { is_pinned: true } }, keyVersion: 1 }, { learned: 'serverLacksLastOpened' })],
  ['400 unknown last_opened_at, nothing else → gone', inflightOpenOnly, noLastOpened, 'request',
    { kind: 'settled', write: { kind: 'remove' }, stop: null, learned: 'serverLacksLastOpened', rebuild: 'entity' }],
  ['400 unknown last_opened_at on a delete → failed', inflightConvDelete, noLastOpened, 'request',
    changed({ state: 'failed', error: err(400, 'parameter_unknown', 'unknown'), outcomeUnknown: false, keyVersion: 1 }, { rebuild: 'mentioned' })],
  // the app's bookkeeping (mirror/bookkeeping.ts: only last_opened_at) refused → gone, quietly
  ['4xx to the open report alone → gone, not failed', inflightOpenOnly, refused422, 'request',
    { kind: 'settled', write: { kind: 'remove' }, stop: null, learned: null, rebuild: 'entity' }],
  ['404 to the open report (the conversation gone) → gone, not failed', inflightOpenOnly, notFound, 'request',
    { kind: 'settled', write: { kind: 'remove' }, stop: null, learned: null, rebuild: 'entity' }],
  ['4xx to the open report merged with a pin → failed (the user\'s change)', inflightUpdate, refused422, 'request',
    changed({ state: 'failed', error: err(422, 'parameter_invalid', 'too long'), outcomeUnknown: false, keyVersion: 1 }, { rebuild: 'mentioned' })],
  ['5xx to the open report → backoff as any change (quiet: not counted)', op({ ...inflightOpenOnly }), server503, 'request',
    changed({ state: 'queued', error: err(503, 'server', 'down'), nextAttemptAt: NOW + 1000, outcomeUnknown: true }, { stop: waiting(NOW + 1000, 'server') })],
  // inflight → failed: the server refused; the outcome is known, the key renewed ...
  ['4xx → failed, known, a new key', inflight, refused422, 'request',
    changed({ state: 'failed', error: err(422, 'parameter_invalid', 'too long'), outcomeUnknown: false, keyVersion: 1 }, { rebuild: 'mentioned' })],
  ['4xx without a body → failed, code http_<status>', inflight, refusedBare, 'request',
    changed({ state: 'failed', error: err(403, 'http_403', 'HTTP 403'), outcomeUnknown: false, keyVersion: 1 }, { rebuild: 'mentioned' })],
  ['4xx with a code outside the contract\'s shape → failed with that code', inflight, refusedLoose, 'request',
    changed({ state: 'failed', error: err(400, 'bad_thing', 'no'), outcomeUnknown: false, keyVersion: 1 }, { rebuild: 'mentioned' })],
  ['4xx to an upload → failed, a new key and a new tus upload', inflightUpload, refused422, 'request',
    changed({ state: 'failed', error: err(422, 'parameter_invalid', 'too long'), outcomeUnknown: false, keyVersion: 1, tus: undefined }, { rebuild: 'mentioned' })],
  ['4xx to a cancelled upload → failed, its upload URL kept', inflightCancelled, refused422, 'after',
    changed({ state: 'failed', error: err(422, 'parameter_invalid', 'too long'), outcomeUnknown: false, keyVersion: 2 }, { rebuild: 'mentioned' })],
  // ... unless an earlier attempt's outcome is unknown: it stays unknown and keeps its key
  ['4xx after an unknown outcome → failed, still unknown, the same key', inflightUnknown, refused422, 'request',
    changed({ state: 'failed', error: err(422, 'parameter_invalid', 'too long') }, { rebuild: 'mentioned' })],
];

describe('settle: which answer leads to which transition', () => {
  it.each(settleTable)('%s', (_name, stored, outcome, step, expected) => {
    expect(settle(stored, outcome, { now: NOW, delay, step })).toStrictEqual(expected);
  });
});

// ---- every other transition: stored operation → change ----
type Row = [name: string, actual: () => unknown, expected: unknown];
const sentUpload = op({ entity: 'file', entityId: 'local_f', body: upload, attempts: 2, firstSentAt: 500, nextAttemptAt: NOW + 9000, outcomeUnknown: true });
const table: Row[] = [
  // new → queued
  ['queue: queued, never sent, at once', () => lifecycle.queued({ id: 'a', entity: 'file', entityId: 'f', body: { kind: 'file.delete' }, now: 5 }),
    { id: 'a', entity: 'file', entityId: 'f', body: { kind: 'file.delete' }, state: 'queued', attempts: 0, nextAttemptAt: 0, firstSentAt: null, outcomeUnknown: false, error: null, createdAt: 5 }],
  ['queue behind other entities', () => lifecycle.queued({ id: 'a', entity: 'file', entityId: 'f', body: { kind: 'file.delete' }, now: 5, after: ['c'] }).after, ['c']],
  ['queue behind nothing: no after', () => 'after' in lifecycle.queued({ id: 'a', entity: 'file', entityId: 'f', body: { kind: 'file.delete' }, now: 5, after: [] }), false],
  ['never sent: queued, no firstSentAt', () => lifecycle.neverSent(fresh), true],
  ['never sent: not once sent', () => lifecycle.neverSent(queuedSent), false],
  ['never sent: not inflight', () => lifecycle.neverSent(op({ state: 'inflight' })), false],
  // queued, never sent → amended
  ['amend a never-sent op', () => lifecycle.amended(fresh, update), { body: update }],
  ['amend a sent op: no (queue another)', () => lifecycle.amended(queuedSent, update), null],
  ['amend an inflight op: no', () => lifecycle.amended(op({ state: 'inflight' }), update), null],
  ['amend a failed op: no', () => lifecycle.amended(failed, update), null],
  // queued, waiting → woken
  ['wake: the backoff ends now', () => lifecycle.woken(queuedSent, NOW, { idempotent: false, settleMs: 100 }), { nextAttemptAt: NOW }],
  ['wake: nothing to wake when due', () => lifecycle.woken(op({ nextAttemptAt: NOW }), NOW, { idempotent: false, settleMs: 100 }), {}],
  ['wake: not inflight', () => lifecycle.woken(op({ state: 'inflight', nextAttemptAt: NOW + 9000 }), NOW, { idempotent: false, settleMs: 100 }), {}],
  ['wake: not failed', () => lifecycle.woken(failed, NOW, { idempotent: false, settleMs: 100 }), {}],
  ['wake: an upload to verify keeps its wait, up to settleMs', () => lifecycle.woken(sentUpload, NOW, { idempotent: false, settleMs: 100 }), { nextAttemptAt: NOW + 100 }],
  ['wake: ... or less', () => lifecycle.woken(sentUpload, NOW, { idempotent: false, settleMs: 20_000 }), { nextAttemptAt: NOW + 9000 }],
  ['wake: an upload to verify, server with keys → now', () => lifecycle.woken(sentUpload, NOW, { idempotent: true, settleMs: 100 }), { nextAttemptAt: NOW }],
  ['wake: a tus upload → now', () => lifecycle.woken({ ...sentUpload, tus }, NOW, { idempotent: false, settleMs: 100 }), { nextAttemptAt: NOW }],
  ['wake: an upload with a known outcome → now', () => lifecycle.woken({ ...sentUpload, outcomeUnknown: false }, NOW, { idempotent: false, settleMs: 100 }), { nextAttemptAt: NOW }],
  // queued → inflight
  ['claim: inflight, an attempt, first sent now', () => lifecycle.claim(fresh, NOW), { state: 'inflight', attempts: 1, firstSentAt: NOW }],
  ['claim again: first sent kept', () => lifecycle.claim(queuedSent, NOW), { state: 'inflight', attempts: 3, firstSentAt: 500 }],
  // inflight → queued, never sent
  ['release: undoes the claim', () => lifecycle.release({ ...fresh, ...lifecycle.claim(fresh, NOW) } as OutboxOp, fresh), { state: 'queued', attempts: 0, firstSentAt: null, tus: undefined }],
  ['release: only what is inflight', () => lifecycle.release(failed, fresh), {}],
  [
    'release: gives back a creation key the claim noted (never sent)',
    () => lifecycle.release({ ...fresh, ...lifecycle.claim(fresh, NOW), tus: { url: null, generation: 0, bytesKey: 'k' } } as OutboxOp, fresh),
    { state: 'queued', attempts: 0, firstSentAt: null, tus: undefined },
  ],
  // inflight, orphaned → queued, unknown
  ['recover: queued, unknown', () => lifecycle.recovered, { state: 'queued', outcomeUnknown: true }],
  // inflight, on the way
  ['snapshot taken', () => lifecycle.snapshotTaken({ newestFileId: 'f0', serverTime: 9 }), { snapshot: { newestFileId: 'f0', serverTime: 9 } }],
  ['tus state noted (a copy)', () => lifecycle.tusNoted(tus), { tus: { url: tus.url, generation: 0 } }],
  ['bytes moved: the backoff starts again', () => lifecycle.progressed, { attempts: 1 }],
  // inflight → done
  ['done: the row goes', () => lifecycle.done(inflight), { kind: 'remove' }],
  ['done, not cancelled: the row goes', () => lifecycle.done(inflightUpload, 'f1'), { kind: 'remove' }],
  ['done, cancelled meanwhile: the cancellation queued again, naming the file', () => lifecycle.done(inflightCancelled, 'f1'),
    { kind: 'requeue', op: { ...withoutSeq(inflightCancelled), cancelledUpload: { upload, fileId: 'f1' }, state: 'queued', nextAttemptAt: 0 } }],
  // failed → queued
  ['user Retry: a fresh start, at once', () => lifecycle.retriedByUser, { state: 'queued', error: null, attempts: 0, nextAttemptAt: 0 }],
  // an upload → cancelled
  ['cancel a queued upload: a deletion, a new key, at once', () => lifecycle.cancelled({ ...sentUpload, error: err(503, 'server', 'x') }),
    { body: { kind: 'file.delete' }, cancelledUpload: { upload, fileId: null }, state: 'queued', error: null, nextAttemptAt: 0, attempts: 0, keyVersion: 1 }],
  ['cancel an inflight upload: stays inflight, attempts kept', () => lifecycle.cancelled(inflightUpload, 'f1'),
    { body: { kind: 'file.delete' }, cancelledUpload: { upload, fileId: 'f1' }, state: 'inflight', error: null, nextAttemptAt: 0, attempts: 1, keyVersion: 1 }],
  ['cancel a failed upload: queued again', () => lifecycle.cancelled({ ...failed, body: upload }).state, 'queued'],
  ['cancel what is not an upload: nothing', () => lifecycle.cancelled(inflight), {}],
  ['cancelled upload made its file', () => lifecycle.cancelledUploadMade(inflightCancelled, 'f1'), { cancelledUpload: { upload, fileId: 'f1' } }],
  ['cancelled upload made its file and its URL', () => lifecycle.cancelledUploadMade({ ...inflightCancelled, tus: { url: null, generation: 0 } }, 'f1', 'http://x/u2'),
    { cancelledUpload: { upload, fileId: 'f1' }, tus: { url: 'http://x/u2', generation: 0 } }],
  ['cancelled upload made its file; a known URL stays', () => lifecycle.cancelledUploadMade(inflightCancelled, 'f1', 'http://x/u2'), { cancelledUpload: { upload, fileId: 'f1' } }],
  ['made its file, not cancelled: nothing', () => lifecycle.cancelledUploadMade(inflightUpload, 'f1'), {}],
  // discarded by the user
  ['discard a failed op', () => lifecycle.discardable(failed), true],
  ['discard a queued op', () => lifecycle.discardable(fresh), true],
  ['never discard an inflight op', () => lifecycle.discardable(inflight), false],
];

function withoutSeq({ seq: _seq, ...rest }: OutboxOp): lifecycle.NewOp {
  return rest;
}

describe('lifecycle: every other transition', () => {
  it.each(table)('%s', (_name, actual, expected) => {
    expect(actual()).toStrictEqual(expected);
  });
});

// The header's rules, checked on the changes the tables above produce (a row alone could be
// rewritten to agree with a broken transition; these say what must hold for every one).
describe('lifecycle: the rules on stored fields', () => {
  const changes = settleTable.flatMap(([name, stored, outcome, step]) => {
    const s = settle(stored, outcome, { now: NOW, delay, step });
    return s.kind === 'settled' && s.write.kind === 'update' ? [{ name, stored, outcome, change: s.write.change }] : [];
  });

  it('outcomeUnknown is cleared only by a refusal (4xx), never set by one', () => {
    for (const { name, stored, outcome, change } of changes) {
      if (stored.outcomeUnknown && change.outcomeUnknown === false) expect(outcome.kind, name).toBe('refused');
      if (outcome.kind === 'refused' || outcome.kind === 'rate_limited' || outcome.kind === 'unauthenticated') {
        expect(change.outcomeUnknown === true && !stored.outcomeUnknown, name).toBe(false);
      }
    }
  });

  it('the key changes only with the body or after a refusal, and only upward by one', () => {
    for (const { name, stored, outcome, change } of changes) {
      if (change.keyVersion === undefined) continue;
      expect(change.keyVersion, name).toBe((stored.keyVersion ?? 0) + 1);
      expect(outcome.kind === 'refused' || change.body !== undefined, name).toBe(true);
    }
  });

  it('attempts only go back, by one, for failures that are not the operation’s fault', () => {
    for (const { name, stored, outcome, change } of changes) {
      if (change.attempts === undefined) continue;
      expect(change.attempts, name).toBe(Math.max(0, stored.attempts - 1));
      expect(outcome.kind === 'unauthenticated' || (outcome.kind === 'network' && outcome.unreachable === true), name).toBe(true);
    }
  });

  it('a wait is only ever set in the future, never by a refusal or a sign-in', () => {
    for (const { name, stored, outcome, change } of changes) {
      if (change.nextAttemptAt === undefined) continue;
      expect(outcome.kind === 'refused' || outcome.kind === 'unauthenticated', name).toBe(false);
      if (outcome.kind === 'network' && outcome.unreachable) expect(change.nextAttemptAt, name).toBe(Math.min(stored.nextAttemptAt, NOW));
      else expect(change.nextAttemptAt, name).toBeGreaterThan(NOW);
    }
  });

  it('every failure leaves the replayer: queued or failed, never inflight', () => {
    for (const { name, change } of changes) expect(['queued', 'failed'], name).toContain(change.state);
  });
});
