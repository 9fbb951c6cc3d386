// What a pull is handed: the network, the database, the clock. Apart from pull.ts, so that the
// scan (which the pull calls) names it without importing the pull back.
import type { HttpDeps } from '../core/http';
import type { ParleyDb } from '../mirror/db';

export interface PullDeps extends HttpDeps {
  db: ParleyDb;
  now: () => number;
  /** Events per feed request (default: the server's maximum); tests use small pages. */
  feedPageLimit?: number;
  /** Per-conversation listings in flight during the scan. */
  scanConcurrency?: number;
}
