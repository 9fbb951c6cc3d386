// Which refused bearer tokens the audit trail records, so that a client retrying with a dead token
// (or someone trying tokens) cannot fill it.
//
// A refusal is recorded at most once a minute per client address, reason and token: a revoked or
// wiped device that keeps calling leaves one row a minute, and guessing from one address leaves
// one `unknown_token` row a minute however many tokens it tries (an unknown token is not a key:
// every guess is a new one). The rate limit on refusals per address (RATE_LIMIT_ANONYMOUS_*)
// comes first: a refusal answered 429 is not recorded at all.
import type { TokenRefusal } from './tokens';

const WINDOW_MS = 60_000;
/** Keys remembered at most (then forgotten all at once: a few extra rows, never unbounded memory). */
const MAX_KEYS = 10_000;

export class RefusalSampler {
  private readonly seen = new Map<string, number>();

  /** Whether this refusal, at `now` (Unix ms), is the first of its kind this minute. */
  shouldRecord(address: string | null | undefined, refusal: TokenRefusal, now = Date.now()): boolean {
    const key = `${address ?? ''}|${refusal.reason}|${refusal.tokenId ?? ''}`;
    const last = this.seen.get(key);
    if (last !== undefined && now - last < WINDOW_MS) return false;
    if (this.seen.size >= MAX_KEYS) this.seen.clear();
    this.seen.set(key, now);
    return true;
  }
}
