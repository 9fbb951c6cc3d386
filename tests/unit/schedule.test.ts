// When the engine runs next (lib/sync/engine/schedule.ts), as a table: the counters before, what a
// run gave (push, pull), and the exact decision — the counters after, the status written, the next
// run. Random is 0.5, so a jittered backoff is 3/4 of its exponential step.
import { describe, expect, it } from 'vitest';
import type { PushResult } from '../../lib/sync/outbox/replay';
import type { PullResult } from '../../lib/sync/pull/pull';
import { nextRun, timerDelay, type Decision, type RunOutcome, type ScheduleState } from '../../lib/sync/engine/schedule';

const NOW = 1_000_000;
const ctx = { now: NOW, random: () => 0.5, backoff: { baseMs: 1_000, maxMs: 300_000 }, reconnect: { baseMs: 1_000, maxMs: 5_000 } };
const zero: ScheduleState = { pullFailures: 0, offlineFailures: 0 };
const counts = (pullFailures: number, offlineFailures: number): ScheduleState => ({ pullFailures, offlineFailures });

// Pushes.
const pushDone: PushResult = { kind: 'done' };
const pushBackoff = (until: number): PushResult => ({ kind: 'waiting', until, reason: 'backoff' });
const pushWaiting = (reason: 'network' | 'server' | 'rate_limited' | 'in_progress', until: number): PushResult => ({ kind: 'waiting', until, reason });
const pushOffline: PushResult = { kind: 'waiting', until: NOW, reason: 'offline' };
const push401: PushResult = { kind: 'unauthenticated', message: 'expired' };
const pushWiped: PushResult = { kind: 'unauthenticated', message: 'wiped', wiped: true };
// Pulls.
const pullDone: PullResult = { kind: 'done', feed: true };
const pullLost: PullResult = { kind: 'network', message: 'reset' };
const pullUnreachable: PullResult = { kind: 'network', message: 'offline', unreachable: true };
const pull503: PullResult = { kind: 'server', status: 503, message: 'down' };
const pull429: PullResult = { kind: 'rate_limited', retryAfter: '3', message: 'slow down' };
const pullInProgress: PullResult = { kind: 'in_progress', retryAfter: null, message: 'running' };
const pull403: PullResult = { kind: 'refused', status: 403, code: 'forbidden', message: 'no', error: null };
const pull401: PullResult = { kind: 'unauthenticated', message: 'expired' };
const pullWiped: PullResult = { kind: 'unauthenticated', message: 'wiped', wiped: true };

const ran = (push: PushResult, pull: PullResult | null): RunOutcome => ({ kind: 'ran', push, pull });
/** The status a run writes: online, nothing wrong, nothing due — changed by `fields`. */
const status = (fields: Partial<Decision['status']> = {}): Decision['status'] => ({ online: true, needsSignIn: false, lastError: null, nextRetryAt: null, ...fields });
const synced = { lastSyncAt: NOW };

type Row = [name: string, before: ScheduleState, outcome: RunOutcome, expected: Decision];

