// Bearer tokens: static ones from PARLEY_TOKENS, and stored ones kept only as SHA-256 hashes
// (tokens are 256-bit random strings, so a fast hash is enough: there is nothing to brute-force).
import { createHash, randomBytes } from 'node:crypto';
import type { Db, TokenKind } from '../storage/db';
import { newId, nowSeconds } from './ids';
import { prepare } from '../storage/prepared';
import { deviceWiped, unauthenticated } from '../errors';

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
export const generateToken = () => `pk_${randomBytes(32).toString('base64url')}`;

export interface StoredToken {
  id: string;
  user_id: string;
  label: string | null;
  created_at: number;
}

/** Why a presented token was refused, and whose it was when it is known (for the audit trail). */
export interface TokenRefusal {
  reason: 'unknown_token' | 'device_wiped' | 'token_expired';
  tokenId?: string;
  user?: string;
}

const refusals = new WeakMap<object, TokenRefusal>();

function refusal<E extends object>(error: E, why: TokenRefusal): E {
  refusals.set(error, why);
  return error;
}

/** What `identify` knew about the token it refused with `error` (undefined: not a refused token). */
export function tokenRefusalOf(error: unknown): TokenRefusal | undefined {
  return typeof error === 'object' && error !== null ? refusals.get(error) : undefined;
}

export const USER_PATTERN = /^[A-Za-z0-9_.@-]{1,64}$/;

/**
 * Control characters (C0, DEL, C1: newlines, terminal escapes) and the invisible format characters
 * that reorder or hide text (bidi controls, zero-width, BOM): a label with one could forge a row of
 * `token list` or send escapes to whoever reads it.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/u;
export const MAX_LABEL_LENGTH = 200;

/** Why a token label cannot be stored, or null when it can. */
export function labelProblem(label: string): string | null {
  if (label.length === 0 || label.length > MAX_LABEL_LENGTH) return `a label must be 1-${MAX_LABEL_LENGTH} characters`;
  if (UNPRINTABLE.test(label)) return 'a label must not contain control characters (newlines, tabs, terminal escapes) or invisible formatting characters';
  return null;
}

