// Pairing a device (an extension of Parley's own server): a signed-in device asks for a one-use
// code valid 2 minutes (POST /v1/me/pairings); another device redeems it with no token
// (POST /v1/pairings/redeem) and gets a secret, never a token; the first device sees who asks
// (GET /v1/me/pairings/{id}) and approves or denies; the second collects its own device token with
// the secret (POST /v1/pairings/{id}/token), in a JSON body, once. Codes and secrets are stored as
// SHA-256 hashes: a code is 8 characters of 30 (~39 bits), guessed at most
// RATE_LIMIT_PAIRING_PER_MINUTE times a minute per address during its 2 minutes; a secret is 256
// random bits.
import { recordAudit } from './audit';
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { PAIRING_ALPHABET, PAIRING_CODE_LENGTH, type Pairing, type PairingCreated, type PairingRedeemed, type PairingToken } from '../../schemas';
import { ApiError, invalid, notFound } from '../errors';
import type { Db, PairingRow } from '../storage/db';
import { inTransaction } from '../storage/transaction';
import { newId, nowSeconds } from './ids';
import { createDeviceToken, labelProblem } from './tokens';

/** How long a code can be redeemed, and then how long the request waits for approval and collection. */
export const PAIRING_TTL_SECONDS = 120;
/** Waiting codes one user may hold at once (each is a guessable target while it lives). */
const MAX_WAITING_PER_USER = 5;

const hash = (value: string) => createHash('sha256').update(value).digest();
const hashHex = (kind: 'code' | 'secret', value: string) => hash(`parley-pairing-${kind}:${value}`).toString('hex');

/** Equal hex hashes, compared in constant time. */
function sameHash(a: string | null, b: string): boolean {
  if (a === null || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

export function generateCode(): string {
  let code = '';
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)];
  return code;
}

/**
 * A typed code as the server compares it: upper case, without spaces or dashes; the look-alikes
 * the alphabet leaves out read as what they look like (O → 0 is not in it either, so O/0 are
 * refused as they are). null when it cannot be a code.
 */
export function normaliseCode(input: string): string | null {
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== PAIRING_CODE_LENGTH) return null;
  for (const c of code) if (!PAIRING_ALPHABET.includes(c)) return null;
  return code;
}

const expired = () => new ApiError('pairing_expired', 'This pairing code has expired (codes are valid for 2 minutes): ask the other device for a new one');
const used = () => new ApiError('pairing_used', 'This pairing code was used already (a code works once): ask the other device for a new one');
const denied = () => new ApiError('pairing_denied', 'The other device did not allow this device to sign in');
const pending = () =>
  new ApiError('pairing_pending', 'The other device has not allowed this device yet; ask again shortly', undefined, {}, { 'Retry-After': '2' });

function status(row: PairingRow, now: number): Pairing['status'] {
  if ((row.status === 'waiting' || row.status === 'redeemed' || row.status === 'approved') && row.expires_at < now) return 'expired';
  return row.status;
}

function toPairing(row: PairingRow, now: number): Pairing {
  return {
    id: row.id,
    status: status(row, now),
    user: row.user_id,
    label: row.label,
    created_at: Number(row.created_at),
    expires_at: Number(row.expires_at),
  };
}

/**
 * A device's label from its User-Agent: "Chrome on Android", "Safari on iPhone", … A label the
 * client sends itself wins when it is printable.
 */
export function deviceLabel(userAgent: string | null, given?: string): string {
  if (given !== undefined && labelProblem(given) === null) return given;
  const ua = userAgent ?? '';
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone/.test(ua)
      ? 'iPhone'
      : /iPad/.test(ua)
        ? 'iPad'
        : /Windows/.test(ua)
          ? 'Windows'
          : /CrOS/.test(ua)
            ? 'ChromeOS'
            : /Mac OS X|Macintosh/.test(ua)
              ? 'Mac'
              : /Linux/.test(ua)
                ? 'Linux'
                : null;
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /SamsungBrowser\//.test(ua)
      ? 'Samsung Internet'
      : /Firefox\/|FxiOS\//.test(ua)
        ? 'Firefox'
        : /Chrome\/|CriOS\/|Chromium\//.test(ua)
          ? 'Chrome'
          : /Safari\//.test(ua)
            ? 'Safari'
            : null;
  if (browser && os) return `${browser} on ${os}`;
  return browser ?? (os ? `A browser on ${os}` : 'A device');
}

export class Pairings {
  constructor(private readonly db: Db) {}

