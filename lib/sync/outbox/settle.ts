// Which answer leads to which transition (lifecycle.ts): the classification of an operation's
// outcome, pure. replay.ts does the I/O around it — sends, reads the stored row, writes what
// `settle` returns, records what the server is learned to be, rebuilds views.
//
//   ok (2xx), or 404 to the operation's own DELETE ............ done (lifecycle `done`, apply.ts)
//   network error, the server unreachable ...................... unreachable: no backoff, attempt given back
//   network error (answer lost), 5xx, 408 ...................... retryLater after a backoff; outcome unknown if sent
//   429, 409 in progress (Retry-After, else the backoff) ....... retryLater; in progress: unknown, the server has keys
//   401 (device_wiped too, flagged on the stop) ................ awaitSignIn: as it was, until a sign-in
//   400 parameter_unknown last_opened_at on an update .......... rewritten without it, or gone if nothing is left
//   any other 4xx to the app's bookkeeping (mirror/bookkeeping.ts)  gone, quietly (not the user's change)
//   any other 4xx ............................................... deadLettered (failed)
import type { Outcome } from '../core/http';
import { isBookkeeping } from '../mirror/bookkeeping';
import { retryAfterMs } from './operations';
import { awaitSignIn, deadLettered, retryLater, rewritten, unreachable, type OpError, type OutboxOp, type Write } from './lifecycle';

/** Why a replay stops after a failure (replay.ts PushResult). */
export type Stop =
  | { kind: 'waiting'; until: number; reason: 'network' | 'server' | 'rate_limited' | 'in_progress' | 'offline' }
  /** `wiped`: the answer was 401 device_wiped (classify.ts); for now handled as any 401. */
  | { kind: 'unauthenticated'; message: string; wiped?: true };

/** What an answer teaches about the server (a meta flag the caller sets to true). */
export type Learned = 'serverIdempotency' | 'serverLacksLastOpened';

export interface SettleContext {
  now: number;
  /** The backoff before the next try after `attempts` claims (operations.ts backoffDelay, with the replay's jitter). */
  delay: (attempts: number) => number;
  /**
   * What the outcome answers. 'request': the operation's own request (a 404 to a DELETE is then
   * done). 'after': a later step once that request may have gone out (verifying an upload, ending a
   * cancelled one, reading the file a tus upload made). 'before': a read before anything was sent.
   */
  step: 'before' | 'request' | 'after';
}

export type Settlement =
  /** Done: the caller records the answer's effect with the row's removal (apply.ts, lifecycle `done`). */
  | { kind: 'done'; learned: Learned | null }
  /**
   * Not done: write `write` to the stored row; `stop`: why the replay stops (null: it goes on);
   * `rebuild`: the views to show again — the operation's entity (its row went) or all it mentions.
   */
  | { kind: 'settled'; write: Write; stop: Stop | null; learned: Learned | null; rebuild: 'entity' | 'mentioned' | null };

type Failure = Exclude<Outcome<unknown>, { kind: 'ok' }>;

/** The outcome of a request for `op` (as stored now) → what becomes of it. */
export function settle(op: OutboxOp, outcome: Outcome<unknown>, ctx: SettleContext): Settlement {
  if (outcome.kind === 'ok') return { kind: 'done', learned: outcome.replayed ? 'serverIdempotency' : null };
  if (answered(op, outcome, ctx.step)) return { kind: 'done', learned: null };
  return settleFailure(op, outcome, ctx);
}

/**
 * Whether the outcome makes the operation done (without asking for a backoff): a 2xx, or a 404
 * to its own DELETE — that already happened (our lost first attempt, or someone else).
 */
export function answered(op: OutboxOp, outcome: Outcome<unknown>, step: SettleContext['step']): boolean {
  if (outcome.kind === 'ok') return true;
  return step === 'request' && outcome.kind === 'refused' && outcome.status === 404 && isDelete(op);
}