const rows: Row[] = [
  // All went.
  ['push and pull done', zero, ran(pushDone, pullDone), { state: zero, status: status(synced), runAt: null, reachable: true }],
  ['push and pull done: the counters start over', counts(3, 2), ran(pushDone, pullDone), { state: zero, status: status(synced), runAt: null, reachable: true }],
  ['push only (a flush), done: no lastSyncAt', counts(2, 0), ran(pushDone, null), { state: zero, status: status(), runAt: null, reachable: true }],
  // The push waits.
  ['an operation waits out its backoff, pull done', zero, ran(pushBackoff(NOW + 5_000), pullDone), { state: zero, status: status({ nextRetryAt: NOW + 5_000 }), runAt: NOW + 5_000, reachable: true }],
  ['push: answer lost → its until, offline', zero, ran(pushWaiting('network', NOW + 2_000), null), { state: zero, status: status({ online: false, lastError: 'network', nextRetryAt: NOW + 2_000 }), runAt: NOW + 2_000, reachable: false }],
  ['push: 5xx → its until', zero, ran(pushWaiting('server', NOW + 4_000), null), { state: zero, status: status({ lastError: 'server', nextRetryAt: NOW + 4_000 }), runAt: NOW + 4_000, reachable: true }],
  ['push: 429 → its until (Retry-After)', zero, ran(pushWaiting('rate_limited', NOW + 7_000), null), { state: zero, status: status({ lastError: 'rate_limited', nextRetryAt: NOW + 7_000 }), runAt: NOW + 7_000, reachable: true }],
  ['push: 409 in progress → its until', zero, ran(pushWaiting('in_progress', NOW + 2_000), null), { state: zero, status: status({ lastError: 'in_progress', nextRetryAt: NOW + 2_000 }), runAt: NOW + 2_000, reachable: true }],
  // Unreachable: the reconnect pace (1 s doubling to 5 s, jittered).
  ['push: unreachable, first time → 750 ms', zero, ran(pushOffline, null), { state: counts(0, 1), status: status({ online: false, lastError: 'offline', nextRetryAt: NOW + 750 }), runAt: NOW + 750, reachable: false }],
  ['push: unreachable, second time → 1.5 s', counts(0, 1), ran(pushOffline, null), { state: counts(0, 2), status: status({ online: false, lastError: 'offline', nextRetryAt: NOW + 1_500 }), runAt: NOW + 1_500, reachable: false }],
  ['push: unreachable, sixth time → capped at 5 s', counts(0, 5), ran(pushOffline, null), { state: counts(0, 6), status: status({ online: false, lastError: 'offline', nextRetryAt: NOW + 3_750 }), runAt: NOW + 3_750, reachable: false }],
  ['push unreachable: a pull skipped clears the pull counter', counts(2, 0), ran(pushOffline, null), { state: counts(0, 1), status: status({ online: false, lastError: 'offline', nextRetryAt: NOW + 750 }), runAt: NOW + 750, reachable: false }],
  ['pull: unreachable → the reconnect pace, not the pull backoff', counts(1, 0), ran(pushDone, pullUnreachable), { state: counts(0, 1), status: status({ online: false, lastError: 'offline', nextRetryAt: NOW + 750 }), runAt: NOW + 750, reachable: false }],
  // The pull fails in a retryable way: its own backoff.
  ['pull: answer lost → pull backoff, offline', zero, ran(pushDone, pullLost), { state: counts(1, 0), status: status({ online: false, lastError: 'reset', nextRetryAt: NOW + 750 }), runAt: NOW + 750, reachable: false }],
  ['pull: 5xx, fourth time → 6 s', counts(3, 0), ran(pushDone, pull503), { state: counts(4, 0), status: status({ lastError: 'down', nextRetryAt: NOW + 6_000 }), runAt: NOW + 6_000, reachable: true }],
  ['pull: 5xx, many times → capped at 5 min', counts(20, 0), ran(pushDone, pull503), { state: counts(21, 0), status: status({ lastError: 'down', nextRetryAt: NOW + 225_000 }), runAt: NOW + 225_000, reachable: true }],
  ['pull: 429', zero, ran(pushDone, pull429), { state: counts(1, 0), status: status({ lastError: 'slow down', nextRetryAt: NOW + 750 }), runAt: NOW + 750, reachable: true }],
  ['pull: 409 in progress', zero, ran(pushDone, pullInProgress), { state: counts(1, 0), status: status({ lastError: 'running', nextRetryAt: NOW + 750 }), runAt: NOW + 750, reachable: true }],
  ['pull refused (403): the period, the counters start over', counts(2, 3), ran(pushDone, pull403), { state: zero, status: status({ lastError: 'no' }), runAt: null, reachable: true }],
  // Both wait: the earliest wins.
  ['an operation waits 60 s, the pull failed → the pull backoff', zero, ran(pushBackoff(NOW + 60_000), pull503), { state: counts(1, 0), status: status({ lastError: 'down', nextRetryAt: NOW + 750 }), runAt: NOW + 750, reachable: true }],
  ['an operation waits 0.5 s, the pull failed → the operation', zero, ran(pushBackoff(NOW + 500), pull503), { state: counts(1, 0), status: status({ lastError: 'down', nextRetryAt: NOW + 500 }), runAt: NOW + 500, reachable: true }],
  // 401: paused until a sign-in; device_wiped also says so.
  ['push 401 → needsSignIn, no retry', counts(1, 1), ran(push401, null), { state: zero, status: status({ needsSignIn: true }), runAt: null, reachable: false }],
  ['push 401 device_wiped → deviceWiped', zero, ran(pushWiped, null), { state: zero, status: status({ needsSignIn: true, deviceWiped: true }), runAt: null, reachable: false }],
  ['pull 401 → needsSignIn', zero, ran(pushDone, pull401), { state: zero, status: status({ needsSignIn: true }), runAt: null, reachable: false }],
  ['pull 401 device_wiped → deviceWiped', zero, ran(pushDone, pullWiped), { state: zero, status: status({ needsSignIn: true, deviceWiped: true }), runAt: null, reachable: false }],
  ['an operation waiting, then pull 401: the wait shown, no retry', zero, ran(pushBackoff(NOW + 5_000), pull401), { state: zero, status: status({ needsSignIn: true, nextRetryAt: NOW + 5_000 }), runAt: null, reachable: false }],
  // Not a run's answer.
  ['the run threw: retry after the backoff base, counters kept', counts(2, 1), { kind: 'threw', message: 'Connection to Indexed Database server lost' }, { state: counts(2, 1), status: { lastError: 'Connection to Indexed Database server lost' }, runAt: NOW + 1_000, reachable: null }],
  ['woken: now, the counters start over, every wait ends', counts(3, 4), { kind: 'woken' }, { state: zero, status: {}, runAt: NOW, reachable: null, endWaits: true }],
  // An answer during a run (between its steps): the run's outcome writes the status and sets the timer.
  ['answered after runs that could not reach the server: the counters start over, every wait ends', counts(0, 3), { kind: 'answered' }, { state: zero, status: {}, runAt: null, reachable: null, endWaits: true }],
  ['answered after pulls that failed: the counters start over, every wait ends', counts(2, 0), { kind: 'answered' }, { state: zero, status: {}, runAt: null, reachable: null, endWaits: true }],
  ['answered, no outage (at most one lost answer): nothing changes, the waits stay', zero, { kind: 'answered' }, { state: zero, status: {}, runAt: null, reachable: null }],
];

describe('nextRun', () => {
  it.each(rows)('%s', (_name, before, outcome, expected) => {
    expect(nextRun(before, outcome, ctx)).toEqual(expected);
  });

  it('draws randomness only for a backoff it computes', () => {
    let draws = 0;
    const counting = { ...ctx, random: () => (draws++, 0.5) };
    nextRun(zero, ran(pushDone, pullDone), counting);
    nextRun(zero, ran(pushBackoff(NOW + 1), pull401), counting);
    expect(draws).toBe(0);
    nextRun(zero, ran(pushOffline, null), counting);
    expect(draws).toBe(1);
  });
});

describe('timerDelay', () => {
  it.each([
    ['no retry due: the period', null, 60_000],
    ['a retry in 5 s', NOW + 5_000, 5_000],
    ['a retry already due', NOW - 1, 0],
    ['a retry after the period: the period', NOW + 3_600_000, 60_000],
  ] as const)('%s', (_name, runAt, delay) => {
    expect(timerDelay(runAt, NOW, 60_000)).toBe(delay);
  });
});
