// When the engine runs next, and what the status says after a run: `nextRun`, pure, as
// outbox/settle.ts is for an operation's answer. engine.ts does the I/O around it (the run, the
// status write, the timer) and applies what it returns; tests/unit/schedule.test.ts holds the table.
//
//   what happened                                 status                                  next run (runAt)
//   push done, pull done ......................... online, no error, lastSyncAt = now      the period (null)
//   push waiting on an operation's backoff ....... (the pull decides)                      that operation's time
//   push: answer lost, 5xx, 429, in progress ..... error = the reason; lost: offline        push's `until` (settle.ts)
//   push: server unreachable ..................... offline, error 'offline'                the reconnect pace
//   pull: answer lost, 5xx, 429, in progress ..... error = its message; lost: offline       the pull's backoff
//   pull: server unreachable ..................... offline, error = its message            the reconnect pace
//   pull refused (another 4xx) ................... error = its message                     the period
//   401 from either (device_wiped: deviceWiped) .. needsSignIn                             the period only: runs stop
//                                                                                           at needsSignIn until sign-in
//   the run threw (IndexedDB trouble) ............ error = its message                     backoff's base from now
//   woken (online, visible, "Sync now") .......... (unchanged)                             now; the counters start over;
//                                                                                           every wait ends
//   answered during a run, after an outage ....... (unchanged: the run's outcome writes)   the run goes on; the counters
//     (a counter above zero)                                                                start over; every wait ends
//   answered during a run, no outage ............. (unchanged)                             the run goes on; nothing changes
//
// "Every wait ends" (`endWaits`): the engine brings each queued operation's next attempt forward
// (engine.ts `clearWaits`). After an outage the first answer does so, between the run's steps
// (never while a push settles its operations): the changes that waited out the outage go in that
// run, not at the end of a backoff that grew meanwhile. A single lost answer is no outage (the
// server may be slow, not gone): its operation keeps its backoff.
//
// The earliest wait wins. The counters: `pullFailures` (consecutive retryable pull failures) drives
// the pull's backoff, `offlineFailures` (consecutive runs that could not reach the server) the
// reconnect pace (1 s doubling to 5 s by default); each starts over at the first run without one.
// An unreachable server is not the operations' fault: their backoff does not grow (settle.ts).
import type { PushResult } from '../outbox/replay';
import type { PullResult } from '../pull/pull';
import { backoffDelay } from '../outbox/operations';
import type { StoredStatus } from './status';

/** What the engine remembers between runs to pace its retries. */
export interface ScheduleState {
  /** Consecutive runs whose pull failed in a retryable way (backoff of the pull). */
  pullFailures: number;
  /** Consecutive runs that could not reach the server at all (the reconnect pace). */
  offlineFailures: number;
}

export const INITIAL_SCHEDULE: ScheduleState = { pullFailures: 0, offlineFailures: 0 };

export type RunOutcome =
  /** A run: its push, and its pull (null: skipped — the push could not go on, or push only). */
  | { kind: 'ran'; push: PushResult; pull: PullResult | null }
  /** The run threw (IndexedDB trouble, e.g. a lost connection, reopened by the engine). */
  | { kind: 'threw'; message: string }
  /** The network is back, the app became visible, or "Sync now": every wait ends. */
  | { kind: 'woken' }
  /** The server answered (or took upload bytes) during a run; the engine asks between the run's steps. */
  | { kind: 'answered' };

export interface ScheduleContext {
  now: number;
  random: () => number;
  /** The backoff of retryable failures (operations' own, in replay, and the pull's here). */
  backoff: { baseMs: number; maxMs: number };
  /** The pace while the server cannot be reached. */
  reconnect: { baseMs: number; maxMs: number };
}

export interface Decision {
  state: ScheduleState;
  /** What to write to the status (engine/status.ts `updateStatus`); {} = nothing. */
  status: Partial<StoredStatus>;
  /** When to run again (ms); null: no retry is due, the periodic sync alone. */
  runAt: number | null;
  /** The server answered (not offline, not 401): the stuck-queue watchdog may call a still queue stuck. Null: unchanged. */
  reachable: boolean | null;
  /** Every queued operation's wait ends now (engine.ts `clearWaits`). */
  endWaits?: true;
}

