// Rate limits (../shared/API.md, "Limits"): a token bucket per bearer token, and per client
// address for /v1 requests without a valid token. Over it: 429 rate_limited with Retry-After.
//
// The bucket is rate-limiter-flexible's BurstyRateLimiter, composed here: `perSecond` requests in
// every second, and once a second's share is spent a reserve of `burst` more, refilled every `burstSeconds`,
// spent at no more than `peakPerSecond` (a flood's reserve would otherwise land on the server in
// one second). A legitimate burst (an initial sync, a replay of a queue built offline) spends the
// reserve and is not slowed; a flood settles at `perSecond`.
//
// What the bucket says of a key is advertised on the answer (RateLimit-Policy and RateLimit,
// draft-ietf-httpapi-ratelimit-headers; README "Rate limit fields"): the sustained share as the
// policy's quota per second, and as the key's available quota what it may spend now (the rest of
// the current ~100 ms share and of the reserve), so a client can pace itself under the limit
// instead of meeting it (lib/sync/core/pace.ts).
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
/** Authorization headers whose bucket key is remembered (as many as the Authenticator's cache holds tokens). */
const TOKEN_KEYS_MAX = 10_000;

/** A limit as RateLimit-Policy states it: `quota` requests per `window` seconds, and the reserve beyond it. */
export interface QuotaPolicy {
  /** The policy's name in both fields (`token`, `writes`, `address`, …; a proxy's are `proxy-…`). */
  name: string;
  quota: number;
  window: number;
  /** RATE_LIMIT_BURST per RATE_LIMIT_BURST_SECONDS, spent once the sustained share of the moment is. */
  reserve: { quota: number; window: number } | null;
}

/** A key's standing under one policy once a request is counted: the RateLimit field's item. */
export interface QuotaReading {
  policy: QuotaPolicy;
  /** Requests the key may send now without a refusal (`r`): the rest of the current share and of the reserve. */
  remaining: number;
  /** Seconds, at least 1, within which it should send no more than `remaining` (`t`). */
  seconds: number;
}

/** What a bucket's count left of a key. */
interface Left {
  remaining: number;
  msBeforeNext: number;
}

interface Bucket {
  policy: QuotaPolicy;
  /** Counts one request; rejects with a RateLimiterRes (msBeforeNext) when the key is over. */
  consume(key: string): Promise<Left>;
}

type Logger = Pick<Console, 'error'>;

/**
 * The answer for a key over its limit; Retry-After in whole seconds, at least 1, and with the
 * policy it broke, the fields saying nothing is left until then.
 */
export function rateLimited(msBeforeNext: number, what: 'token' | 'address', policy: QuotaPolicy | null = null): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    'rate_limited',
    `Too many requests ${what === 'token' ? 'with this token' : 'without a valid token from this address'}; retry after ${seconds} s`,
    undefined,
    {},
    { 'Retry-After': String(seconds), ...(policy ? rateLimitFields([{ policy, remaining: 0, seconds }]) : {}) },
  );
}

/**
 * The fields for an answer (structured-field Lists, one item per policy): e.g.
 * `RateLimit-Policy: "token";q=100;w=1;parley-reserve=2000;parley-reserve-w=60` and
 * `RateLimit: "token";r=1987;t=1`. Nothing when nothing was counted.
 */
export function rateLimitFields(readings: readonly QuotaReading[]): Record<string, string> {
  if (readings.length === 0) return {};
  return { 'RateLimit-Policy': policyField(readings), RateLimit: standingField(readings) };
}

/** A policy's item: the same text for every answer counted against it, so written once. */
const policyItems = new WeakMap<QuotaPolicy, string>();
function policyItem(policy: QuotaPolicy): string {
  let item = policyItems.get(policy);
  if (item === undefined) {
    const { name, quota, window, reserve } = policy;
    item = `"${name}";q=${quota};w=${window}${reserve ? `;parley-reserve=${reserve.quota};parley-reserve-w=${reserve.window}` : ''}`;
    policyItems.set(policy, item);
  }
  return item;
}

const policyField = (readings: readonly QuotaReading[]) => (readings.length === 1 ? policyItem(readings[0].policy) : readings.map((r) => policyItem(r.policy)).join(', '));
const standingField = (readings: readonly QuotaReading[]) => readings.map((r) => `"${r.policy.name}";r=${r.remaining};t=${r.seconds}`).join(', ');

/**
 * Adds the fields to an answer that may carry some already (a proxied upstream's): both are
 * Lists, so this instance's items are appended to the upstream's, whatever their case.
 */
export function addRateLimitFields(headers: Record<string, string>, readings: readonly QuotaReading[]): void {
  if (readings.length === 0) return;
  appendListField(headers, 'RateLimit-Policy', policyField(readings));
  appendListField(headers, 'RateLimit', standingField(readings));
}