  /** A new code for `user` (the signed-in device asking): valid PAIRING_TTL_SECONDS, one use. */
  async create(user: string): Promise<PairingCreated> {
    const now = nowSeconds();
    const waiting = await this.db
      .selectFrom('pairings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', user)
      .where('status', '=', 'waiting')
      .where('expires_at', '>=', now)
      .executeTakeFirstOrThrow();
    if (Number(waiting.n) >= MAX_WAITING_PER_USER) {
      throw new ApiError('rate_limited', `At most ${MAX_WAITING_PER_USER} pairing codes can wait at once; use one or let them expire`, undefined, {}, { 'Retry-After': String(PAIRING_TTL_SECONDS) });
    }
    for (let attempt = 0; ; attempt++) {
      const code = generateCode();
      const row = { id: newId(), user_id: user, code_hash: hashHex('code', code), status: 'waiting' as const, created_at: now, expires_at: now + PAIRING_TTL_SECONDS, label: null, secret_hash: null, redeemed_at: null, decided_at: null, token_id: null };
      try {
        // A code still in the table (even an old one) is never issued again: it would be ambiguous.
        await this.db.insertInto('pairings').values(row).execute();
        return { id: row.id, code, expires_at: row.expires_at };
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  }

  /** The user's pairing (another user's: 404). */
  async get(user: string, id: string): Promise<Pairing> {
    const row = await this.db.selectFrom('pairings').selectAll().where('id', '=', id).where('user_id', '=', user).executeTakeFirst();
    if (!row) throw notFound('pairing', 'id');
    return toPairing(row, nowSeconds());
  }

  /**
   * The other device redeems a code: it gets the pairing's id and a secret to collect its token
   * with once approved (never the token: the first device has not said yes yet).
   */
  async redeem(input: { code: string; label: string }): Promise<PairingRedeemed> {
    const code = normaliseCode(input.code);
    if (code === null) throw invalid('code', `code must be ${PAIRING_CODE_LENGTH} characters of ${PAIRING_ALPHABET}`);
    const codeHash = hashHex('code', code);
    const row = await this.db.selectFrom('pairings').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    if (!row || !sameHash(row.code_hash, codeHash)) throw notFound('pairing code', 'code');
    const now = nowSeconds();
    if (row.status !== 'waiting') throw used();
    if (row.expires_at < now) throw expired();
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = now + PAIRING_TTL_SECONDS;
    const result = await this.db
      .updateTable('pairings')
      .set({ status: 'redeemed', label: input.label, secret_hash: hashHex('secret', secret), redeemed_at: now, expires_at: expiresAt })
      .where('id', '=', row.id)
      .where('status', '=', 'waiting')
      .where('expires_at', '>=', now)
      .executeTakeFirst();
    // Another redemption of the same code won the race.
    if (Number(result.numUpdatedRows) === 0) throw used();
    return { pairing_id: row.id, secret, expires_at: expiresAt };
  }

  /** The first device says yes (approve) or no to the device that redeemed the code. */
  async decide(user: string, id: string, approve: boolean): Promise<Pairing> {
    const now = nowSeconds();
    const result = await this.db
      .updateTable('pairings')
      .set({ status: approve ? 'approved' : 'denied', decided_at: now, ...(approve ? { expires_at: now + PAIRING_TTL_SECONDS } : {}) })
      .where('id', '=', id)
      .where('user_id', '=', user)
      .where('status', '=', 'redeemed')
      .where('expires_at', '>=', now)
      .executeTakeFirst();
    const row = await this.db.selectFrom('pairings').selectAll().where('id', '=', id).where('user_id', '=', user).executeTakeFirst();
    if (!row) throw notFound('pairing', 'id');
    if (Number(result.numUpdatedRows) === 0) {
      if (status(row, now) === 'expired') throw expired();
      if (row.status === 'waiting') {
        throw new ApiError('pairing_pending', 'No device has redeemed this code yet: there is nothing to allow', undefined, {}, { 'Retry-After': '2' });
      }
      throw used();
    }
    return toPairing(row, now);
  }

  /**
   * The redeeming device collects its token with its secret: 409 pairing_pending until approved,
   * 403 pairing_denied, 410 once expired or collected. A wrong secret is a missing pairing (404).
   */
  async collect(id: string, secret: string): Promise<PairingToken> {
    const row = await this.db.selectFrom('pairings').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || !sameHash(row.secret_hash, hashHex('secret', secret))) throw notFound('pairing', 'id');
    const now = nowSeconds();
    if (row.status === 'denied') throw denied();
    if (row.status === 'collected') throw used();
    if (row.expires_at < now) throw expired();
    if (row.status !== 'approved') throw pending();
    return inTransaction(this.db, async (trx) => {
      const claimed = await trx
        .updateTable('pairings')
        .set({ status: 'collected' })
        .where('id', '=', id)
        .where('status', '=', 'approved')
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) throw used();
      const made = await createDeviceToken(trx, row.user_id, row.label ?? 'A device');
      await trx.updateTable('pairings').set({ token_id: made.id }).where('id', '=', id).execute();
      // The audit trail: a device let in by pairing, durable with its token.
      await recordAudit(trx, { user: row.user_id, token: made.id, action: 'pairing', objectType: 'token', objectId: made.id, outcome: 'ok' });
      return { token: made.token, user: row.user_id, device_id: made.id };
    });
  }

  /** Housekeeping (hourly): pairings past their time, kept an hour longer so a late poll reads "expired". */
  async purge(now = nowSeconds()): Promise<void> {
    await this.db.deleteFrom('pairings').where('expires_at', '<', now - 3600).execute();
  }
}