/** Runs failed one after another (the server unreachable, or the pull failing): an outage, not one lost answer. */
function inOutage(state: ScheduleState): boolean {
  return state.offlineFailures > 0 || state.pullFailures > 0;
}

export function nextRun(state: ScheduleState, outcome: RunOutcome, ctx: ScheduleContext): Decision {
  const { now } = ctx;
  switch (outcome.kind) {
    case 'woken':
      return { state: INITIAL_SCHEDULE, status: {}, runAt: now, reachable: null, endWaits: true };
    case 'answered':
      // Mid-run: the run's own outcome writes the status and sets the timer (runAt null: no change here).
      return inOutage(state)
        ? { state: INITIAL_SCHEDULE, status: {}, runAt: null, reachable: null, endWaits: true }
        : { state, status: {}, runAt: null, reachable: null };
    case 'threw':
      return { state, status: { lastError: outcome.message }, runAt: now + ctx.backoff.baseMs, reachable: null };
    case 'ran':
      return afterRun(state, outcome.push, outcome.pull, ctx);
  }
}

function afterRun(state: ScheduleState, pushed: PushResult, pulled: PullResult | null, ctx: ScheduleContext): Decision {
  const { now, random } = ctx;
  const unauthenticated = pushed.kind === 'unauthenticated' || pulled?.kind === 'unauthenticated';
  const wiped = (pushed.kind === 'unauthenticated' && pushed.wiped === true) || (pulled?.kind === 'unauthenticated' && pulled.wiped === true);
  const offline = (pushed.kind === 'waiting' && (pushed.reason === 'network' || pushed.reason === 'offline')) || pulled?.kind === 'network';
  // Could not reach the server at all: retried at the reconnect pace, not with a growing backoff.
  const unreachable = (pushed.kind === 'waiting' && pushed.reason === 'offline') || (pulled?.kind === 'network' && pulled.unreachable === true);
  const pullRetryable =
    pulled !== null &&
    ((pulled.kind === 'network' && !pulled.unreachable) || pulled.kind === 'server' || pulled.kind === 'rate_limited' || pulled.kind === 'in_progress');
  const next: ScheduleState = {
    pullFailures: pullRetryable ? state.pullFailures + 1 : 0,
    offlineFailures: unreachable ? state.offlineFailures + 1 : 0,
  };
  const pushWait = pushed.kind === 'waiting' && pushed.reason !== 'offline' ? pushed.until : null;
  const pullWait = pullRetryable ? now + backoffDelay(next.pullFailures, random, ctx.backoff.baseMs, ctx.backoff.maxMs) : null;
  const reconnectWait = unreachable ? now + backoffDelay(next.offlineFailures, random, ctx.reconnect.baseMs, ctx.reconnect.maxMs) : null;
  const nextRetryAt = [pushWait, pullWait, reconnectWait].filter((t): t is number => t !== null).sort((a, b) => a - b)[0] ?? null;
  const problem =
    pushed.kind === 'waiting' && pushed.reason !== 'backoff'
      ? pushed.reason
      : pulled && pulled.kind !== 'done' && pulled.kind !== 'unauthenticated'
        ? pulled.message
        : null;
  return {
    state: next,
    status: {
      online: !offline,
      needsSignIn: unauthenticated,
      ...(wiped ? { deviceWiped: true } : {}),
      lastError: problem,
      nextRetryAt,
      ...(pulled?.kind === 'done' && pushed.kind === 'done' ? { lastSyncAt: now } : {}),
    },
    // Signed out: nothing is retried; each run stops at needsSignIn until the user signs in again.
    runAt: unauthenticated ? null : nextRetryAt,
    reachable: !offline && !unauthenticated,
  };
}

/**
 * The timer's delay for a run at `runAt` (null: the periodic sync): never later than one period
 * (`periodMs`: the normal one, or the safety net's while the live stream is up or another tab
 * leads), never negative.
 */
export function timerDelay(runAt: number | null, now: number, periodMs: number): number {
  return runAt === null ? periodMs : Math.max(0, Math.min(periodMs, runAt - now));
}
