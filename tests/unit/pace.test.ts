// Pacing under the server's rate limit (lib/sync/core/pace.ts), as a table: an answer's status and
// RateLimit / RateLimit-Policy / Retry-After fields, and the clock → how long before the next
// request, and how far apart the ones after it. Then the gate that applies it to every request.
import { describe, expect, it } from 'vitest';
import { Pacer, paceAfter, PACE_SHARE, type Pace } from '../../lib/sync/core/pace';
import { parseLimitList } from '../../lib/sync/core/ratelimit-fields';
import type { Clock } from '../../lib/sync/core/clock';

const NOW = 1_700_000_000_000;
const DATE_IN_30_S = new Date(NOW + 30_000).toUTCString();
/** Parley's server at its defaults: 100 a second sustained, 2,000 in reserve per minute. */
const PARLEY_POLICY = '"token";q=100;w=1;parley-reserve=2000;parley-reserve-w=60';
/** Just under the sustained 100 a second. */
const SUSTAINED_GAP = 1000 / (100 * PACE_SHARE);

type Row = [name: string, status: number, headers: Record<string, string>, expected: Pace];

const table: Row[] = [
  // A plain server: nothing to pace by; a 429's Retry-After is the caller's (the request fails, as always)
  ['no fields → as fast as answers come', 200, {}, { waitMs: 0, gapMs: 0 }],
  ['a 429 without fields → nothing here (the failed request carries Retry-After)', 429, { 'retry-after': '7' }, { waitMs: 0, gapMs: 0 }],
  ['only a policy, no RateLimit → nothing to go by', 200, { 'ratelimit-policy': PARLEY_POLICY }, { waitMs: 0, gapMs: 0 }],
  // Parley's server: full speed while the reserve lasts, then just under the sustained share
  ['plenty left (the reserve) → no pacing', 200, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: '"token";r=1987;t=1' }, { waitMs: 0, gapMs: 0 }],
  ['just above the margin → no pacing', 200, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: '"token";r=51;t=1' }, { waitMs: 0, gapMs: 0 }],
  ['at the margin → paced at 90 % of q per w', 200, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: '"token";r=50;t=1' }, { waitMs: 0, gapMs: SUSTAINED_GAP }],
  ['nearly spent → still paced, no wait', 200, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: '"token";r=1;t=1' }, { waitMs: 0, gapMs: SUSTAINED_GAP }],
  ['spent (r=0) → wait out its window, then paced', 200, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: '"token";r=0;t=1' }, { waitMs: 1000, gapMs: SUSTAINED_GAP }],
  ['429 with the fields → Retry-After takes precedence over t', 429, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: '"token";r=0;t=1', 'retry-after': '3' }, { waitMs: 3000, gapMs: SUSTAINED_GAP }],
  ['503 with the fields and Retry-After as a date', 503, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: '"token";r=0;t=1', 'retry-after': DATE_IN_30_S }, { waitMs: 30_000, gapMs: SUSTAINED_GAP }],
  ['a small policy: its q is the margin (20 a second)', 200, { 'ratelimit-policy': '"token";q=20;w=1', ratelimit: '"token";r=21;t=1' }, { waitMs: 0, gapMs: 0 }],
  ['a small policy at its margin → 90 % of 20 a second', 200, { 'ratelimit-policy': '"token";q=20;w=1', ratelimit: '"token";r=20;t=1' }, { waitMs: 0, gapMs: 1000 / (20 * PACE_SHARE) }],
  // Another server's fields: no policy → the rest spread over its window
  ['no policy, little left → spread over t', 200, { ratelimit: '"default";r=10;t=30' }, { waitMs: 0, gapMs: 3000 }],
  ['no policy, nothing left → wait t', 200, { ratelimit: '"default";r=0;t=30' }, { waitMs: 30_000, gapMs: 30_000 }],
  ['no policy, no window → nothing to spread over', 200, { ratelimit: '"default";r=3' }, { waitMs: 0, gapMs: 0 }],
  ['a policy without a window → no rate from it: spread over t', 200, { 'ratelimit-policy': '"default";q=1000', ratelimit: '"default";r=10;t=5' }, { waitMs: 0, gapMs: 500 }],
  ['a Token as the name (earlier drafts) works as a String', 200, { 'ratelimit-policy': 'token;q=100;w=1', ratelimit: 'token;r=0;t=2' }, { waitMs: 2000, gapMs: SUSTAINED_GAP }],
  // Several items (a proxy's beside its upstream's): the strictest wins
  ['two items: the one nearly spent decides', 200, { 'ratelimit-policy': `${PARLEY_POLICY}, "proxy-token";q=10;w=1`, ratelimit: '"token";r=1500;t=1, "proxy-token";r=4;t=1' }, { waitMs: 0, gapMs: 1000 / (10 * PACE_SHARE) }],
  ['two items, one spent: its wait, the larger gap', 200, { 'ratelimit-policy': `${PARLEY_POLICY}, "proxy-token";q=10;w=1`, ratelimit: '"token";r=3;t=1, "proxy-token";r=0;t=2' }, { waitMs: 2000, gapMs: 1000 / (10 * PACE_SHARE) }],
  // Malformed fields are ignored whole (the draft)
  ['malformed RateLimit (no name) → ignored', 200, { 'ratelimit-policy': PARLEY_POLICY, ratelimit: ';r=0;t=1' }, { waitMs: 0, gapMs: 0 }],
  ['malformed RateLimit (trailing comma) → ignored', 200, { ratelimit: '"token";r=0;t=9,' }, { waitMs: 0, gapMs: 0 }],
  ['malformed RateLimit (an unquoted space) → ignored', 200, { ratelimit: '"token";r=0 t=9' }, { waitMs: 0, gapMs: 0 }],
  ['r that is not an integer → not a limit', 200, { ratelimit: '"token";r=0.5;t=9' }, { waitMs: 0, gapMs: 0 }],
  ['a negative r → not a limit', 200, { ratelimit: '"token";r=-1;t=9' }, { waitMs: 0, gapMs: 0 }],
];

