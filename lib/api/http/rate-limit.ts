// Rate limits (../shared/API.md, "Limits"): a token bucket per bearer token, and per client
// address for /v1 requests without a valid token. Over it: 429 rate_limited with Retry-After.
//
// The bucket is rate-limiter-flexible's BurstyRateLimiter: `perSecond` requests in every second,
// and once a second's share is spent a reserve of `burst` more, refilled every `burstSeconds`,
// spent at no more than `peakPerSecond` (a flood's reserve would otherwise land on the server in
// one second). A legitimate burst (an initial sync, a replay of a queue built offline) spends the
// reserve and is not slowed; a flood settles at `perSecond`.
//
// Where the counts live: in this process's memory (SQLite: one instance), or — with DATABASE_URL
// — in an UNLOGGED PostgreSQL table every instance on that database shares (no WAL, no fsync: a
// count lost in a crash is a count nobody needs). The hot path then costs one upsert on a pool of
// its own; a key that has spent its share is refused from memory (inMemoryBlockOnConsumed) until
// its window ends, so a flood costs no queries; when PostgreSQL does not answer in time, this
// instance's memory decides (insuranceLimiter) rather than failing the request.
import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import {
  BurstyRateLimiter,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { RateLimit, RateLimits } from '../../config';
import { ApiError } from '../errors';
import { stringField } from '../../records';

const TABLE = 'parley_rate_limits';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const PURGE_MS = 5 * 60_000;
/** The longest a repeat refusal is held before it is answered (see `consume`). */
const MAX_HOLD_MS = 1000;
const MAX_TOLD = 100_000;

interface Bucket {
  consume(key: string): Promise<unknown>;
}

type Logger = Pick<Console, 'error'>;

/** The answer for a key over its limit; Retry-After in whole seconds, at least 1. */
export function rateLimited(msBeforeNext: number, what: 'token' | 'address'): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    'rate_limited',
    `Too many requests ${what === 'token' ? 'with this token' : 'without a valid token from this address'}; retry after ${seconds} s`,
    undefined,
    {},
    { 'Retry-After': String(seconds) },
  );
}

/** The token of `Authorization: Bearer <token>` as the Authenticator reads it, or null. */
function bearerToken(header: string | null): string | null {
  if (!header) return null;
  const space = header.indexOf(' ');
  if (space < 0) return null;
  const token = header.slice(space + 1).trim();
  return token || null;
}

/** Never the token itself as a key (it would sit in the database): a hash of it. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 32);
}

/**
 * An address as a bucket key: IPv4 (also IPv4-mapped IPv6) as is, IPv6 by its /64 (one host
 * usually holds a whole /64); unknown (an adapter that cannot tell) → one shared bucket.
 */
