// Bearer tokens: static ones from PARLEY_TOKENS, and stored ones kept only as SHA-256 hashes
// (tokens are 256-bit random strings, so a fast hash is enough: there is nothing to brute-force).
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../storage/db';
import { newId, nowSeconds } from './ids';
import { prepare } from '../storage/prepared';
import { unauthenticated } from '../errors';

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
export const generateToken = () => `pk_${randomBytes(32).toString('base64url')}`;

export interface StoredToken {
  id: string;
  user_id: string;
  label: string | null;
  created_at: number;
}

export const USER_PATTERN = /^[A-Za-z0-9_.@-]{1,64}$/;

export async function createToken(db: Db, userId: string, label: string | null = null) {
  if (!USER_PATTERN.test(userId)) throw new Error('user must be 1-64 characters of A-Z a-z 0-9 _ . @ -');
  const token = generateToken();
  const row = { id: newId(), user_id: userId, token_hash: hashToken(token), label, created_at: nowSeconds() };
  await db.insertInto('tokens').values(row).execute();
  return { token, id: row.id };
}

export async function listTokens(db: Db): Promise<StoredToken[]> {
  return db.selectFrom('tokens').select(['id', 'user_id', 'label', 'created_at']).orderBy('created_at').execute();
}

/** Revokes by token id (as listed) or by the token itself. */
export async function revokeToken(db: Db, idOrToken: string): Promise<number> {
  const result = await db
    .deleteFrom('tokens')
    .where((eb) => eb.or([eb('id', '=', idOrToken), eb('token_hash', '=', hashToken(idOrToken))]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

const CACHE_TTL_MS = 10_000;
const CACHE_MAX = 10_000;

/**
 * Resolves `Authorization: Bearer <token>` to a user id. Stored tokens are cached for a few
 * seconds, so the hot path does no hashing or query; a revoked token stops working within that.
 */
export class Authenticator {
  private readonly cache = new Map<string, { userId: string; expires: number }>();
  private readonly byHash;

  constructor(
    private readonly db: Db,
    private readonly staticTokens: Map<string, string>,
  ) {
    this.byHash = prepare<{ hash: string }, { user_id: string }>(db, (slot) =>
      db.selectFrom('tokens').select('user_id').where('token_hash', '=', slot('hash')),
    );
  }

  async authenticate(header: string | null): Promise<string> {
    if (!header) throw unauthenticated();
    const space = header.indexOf(' ');
    if (space < 0 || header.slice(0, space).toLowerCase() !== 'bearer') {
      throw unauthenticated('The Authorization header must be "Bearer <token>"');
    }
    const token = header.slice(space + 1).trim();
    if (!token || token.length > 512) throw unauthenticated('Unknown token');
    const fixed = this.staticTokens.get(token);
    if (fixed) return fixed;
    const now = Date.now();
    const cached = this.cache.get(token);
    if (cached && cached.expires > now) return cached.userId;
    const [row] = await this.byHash(this.db, { hash: hashToken(token) });
    if (!row) {
      this.cache.delete(token);
      throw unauthenticated('Unknown token');
    }
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(token, { userId: row.user_id, expires: now + CACHE_TTL_MS });
    return row.user_id;
  }
}