describe('paceAfter: an answer → the wait before the next request, and the gap between the next ones', () => {
  for (const [name, status, headers, expected] of table) {
    it(name, () => {
      const pace = paceAfter({ status, headers: new Headers(headers) }, NOW);
      expect(pace.waitMs).toBe(expected.waitMs);
      expect(pace.gapMs).toBeCloseTo(expected.gapMs, 6);
    });
  }
});

describe('parseLimitList: the structured-field Lists', () => {
  it('reads names, integer parameters, and skips the other kinds of value', () => {
    const items = parseLimitList('"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:, "x";q=1;flag;d=1.5;tok=abc;b=?0');
    expect(items?.map((i) => [i.name, Object.fromEntries(i.params)])).toEqual([
      ['peruser', { q: 65535, w: 10 }],
      ['x', { q: 1 }],
    ]);
  });

  it('ignores absent, empty and malformed fields', () => {
    for (const field of [null, '', '  ', '"a";q=1,,"b"', '"a', '"a";Q=1', '"a";q=1 "b"', '("a" "b");q=1', '"a";q=1234567890123456']) {
      expect(parseLimitList(field), String(field)).toBeNull();
    }
  });
});

/** A clock whose time moves only when a timer of the gate is due (it fires at once, moving the time). */
class GateClock implements Clock {
  time = NOW;
  waits: number[] = [];
  now() {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number) {
    this.waits.push(ms);
    this.time += ms;
    fn();
    return null;
  }
  clearTimeout() {}
}

const answer = (pacer: Pacer, status: number, headers: Record<string, string>) => pacer.observe(status, new Headers(headers));

describe('Pacer: the gate every request of an engine passes', () => {
  it('lets requests go at once until an answer says to pace, then spaces them by the gap', async () => {
    const clock = new GateClock();
    const pacer = new Pacer(clock);
    for (let i = 0; i < 3; i++) expect(await pacer.turn()).toBe(0);
    expect(clock.waits).toEqual([]);
    answer(pacer, 200, { 'ratelimit-policy': '"token";q=10;w=1', ratelimit: '"token";r=5;t=1' });
    // The first request after the answer goes at once; each later one a gap after the one before.
    for (let i = 0; i < 3; i++) expect(await pacer.turn()).toBe(0);
    expect(clock.waits.map((ms) => Math.round(ms))).toEqual([111, 111]);
  });

  it('waits out a spent quota once, then paces; a plain answer ends the pacing', async () => {
    const clock = new GateClock();
    const pacer = new Pacer(clock);
    answer(pacer, 200, { 'ratelimit-policy': '"token";q=10;w=1', ratelimit: '"token";r=0;t=2' });
    expect(await pacer.turn()).toBe(0);
    expect(await pacer.turn()).toBe(0);
    expect(clock.waits.map((ms) => Math.round(ms))).toEqual([2000, 111]);
    answer(pacer, 200, {});
    clock.waits = [];
    await pacer.turn(); // booked a gap after the last one, when the gap was still on
    await pacer.turn();
    await pacer.turn();
    expect(clock.waits.map((ms) => Math.round(ms))).toEqual([111]);
  });

  it('does not wait here longer than its limit: it says how long is left, and keeps the turn free', async () => {
    const clock = new GateClock();
    const pacer = new Pacer(clock, 5_000);
    answer(pacer, 429, { 'ratelimit-policy': '"token";q=10;w=1', ratelimit: '"token";r=0;t=1', 'retry-after': '60' });
    expect(await pacer.turn()).toBe(60_000);
    clock.time += 56_000;
    expect(await pacer.turn()).toBe(0);
    expect(clock.waits).toEqual([4_000]);
  });

  it('a 429 without the fields changes nothing (its request fails with its Retry-After, as before)', async () => {
    const clock = new GateClock();
    const pacer = new Pacer(clock);
    answer(pacer, 429, { 'retry-after': '7' });
    expect(await pacer.turn()).toBe(0);
    expect(clock.waits).toEqual([]);
  });
});