/** A stored label fit for a terminal, whatever an older version let in. */
export function printableLabel(label: string): string {
  return label.replace(new RegExp(UNPRINTABLE.source, 'gu'), (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

export async function createToken(db: Db, userId: string, label: string | null = null, kind: TokenKind = 'cli') {
  if (!USER_PATTERN.test(userId)) throw new Error('user must be 1-64 characters of A-Z a-z 0-9 _ . @ -');
  const problem = label === null ? null : labelProblem(label);
  if (problem) throw new Error(problem);
  const token = generateToken();
  const now = nowSeconds();
  const row = { id: newId(), user_id: userId, token_hash: hashToken(token), label, created_at: now, wiped_at: null, kind, last_seen_at: kind === 'device' ? now : null };
  await db.insertInto('tokens').values(row).execute();
  return { token, id: row.id };
}

/**
 * A device's own token (pairing; later single sign-on): stored as a hash like the CLI's, labelled
 * with the device ("Chrome on Android"), listed in GET /v1/me/devices, and expired after
 * TOKEN_TTL_DAYS unused.
 */
export function createDeviceToken(db: Db, userId: string, label: string): Promise<{ token: string; id: string }> {
  return createToken(db, userId, labelProblem(label) === null ? label : printableLabel(label).slice(0, MAX_LABEL_LENGTH) || 'a device', 'device');
}

export async function listTokens(db: Db): Promise<Array<StoredToken & { wiped_at: number | null; kind: TokenKind; last_seen_at: number | null }>> {
  return db.selectFrom('tokens').select(['id', 'user_id', 'label', 'created_at', 'wiped_at', 'kind', 'last_seen_at']).orderBy('created_at').execute();
}

/**
 * Revokes by token id (as listed) or by the token itself. With `wipe` the token's record is kept,
 * marked wiped: its device is told `device_wiped` and erases what it holds (see Authenticator).
 */
export async function revokeToken(db: Db, idOrToken: string, options: { wipe?: boolean } = {}): Promise<number> {
  const hash = hashToken(idOrToken);
  if (options.wipe) {
    const result = await db
      .updateTable('tokens')
      .set({ wiped_at: nowSeconds() })
      .where((eb) => eb.or([eb('id', '=', idOrToken), eb('token_hash', '=', hash)]))
      .where('wiped_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
  const result = await db
    .deleteFrom('tokens')
    .where((eb) => eb.or([eb('id', '=', idOrToken), eb('token_hash', '=', hash)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Proxy mode: the tokens are the upstream's, so the proxy keeps only those it was told to wipe
 * (by hash, in its own DATA_DIR database) and answers device_wiped for them itself.
 */
export async function recordWipedToken(db: Db, token: string): Promise<void> {
  const hash = hashToken(token);
  const now = nowSeconds();
  const known = await db.selectFrom('tokens').select('id').where('token_hash', '=', hash).executeTakeFirst();
  if (known) await db.updateTable('tokens').set({ wiped_at: now }).where('id', '=', known.id).execute();
  else await db.insertInto('tokens').values({ id: newId(), user_id: '-', token_hash: hash, label: 'wiped through the proxy', created_at: now, wiped_at: now }).execute();
}

/** The hashes of wiped tokens (proxy mode reads them every few seconds). */
export async function wipedTokenHashes(db: Db): Promise<Set<string>> {
  const rows = await db.selectFrom('tokens').select('token_hash').where('wiped_at', 'is not', null).execute();
  return new Set(rows.map((r) => r.token_hash));
}

const CACHE_TTL_MS = 10_000;
const CACHE_MAX = 10_000;

/** The token of an `Authorization: Bearer <token>` header (401 when there is none, or a malformed one). */
export function bearerToken(header: string | null): string {
  if (!header) throw unauthenticated();
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== 'bearer') {
    throw unauthenticated('The Authorization header must be "Bearer <token>"');
  }
  const token = header.slice(space + 1).trim();
  if (!token || token.length > 512) throw unauthenticated('Unknown token');
  return token;
}

/** TOKEN_TTL_DAYS by default: a device token unused this long is no longer accepted. */
export const DEFAULT_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** last_seen_at is written at most this often per token (when the cache refreshes and it is older). */
export const LAST_SEEN_EVERY_SECONDS = 300;

/** Whether a stored token has expired: device tokens unused (last seen) for longer than the TTL. */
export function tokenExpired(row: { kind: TokenKind; last_seen_at: number | null; created_at: number }, now: number, ttlSeconds: number): boolean {
  return row.kind === 'device' && (row.last_seen_at ?? row.created_at) < now - ttlSeconds;
}

/** Who a request's token is: the user, and the stored token's id (null for a static token). */
export interface Identity {
  user: string;
  tokenId: string | null;
}

interface TokenLookup {
  id: string;
  user_id: string;
  wiped_at: number | null;
  kind: TokenKind;
  last_seen_at: number | null;
  created_at: number;
}

/**
 * Resolves `Authorization: Bearer <token>` to a user id. Stored tokens are cached for a few
 * seconds, so the hot path does no hashing or query; a revoked token stops working within that.
 * Long-lived requests (live streams) ask again with `recheck`, which bypasses the cache.
 * When the cache refreshes a token, its last_seen_at is written if older than 5 minutes: at most
 * one write per token per 5 minutes, none on the hot path. Device tokens whose last use is older
 * than TOKEN_TTL_DAYS are refused (401 unauthenticated).
 */
export class Authenticator {
  private readonly cache = new Map<string, { userId: string; tokenId: string; expires: number }>();
  private readonly byHash;
  private readonly ttlSeconds: number;

  constructor(
    private readonly db: Db,
    private readonly staticTokens: Map<string, string>,
    options: { ttlSeconds?: number } = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
    this.byHash = prepare<{ hash: string }, TokenLookup>(db, (slot) =>
      db.selectFrom('tokens').select(['id', 'user_id', 'wiped_at', 'kind', 'last_seen_at', 'created_at']).where('token_hash', '=', slot('hash')),
    );
  }

  async authenticate(header: string | null): Promise<string> {
    return (await this.identify(header)).user;
  }

  async identify(header: string | null): Promise<Identity> {
    const token = bearerToken(header);
    const fixed = this.staticTokens.get(token);
    if (fixed) return { user: fixed, tokenId: null };
    const now = Date.now();
    const cached = this.cache.get(token);
    if (cached && cached.expires > now) return { user: cached.userId, tokenId: cached.tokenId };
    const [row] = await this.byHash(this.db, { hash: hashToken(token) });
    if (!row) {
      this.cache.delete(token);
      throw refusal(unauthenticated('Unknown token'), { reason: 'unknown_token' });
    }
    if (row.wiped_at !== null) {
      this.cache.delete(token);
      throw refusal(deviceWiped(), { reason: 'device_wiped', tokenId: row.id, user: row.user_id });
    }
    const seconds = Math.floor(now / 1000);
    if (tokenExpired(row, seconds, this.ttlSeconds)) {
      this.cache.delete(token);
      throw refusal(unauthenticated('This device token expired: it was not used for too long (TOKEN_TTL_DAYS). Sign in again'), {
        reason: 'token_expired',
        tokenId: row.id,
        user: row.user_id,
      });
    }
    if ((row.last_seen_at ?? 0) < seconds - LAST_SEEN_EVERY_SECONDS) {
      // Best effort: a database that refuses writes right now must not refuse the request.
      await this.db.updateTable('tokens').set({ last_seen_at: seconds }).where('id', '=', row.id).execute().catch(() => {});
    }
    this.remember(token, row.user_id, row.id, now);
    return { user: row.user_id, tokenId: row.id };
  }

  /** Drops a stored token from this process's cache (revoked here: no need to wait for it to lapse). */
  forget(tokenId: string): void {
    for (const [token, entry] of this.cache) if (entry.tokenId === tokenId) this.cache.delete(token);
  }

  /**
   * Who each token belongs to now (null: no longer accepted), read from the database whatever the
   * cache says: one query for all of them (per 500). The cache learns the answers.
   */
  async recheck(tokens: Iterable<string>): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>();
    const stored = new Map<string, string>(); // hash → token
    for (const token of tokens) {
      const fixed = this.staticTokens.get(token);
      if (fixed) out.set(token, fixed);
      else stored.set(hashToken(token), token);
    }
    const hashes = [...stored.keys()];
    const now = Date.now();
    const ids = new Map<string, string>();
    for (let i = 0; i < hashes.length; i += 500) {
      const batch = hashes.slice(i, i + 500);
      const rows = await this.db
        .selectFrom('tokens')
        .select(['token_hash', 'user_id', 'id', 'kind', 'last_seen_at', 'created_at'])
        .where('token_hash', 'in', batch)
        .where('wiped_at', 'is', null)
        .execute();
      for (const row of rows) {
        if (tokenExpired(row, Math.floor(now / 1000), this.ttlSeconds)) continue;
        out.set(stored.get(row.token_hash)!, row.user_id);
        ids.set(row.token_hash, row.id);
      }
    }
    for (const [hash, token] of stored) {
      const user = out.get(token);
      if (user === undefined) {
        out.set(token, null);
        this.cache.delete(token);
      } else if (user !== null) this.remember(token, user, ids.get(hash)!, now);
    }
    return out;
  }

  private remember(token: string, userId: string, tokenId: string, now: number): void {
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(token, { userId, tokenId, expires: now + CACHE_TTL_MS });
  }
}