function settleFailure(op: OutboxOp, outcome: Failure, ctx: SettleContext): Settlement {
  const { now } = ctx;
  // Network errors and 5xx leave the outcome unknown once sent; 429 and 4xx say the server did not act.
  const sent = ctx.step !== 'before';
  const attempts = Math.max(1, op.attempts);
  const error: OpError = { status: 'status' in outcome ? outcome.status : 0, code: outcome.kind, message: outcome.message };
  const update = (change: ReturnType<typeof retryLater>): Write => ({ kind: 'update', change });
  switch (outcome.kind) {
    case 'network':
      if (outcome.unreachable) {
        return { kind: 'settled', write: update(unreachable(op, now, error, sent)), stop: { kind: 'waiting', until: now, reason: 'offline' }, learned: null, rebuild: null };
      }
    // falls through: a lost answer (sent, no response) backs off like a 5xx
    case 'server': {
      const until = now + ctx.delay(attempts);
      return { kind: 'settled', write: update(retryLater(op, until, error, sent)), stop: { kind: 'waiting', until, reason: outcome.kind }, learned: null, rebuild: null };
    }
    case 'rate_limited':
    case 'in_progress': {
      const until = now + (retryAfterMs(outcome.retryAfter, now) ?? ctx.delay(attempts));
      // In progress: an earlier request with this key is running, so the outcome stays unknown and
      // the key stays the same (its answer is what we want); only a server with keys says so.
      const inProgress = outcome.kind === 'in_progress';
      return {
        kind: 'settled',
        write: update(retryLater(op, until, error, inProgress)),
        stop: { kind: 'waiting', until, reason: outcome.kind },
        learned: inProgress ? 'serverIdempotency' : null,
        rebuild: null,
      };
    }
    case 'unauthenticated':
      // Not the operation's fault: it waits, unchanged, until the user signs in again.
      return {
        kind: 'settled',
        write: update(awaitSignIn(op)),
        stop: { kind: 'unauthenticated', message: outcome.message, ...(outcome.wiped ? { wiped: true as const } : {}) },
        learned: null,
        rebuild: null,
      };
    case 'refused': {
      if (op.body.kind === 'conversation.update' && lacksLastOpened(outcome)) {
        // A server with only the brief's interface has no last_opened_at: not the user's fault and
        // nothing to retry. Send the rest, and stop reporting opens to this server (markOpened
        // becomes a no-op; the field then stays what the server says, null).
        const { last_opened_at: _dropped, ...rest } = op.body.patch;
        const write: Write =
          Object.keys(rest).length === 0 ? { kind: 'remove' } : update(rewritten(op, { kind: 'conversation.update', patch: rest }));
        return { kind: 'settled', write, stop: null, learned: 'serverLacksLastOpened', rebuild: write.kind === 'remove' ? 'entity' : null };
      }
      if (isBookkeeping(op.body)) {
        // The app's bookkeeping (that the user opened the conversation), not the user's change: a
        // refusal would come again on every retry, a dead letter would hold up the user's later
        // changes to the conversation and show as a change they never made, and the next open
        // reports a newer time anyway. So it goes, quietly.
        return { kind: 'settled', write: { kind: 'remove' }, stop: null, learned: null, rebuild: 'entity' };
      }
      const code = outcome.code ?? `http_${outcome.status}`;
      const refusal = { status: outcome.status, code, message: outcome.message };
      return { kind: 'settled', write: update(deadLettered(op, refusal)), stop: null, learned: null, rebuild: 'mentioned' };
    }
  }
}

function isDelete(op: OutboxOp): boolean {
  return op.body.kind === 'conversation.delete' || op.body.kind === 'file.delete';
}

function lacksLastOpened(outcome: Extract<Failure, { kind: 'refused' }>): boolean {
  return outcome.status === 400 && outcome.error?.code === 'parameter_unknown' && outcome.error.param === 'last_opened_at';
}