function appendListField(headers: Record<string, string>, name: string, value: string): void {
  const lower = name.toLowerCase();
  for (const key of Object.keys(headers)) {
    if (key.length === name.length && key.toLowerCase() === lower) {
      headers[key] = `${headers[key]}, ${value}`;
      return;
    }
  }
  headers[name] = value;
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
 * The bucket key of each Authorization header seen lately: a client sends the same header on
 * every request, and its SHA-256 was most of what counting one cost. A pure function of the
 * header, so there is nothing to invalidate (a revoked token is refused before it is counted);
 * bounded like the other per-key maps here.
 */
class TokenKeys {
  private readonly keys = new Map<string, string | null>();

  of(authorization: string | null): string | null {
    if (!authorization) return null;
    let key = this.keys.get(authorization);
    if (key === undefined) {
      const token = bearerToken(authorization);
      key = token === null ? null : tokenKey(token);
      if (this.keys.size >= TOKEN_KEYS_MAX) this.keys.clear();
      this.keys.set(authorization, key);
    }
    return key;
  }
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

/**
 * The reserve each key has left, as this instance last counted it: a request within the
 * sustained share does not touch the reserve, so what it left is told from here rather than read
 * again (a query per request on PostgreSQL). Other instances' spending is not seen: a hint.
 */
class ReserveMemo {
  private readonly left = new Map<string, { remaining: number; until: number }>();
  constructor(private readonly full: number) {}

  note(key: string, res: RateLimiterRes): void {
    if (this.left.size >= MAX_TOLD) this.left.clear();
    this.left.set(key, { remaining: res.remainingPoints, until: Date.now() + res.msBeforeNext });
  }

  of(key: string): number {
    const seen = this.left.get(key);
    return seen && seen.until > Date.now() ? seen.remaining : this.full;
  }
}

export interface PgLikePool {
  query(config: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: unknown[] }>;
  end?(): Promise<void>;
}

export interface LimiterOptions {
  /** The policies' names: the embedded server's, or a proxy's own (`proxy-token`, …) beside its upstream's. */
  policyPrefix?: string;
  /** Its 429s carry the RateLimit fields (the `ratelimit` extension; default true). */
  advertise?: boolean;
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

  private readonly prefix: string;
  private readonly advertise: boolean;
  private readonly tokenKeys = new TokenKeys();

  private constructor(
    limits: RateLimits,
    private readonly pool: PgLikePool | null,
    private readonly log: Logger,
    options: LimiterOptions = {},
  ) {
    this.prefix = options.policyPrefix ?? '';
    this.advertise = options.advertise ?? true;
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
    this.token = this.bucket('tok', 'token', limits.token);
    this.writes = limits.writesPerSecond > 0 ? this.cap('wr', 'writes', limits.writesPerSecond) : null;
    this.anonymous = this.bucket('adr', 'address', limits.anonymous);
    // Pairing codes redeemed per address: a flat count per minute (what bounds guessing a code).
    const perMinute = limits.pairingPerMinute ?? 0;
    this.pairing = perMinute > 0 ? this.flat('pair', 'pairing', perMinute) : null;
    // Steps of a single sign-on per address: a flat count per minute as well.
    const signIns = limits.signInPerMinute ?? 0;
    this.signIn = signIns > 0 ? this.flat('sso', 'sign-in', signIns) : null;
  }

  /** In this process's memory (one instance; the proxy, whose policies are named `proxy-…`). */
  static memory(limits: RateLimits, log: Logger = console, options: LimiterOptions = {}): RateLimiter {
    return new RateLimiter(limits, null, log, options);
  }

  /** In memory; or in PostgreSQL at `databaseUrl`, shared by every instance on that database. */
  static async open(limits: RateLimits, databaseUrl: string | null, log: Logger = console, options: LimiterOptions = {}): Promise<RateLimiter> {
    if (!databaseUrl || (limits.token.perSecond === 0 && limits.anonymous.perSecond === 0 && !limits.pairingPerMinute && !limits.signInPerMinute)) {
      return new RateLimiter(limits, null, log, options);
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
    return new RateLimiter(limits, pool, log, options);
  }

  /**
   * A /v1 request with a valid token: throws 429 rate_limited once the token is over its limit
   * (`method`: a write also counts against the token's write cap). Returns where the token
   * stands, for the answer's RateLimit fields (`rateLimitFields`).
   */
  async forToken(authorization: string | null, method = 'GET'): Promise<QuotaReading[]> {
    if (!this.token) return [];
    const key = this.tokenKeys.of(authorization);
    if (key === null) return [];
    const readings: QuotaReading[] = [];
    if (this.writes && WRITES.has(method)) readings.push(...(await this.consume(this.writes, key, 'token')));
    readings.push(...(await this.consume(this.token, key, 'token')));
    return readings;
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
  async forAddress(kind: 'pairing' | 'sign-in' | 'address', remoteAddress: string | null | undefined): Promise<QuotaReading[]> {
    const bucket = kind === 'pairing' ? this.pairing : kind === 'sign-in' ? this.signIn : this.anonymous;
    return bucket ? this.consume(bucket, addressKey(remoteAddress), 'address') : [];
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
  private async consume(bucket: Bucket, key: string, what: 'token' | 'address'): Promise<QuotaReading[]> {
    try {
      const left = await bucket.consume(key);
      return [{ policy: bucket.policy, remaining: left.remaining, seconds: Math.max(1, Math.ceil(left.msBeforeNext / 1000)) }];
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        const now = Date.now();
        const toldKey = `${what}:${key}`;
        const until = this.told.get(toldKey);
        if (until !== undefined && until > now) {
          await new Promise((resolve) => setTimeout(resolve, MAX_HOLD_MS));
          throw rateLimited(Math.max(0, until - Date.now()), what, this.advertise ? bucket.policy : null);
        }
        const answer = rateLimited(error.msBeforeNext, what, this.advertise ? bucket.policy : null);
        if (this.told.size >= MAX_TOLD) this.told.clear();
        this.told.set(toldKey, now + Number(answer.headers['Retry-After']) * 1000);
        throw answer;
      }
      // Neither the store nor the insurance answered: a limit that cannot be counted lets the request through.
      this.log.error('[parley] rate limits: could not count a request:', error instanceof Error ? error.message : error);
      return [];
    }
  }

  private bucket(prefix: string, name: string, limit: RateLimit): Bucket | null {
    if (limit.perSecond === 0) return null;
    const reserve = limit.burst > 0 ? { quota: limit.burst, window: limit.burstSeconds } : null;
    const policy: QuotaPolicy = { name: this.prefix + name, quota: limit.perSecond, window: 1, reserve };
    // The steady share in windows of about 100 ms (e.g. 10 per 100 ms for 100/s), not 1 s: a flood
    // then trickles in evenly instead of landing all at once at the start of every second.
    // Whole milliseconds: the PostgreSQL store keeps its expiry as a bigint.
    const points = Math.max(1, Math.round(limit.perSecond / 10));
    const steady = this.limiter(`${prefix}`, { points, duration: Math.ceil((points * 1000) / limit.perSecond) / 1000 });
    // Beyond the share of the moment, the reserve (what rate-limiter-flexible's BurstyRateLimiter
    // does, here so that what the reserve has left is known for the fields).
    const burst = reserve ? this.limiter(`${prefix}b`, { points: reserve.quota, duration: reserve.window }) : null;
    const memo = new ReserveMemo(reserve?.quota ?? 0);
    const bursty = async (key: string): Promise<Left> => {
      try {
        const res = await steady.consume(key);
        return { remaining: res.remainingPoints + memo.of(key), msBeforeNext: res.msBeforeNext };
      } catch (refused) {
        if (!burst || !(refused instanceof RateLimiterRes)) throw refused;
        try {
          const res = await burst.consume(key);
          memo.note(key, res);
          return { remaining: res.remainingPoints, msBeforeNext: refused.msBeforeNext };
        } catch (spent) {
          if (!(spent instanceof RateLimiterRes)) throw spent;
          memo.note(key, spent);
          throw new RateLimiterRes(0, Math.min(refused.msBeforeNext, spent.msBeforeNext));
        }
      }
    };
    if (!reserve || limit.peakPerSecond === 0) return { policy, consume: bursty };
    // The reserve is spent at no more than the peak rate: in this instance's memory (it is this
    // process's CPU it protects), in windows of ~100 ms like the steady share.
    const peakPoints = Math.max(1, Math.round(limit.peakPerSecond / 10));
    const peak = new RateLimiterMemory({ keyPrefix: `${prefix}p`, points: peakPoints, duration: Math.ceil((peakPoints * 1000) / limit.peakPerSecond) / 1000 });
    return {
      policy,
      consume: async (key) => {
        const fast = await peak.consume(key);
        const left = await bursty(key);
        return { remaining: Math.min(left.remaining, fast.remainingPoints), msBeforeNext: left.msBeforeNext };
      },
    };
  }

  /** A flat cap of `perSecond` in this instance's memory, counted in ~100 ms windows. */
  private cap(prefix: string, name: string, perSecond: number): Bucket {
    const points = Math.max(1, Math.round(perSecond / 10));
    const limiter = new RateLimiterMemory({ keyPrefix: prefix, points, duration: Math.ceil((points * 1000) / perSecond) / 1000 });
    return { policy: { name: this.prefix + name, quota: perSecond, window: 1, reserve: null }, consume: (key) => counted(limiter, key) };
  }

  /** A flat count per minute (pairing, sign-in steps), shared like the others. */
  private flat(prefix: string, name: string, perMinute: number): Bucket {
    const limiter = this.limiter(prefix, { points: perMinute, duration: 60 });
    return { policy: { name: this.prefix + name, quota: perMinute, window: 60, reserve: null }, consume: (key) => counted(limiter, key) };
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

async function counted(limiter: RateLimiterAbstract, key: string): Promise<Left> {
  const res = await limiter.consume(key);
  return { remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext };
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
