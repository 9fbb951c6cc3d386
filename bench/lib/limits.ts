// The least time a rate limit allows for a number of requests: what a client that paced itself
// perfectly would take, going as fast as its floor where the limit lets it. The floor of a first
// sync against a server with limits is then the larger of this and the bare loop's own time.
import { readConfig, type RateLimit } from '../../lib/config';

/**
 * The plain server's limits: `npm start`'s defaults, unless BENCH_PLAIN_LIMITS="<per second>/<reserve>"
 * scales them (on a machine so loaded that the app never reaches the defaults, a smaller limit
 * still shows what meeting one costs).
 */
export function plainLimitEnv(): Record<string, string> {
  const scaled = /^(\d+)\/(\d+)$/.exec(process.env.BENCH_PLAIN_LIMITS ?? '');
  return scaled ? { RATE_LIMIT_PER_SECOND: scaled[1]!, RATE_LIMIT_BURST: scaled[2]! } : {};
}

/** The per-token limit the plain server runs with (lib/config.ts's defaults, or plainLimitEnv's). */
export function plainTokenLimit(): RateLimit {
  return readConfig(plainLimitEnv()).rateLimits.token;
}

/**
 * Seconds for `requests` at no more than `perSecondAtBest` (the floor's own rate), under `limit`:
 * the sustained share, plus the reserve spent as fast as the floor goes and refilled whole at the
 * end of each of its windows (rate-limiter-flexible's fixed window, from the first request over the
 * share). The peak and write caps are off by default and left out.
 */
export function leastSecondsUnder(limit: RateLimit, requests: number, perSecondAtBest: number): number {
  if (limit.perSecond === 0 || perSecondAtBest <= limit.perSecond) return requests / perSecondAtBest;
  let seconds = 0;
  let sent = 0;
  for (;;) {
    // The reserve, spent at the floor's rate beyond the sustained share...
    const fast = limit.burst / (perSecondAtBest - limit.perSecond);
    if (sent + perSecondAtBest * Math.min(fast, limit.burstSeconds) >= requests) return seconds + (requests - sent) / perSecondAtBest;
    if (fast >= limit.burstSeconds) {
      sent += perSecondAtBest * limit.burstSeconds;
      seconds += limit.burstSeconds;
      continue;
    }
    sent += perSecondAtBest * fast;
    seconds += fast;
    // ... then the sustained share alone until the reserve's window ends.
    const slow = limit.burstSeconds - fast;
    if (sent + limit.perSecond * slow >= requests) return seconds + (requests - sent) / limit.perSecond;
    sent += limit.perSecond * slow;
    seconds += slow;
  }
}