export function addressKey(address: string | null | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export interface RateLimiterOptions {
  /** pg's Pool (or anything with its query(config)), when the counts live in PostgreSQL. */
  pool?: PgLikePool | null;
}

export interface PgLikePool {
  query(config: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: unknown[] }>;
  end?(): Promise<void>;
}

export class RateLimiter {
  private readonly token: Bucket | null;
  private readonly writes: Bucket | null;
  private readonly anonymous: Bucket | null;
  private readonly pairing: Bucket | null;
  private readonly signIn: Bucket | null;
  private readonly timer: NodeJS.Timeout | null = null;
  /** The pool as the store sees it: failures (then memory decides) are logged, at most once a minute. */
  private readonly store: PgLikePool | null = null;
  private loggedAt = 0;
  /** Keys refused lately, and until when their Retry-After told them to wait. */
  private readonly told = new Map<string, number>();

  private constructor(
    limits: RateLimits,
    private readonly pool: PgLikePool | null,
    private readonly log: Logger,
  ) {
    if (pool) {
      this.store = {
        query: (config) =>
          pool.query(config).catch((error: unknown) => {
            if (Date.now() - this.loggedAt > 60_000) {
              this.loggedAt = Date.now();
              this.log.error('[parley] rate limits: PostgreSQL did not answer; this instance counts in memory meanwhile:', error instanceof Error ? error.message : error);
            }
            throw error;
          }),
      };
      this.timer = setInterval(() => void this.purge(), PURGE_MS);
      this.timer.unref();
    }
    this.token = this.bucket('tok', limits.token);
    this.writes = limits.writesPerSecond > 0 ? this.cap('wr', limits.writesPerSecond) : null;
    this.anonymous = this.bucket('adr', limits.anonymous);
    // Pairing codes redeemed per address: a flat count per minute (what bounds guessing a code).
    const perMinute = limits.pairingPerMinute ?? 0;
    this.pairing = perMinute > 0 ? this.limiter('pair', { points: perMinute, duration: 60 }) : null;
    // Steps of a single sign-on per address: a flat count per minute as well.
    const signIns = limits.signInPerMinute ?? 0;
    this.signIn = signIns > 0 ? this.limiter('sso', { points: signIns, duration: 60 }) : null;
  }

  /** In this process's memory (one instance; the proxy). */
  static memory(limits: RateLimits, log: Logger = console): RateLimiter {
    return new RateLimiter(limits, null, log);
  }

  /** In memory; or in PostgreSQL at `databaseUrl`, shared by every instance on that database. */
  static async open(limits: RateLimits, databaseUrl: string | null, log: Logger = console): Promise<RateLimiter> {
    if (!databaseUrl || (limits.token.perSecond === 0 && limits.anonymous.perSecond === 0 && !limits.pairingPerMinute && !limits.signInPerMinute)) {
      return new RateLimiter(limits, null, log);
    }
    const pg = await import('pg');
    const Pool = pg.default?.Pool ?? pg.Pool;
    const pool = new Pool({
      connectionString: databaseUrl,
      // On every /v1 request: a few connections, and quick to give up (memory decides meanwhile).
      max: 4,
      connectionTimeoutMillis: 1000,
      query_timeout: 1000,
    });
    // See storage/db.ts: a broken idle connection must not become an uncaught 'error'.
    pool.on('error', (error) => log.error('[parley] rate limits: idle PostgreSQL connection lost:', error.message));
    pool.on('connect', (client) => client.on('error', () => {}));
    try {
      await createTable(pool);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new RateLimiter(limits, pool, log);
  }

  /**
   * A /v1 request with a valid token: throws 429 rate_limited once the token is over its limit
   * (`method`: a write also counts against the token's write cap).
   */
  async forToken(authorization: string | null, method = 'GET'): Promise<void> {
    const token = bearerToken(authorization);
    if (!this.token || token === null) return;
    const key = tokenKey(token);
    if (this.writes && WRITES.has(method)) await this.consume(this.writes, key, 'token');
    await this.consume(this.token, key, 'token');
  }

  /**
   * A /v1 request refused for its token (`refusal`: the 401): counted against its address; over the
   * limit it is answered 429 instead. Always throws.
   */
  async refused(remoteAddress: string | null | undefined, refusal: unknown): Promise<never> {
    if (refusal instanceof ApiError && refusal.code === 'unauthenticated') {
      const limited = await this.countRefusal(remoteAddress);
      if (limited) throw limited;
    }
    throw refusal;
  }

  /**
   * A public request counted against its address: `pairing` (a code redeemed:
   * RATE_LIMIT_PAIRING_PER_MINUTE), `sign-in` (a step of a single sign-on:
   * RATE_LIMIT_SIGN_IN_PER_MINUTE) or `address` (polling for a pairing's token, asking whether
   * single sign-on is offered: the limit of requests without a valid token). Throws 429
   * rate_limited over it.
   */
  async forAddress(kind: 'pairing' | 'sign-in' | 'address', remoteAddress: string | null | undefined): Promise<void> {
    const bucket = kind === 'pairing' ? this.pairing : kind === 'sign-in' ? this.signIn : this.anonymous;
    if (bucket) await this.consume(bucket, addressKey(remoteAddress), 'address');
  }

  /** A request refused for its token (401), counted against its address: the 429 to answer instead, or null. */
  async countRefusal(remoteAddress: string | null | undefined): Promise<ApiError | null> {
    if (!this.anonymous) return null;
    try {
      await this.consume(this.anonymous, addressKey(remoteAddress), 'address');
      return null;
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.pool?.end?.();
  }

  /**
   * Counts one request. Over the limit: 429 at once the first time; a request that comes back
   * before the Retry-After it was given (a client that does not wait, a flood) is held MAX_HOLD_MS
   * from its own arrival, then refused. An idle timer costs this process nothing, where answering a
   * closed-loop flood as fast as it asks would take the whole CPU from everyone else; a client that
   * honours Retry-After never sees a held answer. From its own arrival, not until the window's end:
   * a flood's many connections would all wake at the start of the next ~100 ms window and spend its
   * share there as one burst, ten writes back to back ahead of whoever else asked then (bench, flood).
   */
  private async consume(bucket: Bucket, key: string, what: 'token' | 'address'): Promise<void> {
    try {
      await bucket.consume(key);
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        const now = Date.now();
        const toldKey = `${what}:${key}`;
        const until = this.told.get(toldKey);
        if (until !== undefined && until > now) {
          await new Promise((resolve) => setTimeout(resolve, MAX_HOLD_MS));
          throw rateLimited(Math.max(0, until - Date.now()), what);
        }
        const answer = rateLimited(error.msBeforeNext, what);
        if (this.told.size >= MAX_TOLD) this.told.clear();
        this.told.set(toldKey, now + Number(answer.headers['Retry-After']) * 1000);
        throw answer;
      }
      // Neither the store nor the insurance answered: a limit that cannot be counted lets the request through.
      this.log.error('[parley] rate limits: could not count a request:', error instanceof Error ? error.message : error);
    }
  }

  private bucket(prefix: string, limit: RateLimit): Bucket | null {
    if (limit.perSecond === 0) return null;
    // The steady share in windows of about 100 ms (e.g. 10 per 100 ms for 100/s), not 1 s: a flood
    // then trickles in evenly instead of landing all at once at the start of every second.
    // Whole milliseconds: the PostgreSQL store keeps its expiry as a bigint.
    const points = Math.max(1, Math.round(limit.perSecond / 10));
    const steady = this.limiter(`${prefix}`, { points, duration: Math.ceil((points * 1000) / limit.perSecond) / 1000 });
    if (limit.burst === 0) return steady;
    const bursty = new BurstyRateLimiter(steady, this.limiter(`${prefix}b`, { points: limit.burst, duration: limit.burstSeconds }));
    if (limit.peakPerSecond === 0) return bursty;
    // The reserve is spent at no more than the peak rate: in this instance's memory (it is this
    // process's CPU it protects), in windows of ~100 ms like the steady share.
    const peakPoints = Math.max(1, Math.round(limit.peakPerSecond / 10));
    const peak = new RateLimiterMemory({ keyPrefix: `${prefix}p`, points: peakPoints, duration: Math.ceil((peakPoints * 1000) / limit.peakPerSecond) / 1000 });
    return {
      consume: async (key) => {
        await peak.consume(key);
        return bursty.consume(key);
      },
    };
  }

  /** A flat cap of `perSecond` in this instance's memory, counted in ~100 ms windows. */
  private cap(prefix: string, perSecond: number): Bucket {
    const points = Math.max(1, Math.round(perSecond / 10));
    return new RateLimiterMemory({ keyPrefix: prefix, points, duration: Math.ceil((points * 1000) / perSecond) / 1000 });
  }

  private limiter(keyPrefix: string, options: { points: number; duration: number }): RateLimiterAbstract {
    if (!this.pool) return new RateLimiterMemory({ ...options, keyPrefix });
    return new RateLimiterPostgres({
      ...options,
      keyPrefix,
      storeClient: this.store,
      storeType: 'pool',
      tableName: TABLE,
      tableCreated: true,
      clearExpiredByTimeout: false, // one purge for all four, below
      // Spent: refused from memory until the window ends, without asking the database.
      inMemoryBlockOnConsumed: options.points,
      insuranceLimiter: new RateLimiterMemory({ ...options, keyPrefix }),
    });
  }

  private async purge(): Promise<void> {
    try {
      await this.pool!.query({ text: `DELETE FROM ${TABLE} WHERE expire < $1`, values: [Date.now() - 60_000] });
    } catch {
      // Not critical: the next pass removes them.
    }
  }
}

/** The counts' table: UNLOGGED (no WAL); created by whichever instance comes first. */
async function createTable(pool: PgLikePool): Promise<void> {
  try {
    await pool.query({
      text: `CREATE UNLOGGED TABLE IF NOT EXISTS ${TABLE} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`,
    });
  } catch (error) {
    // Two instances creating it at once: one of them wins, the other sees a duplicate.
    const code = stringField(error, 'code');
    if (code !== '23505' && code !== '42P07') throw error;
  }
}
