// Pacing under the server's rate limit. A long first sync (tens of thousands of requests against
// a server without the change feed) would otherwise send as fast as answers come, meet the limit,
// be refused (429) and wait out Retry-After, over and over. Where the server says where the token
// stands (the RateLimit fields of draft-ietf-httpapi-ratelimit-headers, which Parley's server
// sends: lib/api/http/rate-limit.ts), requests are spread under what is left instead.
//
// `paceAfter` is the rule, pure: an answer's status and headers, and the clock → how long before
// any next request (`waitMs`) and how far apart the next ones go (`gapMs`).
//
//   the answer's RateLimit says                    waitMs                        gapMs
//   r > margin (every item) ...................... 0                             0: as fast as answers come
//   0 < r ≤ margin, its policy q per w ........... 0                             w/q ÷ 0.9: just under the sustained share
//   0 < r ≤ margin, no policy known .............. 0                             t/r: the rest spread over its window
//   r = 0 ........................................ t                             as above
//   any of these, on a 429 or 503 ................ Retry-After where there is one (it takes precedence)
//   nothing (a plain server, or a 429 without it)  0                             0: as today — a 429 fails the request,
//                                                                                 and its Retry-After is the caller's
//
// The margin (PACE_MARGIN, or the policy's q if smaller) is kept back while going at full speed: the
// answers of requests in flight lag behind, and what the margin leaves of a reserve absorbs the odd
// request that lands early; pacing at 90 % of the sustained share keeps the reserve from draining.
// Several items (a proxy's beside its upstream's): each applies, the strictest wins.
//
// `Pacer` applies it to every request of one engine (http.ts `call`): one gate, whatever is in
// flight (the scan's listings, the pager's next page, the replay).
import type { Clock } from './clock';
import { parseLimitList, type LimitItem } from './ratelimit-fields';

export interface Pace {
  /** No request before this many ms from the answer. */
  waitMs: number;
  /** Between one request and the next, at least this many ms (0: no spacing). */
  gapMs: number;
}

/** Requests kept back from the available quota before pacing starts. */
export const PACE_MARGIN = 50;
/** The share of a policy's sustained quota paced at. */
export const PACE_SHARE = 0.9;

const NO_PACE: Pace = { waitMs: 0, gapMs: 0 };

/** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The rule (see the table at the head of this file). */
export function paceAfter(answer: { status: number; headers: Headers }, nowMs: number): Pace {
  const { status, headers } = answer;
  const limits = parseLimitList(headers.get('ratelimit')) ?? [];
  const policies = new Map((parseLimitList(headers.get('ratelimit-policy')) ?? []).map((p) => [p.name, p]));
  // Without the fields, nothing here: a refusal's Retry-After is the caller's, as before the fields.
  if (limits.length === 0) return NO_PACE;
  const pace = limits.map((item) => itemPace(item, policies.get(item.name))).reduce(stricter, NO_PACE);
  const retry = status === 429 || status === 503 ? retryAfterMs(headers.get('retry-after'), nowMs) : null;
  return retry === null ? pace : { waitMs: retry, gapMs: pace.gapMs };
}

function itemPace(item: LimitItem, policy: LimitItem | undefined): Pace {
  const r = item.params.get('r');
  if (r === undefined || r < 0) return NO_PACE; // not a service limit item
  const t = item.params.get('t');
  const windowMs = t !== undefined && t >= 0 ? t * 1000 : null;
  const q = policy?.params.get('q');
  const w = policy?.params.get('w');
  // A quota without a window says no rate to keep to.
  const sustained = q !== undefined && q > 0 && w !== undefined && w > 0 ? { q, w } : null;
  if (r > Math.min(PACE_MARGIN, sustained?.q ?? PACE_MARGIN)) return NO_PACE;
  const gapMs = sustained ? (sustained.w * 1000) / (sustained.q * PACE_SHARE) : windowMs !== null ? windowMs / Math.max(1, r) : 0;
  return { waitMs: r === 0 ? (windowMs ?? 0) : 0, gapMs };
}

function stricter(a: Pace, b: Pace): Pace {
  return { waitMs: Math.max(a.waitMs, b.waitMs), gapMs: Math.max(a.gapMs, b.gapMs) };
}

/**
 * The gate every request of an engine passes (`turn`), fed with every answer (`observe`). A wait
 * longer than `longestWaitMs` is not waited here: `turn` says how long it is, and the request is
 * answered "rate limited" without being sent (the engine's schedule waits, not a run holding the
 * sync lock).
 */
export class Pacer {
  private notBefore = 0;
  private gapMs = 0;

  constructor(
    private readonly clock: Clock,
    private readonly longestWaitMs = 5_000,
  ) {}

  observe(status: number, headers: Headers): void {
    const now = this.clock.now();
    const pace = paceAfter({ status, headers }, now);
    this.gapMs = pace.gapMs;
    if (pace.waitMs > 0) this.notBefore = Math.max(this.notBefore, now + pace.waitMs);
  }

  /** Resolves when this request may go (0), or at once with the ms still to wait when that is too long to wait here. */
  async turn(): Promise<number> {
    const now = this.clock.now();
    const at = Math.max(now, this.notBefore);
    if (at - now > this.longestWaitMs) return at - now;
    this.notBefore = at + this.gapMs;
    if (at > now) await new Promise<void>((resolve) => this.clock.setTimeout(resolve, at - now));
    return 0;
  }
}
