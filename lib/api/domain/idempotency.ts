// Idempotency-Key: the first response for (user, key) is stored and replayed for a repeat.
//
// The key is claimed in the SAME transaction as the effect: insert the key's row, run the handler,
// record its response in that row, commit. So the effect and its record commit together or not
// at all, and no "in progress" marker ever outlives its request:
// - PostgreSQL: a repeat's insert waits on the unique index until the first transaction ends
//   (bounded by lock_timeout → 409 idempotency_in_progress with Retry-After), then finds the
//   recorded response and replays it. A crashed process's transaction is rolled back by the
//   database, which frees its key at once.
// - SQLite: one writer, transactions one after another; a repeat only ever sees a finished row.
// A committed row without a response can only be a marker written by the previous version (which
// claimed keys in a transaction of their own): it is taken over, as is an expired row.
import { z } from 'zod';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, DialectName, IdempotencyRow } from '../storage/db';
import { isLockTimeout } from '../storage/failures';
import { commit, inTransaction, rollbackQuietly, type Transaction } from '../storage/transaction';
import { ApiError, idempotencyInProgress, invalid } from '../errors';
import { nowSeconds } from './ids';
import { errorResult, type ApiResult } from '../result';
import type { AuditNote } from './audit';

export const RETENTION_SECONDS = 24 * 60 * 60;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** The Idempotency-Key header (routes document it with this schema). */
export const IdempotencyKey = z.string().regex(KEY_PATTERN, 'must be 1-255 visible ASCII characters').meta({
  description:
    'Extension (advertised by the Idempotency response header): the first response below 500 for (user, key) is stored for 24 h and replayed for a repeat, with Idempotent-Replayed: true; the same key on another request: 409 idempotency_conflict.',
});
/** A recorded answer's headers (as `record` writes them). */
const StoredHeaders = z.record(z.string(), z.string());
/** A finished row that vanishes between the claim and the read (purged as expired) means: claim again. */
const MAX_ATTEMPTS = 3;

export interface RequestIdentity {
  method: string;
  path: string;
  /** The request's content: fields (and, for uploads, the file's name, type and hash). */
  content: Record<string, unknown>;
}

/**
 * JSON.stringify without recursion, for values too deeply nested for it (a body of 5,000 nested
 * objects overflows the stack). Same output as JSON.stringify for JSON data.
 */
export function stringifyIteratively(root: unknown): string {
  type Item = { text: string } | { value: unknown; inArray: boolean };
  const out: string[] = [];
  const stack: Item[] = [{ value: root, inArray: true }];
  const skipped = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    let value = item.value;
    if (value !== null && typeof value === 'object' && 'toJSON' in value && typeof value.toJSON === 'function') {
      value = value.toJSON();
    }
    if (skipped(value)) {
      if (item.inArray) out.push('null');
      continue;
    }
    if (value === null || typeof value !== 'object') {
      out.push(JSON.stringify(value));
      continue;
    }
    // Children go on the stack in reverse, so that they come off in order.
    const parts: Item[] = [];
    if (Array.isArray(value)) {
      parts.push({ text: '[' });
      value.forEach((element, i) => {
        if (i > 0) parts.push({ text: ',' });
        parts.push({ value: element, inArray: true });
      });
      parts.push({ text: ']' });
    } else {
      parts.push({ text: '{' });
      let first = true;
      for (const [name, element] of Object.entries(value)) {
        if (skipped(element)) continue;
        parts.push({ text: `${first ? '' : ','}${JSON.stringify(name)}:` });
        parts.push({ value: element, inArray: false });
        first = false;
      }
      parts.push({ text: '}' });
    }
    for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]);
  }
  return out.join('');
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return stringifyIteratively(value);
    throw error;
  }
}

/** Compared by content, never raw bytes: a browser picks a new multipart boundary on every retry. */
export function fingerprint(identity: RequestIdentity): string {
  const fields = Object.keys(identity.content)
    .sort()
    .map((name) => {
      const value = identity.content[name];
      return [name, typeof value === 'object' && value !== null ? stringify(value) : String(value)];
    });
  return createHash('sha256').update(JSON.stringify([identity.method, identity.path, fields])).digest('hex');
}

export interface IdempotencyOptions {
  dialect: DialectName;
  /** How long a repeat waits for a first request with its key to finish (PostgreSQL's lock_timeout). */
  waitMs: number;
}

export class IdempotencyStore {
  private readonly options: IdempotencyOptions;

  constructor(
    private readonly db: Db,
    readonly enabled: boolean,
    options: Partial<IdempotencyOptions> = {},
  ) {
    this.options = { dialect: 'sqlite', waitMs: 5000, ...options };
  }

  /**
   * Runs `handler` in a transaction. With a key, its result is recorded in that same transaction,
   * so the effect and the record commit together or not at all. A 5xx (or any other failure) is
   * not recorded: the transaction rolls back, the key stays free, and a retry runs again.
   */
  async run(
    userId: string,
    key: string | null,
    identity: () => RequestIdentity,
    handler: (trx: Db) => Promise<ApiResult>,
    options: { singleWrite?: boolean; audit?: AuditNote } = {},
  ): Promise<ApiResult> {
    const audit = options.audit;
    if (!this.enabled || key === null) {
      // A handler whose only write is one statement is atomic by itself: no BEGIN/COMMIT needed
      // (unless the audit trail's row goes with it).
      if (!audit) return options.singleWrite ? handler(this.db) : inTransaction(this.db, handler);
      const result = await inTransaction(this.db, async (trx) => {
        const done = await handler(trx);
        await audit.record(trx, done);
        return done;
      });
      audit.recorded = true;
      return result;
    }
    if (!IdempotencyKey.safeParse(key).success) throw invalid('Idempotency-Key', 'Idempotency-Key must be 1-255 visible ASCII characters');
    const print = fingerprint(identity());
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const result = await this.attempt(userId, key, print, handler, audit);
      if (result) return result;
    }
    throw this.inProgress();
  }

  private inProgress(): ApiError {
    return idempotencyInProgress(Math.max(1, Math.ceil(this.options.waitMs / 1000)));
  }

  /** One transaction: claim, then run and record — or find the recorded response. null: claim again. */
  private async attempt(userId: string, key: string, print: string, handler: (trx: Db) => Promise<ApiResult>, audit?: AuditNote): Promise<ApiResult | null> {
    const trx = await this.db.startTransaction().execute();
    let result: ApiResult;
    let refusal: ApiError | null = null;
    try {
      if (!(await this.claim(trx, userId, key, print))) {
        const existing = await trx
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('user_id', '=', userId)
          .where('key', '=', key)
          .executeTakeFirst();
        await rollbackQuietly(trx);
        return existing ? this.replay(existing, print) : null;
      }
      const effect = await trx.savepoint('effect').execute();
      try {
        result = await handler(effect);
      } catch (error) {
        // Not a 429 (too_many_uploads): "nothing was done, try again later", like a 5xx — stored,
        // the retry after Retry-After would only get the 429 again.
        if (!(error instanceof ApiError) || error.status >= 500 || error.status === 429) throw error;
        // A refusal is as much "the first response" as a success: undo what the handler wrote,
        // keep the claim, record the refusal.
        await effect.rollbackToSavepoint('effect').execute();
        refusal = error;
        result = errorResult(error);
      }
      await this.record(trx, userId, key, result);
      // The audit trail's row (a refusal's too) commits with the effect and its key.
      await audit?.record(trx, result);
    } catch (error) {
      await rollbackQuietly(trx);
      throw error;
    }
    await commit(trx);
    if (audit) audit.recorded = true;
    if (refusal) throw refusal;
    return result;
  }

  /**
   * Inserts this request's row for the key, or takes over a row left unfinished by the previous
   * version or expired. False: a finished row for the key exists (committed by someone else).
   */
  private async claim(trx: Transaction, userId: string, key: string, print: string): Promise<boolean> {
    const postgres = this.options.dialect === 'postgres';
    const now = nowSeconds();
    const fresh = { fingerprint: print, status: null, response_headers: null, response_body: null, created_at: now };
    try {
      // Bounds the wait on the unique index for a first request that is still running.
      if (postgres) await sql`select set_config('lock_timeout', ${`${this.options.waitMs}ms`}, true)`.execute(trx);
      const claimed = await trx
        .insertInto('idempotency_keys')
        .values({ user_id: userId, key, ...fresh })
        .onConflict((oc) =>
          oc
            .columns(['user_id', 'key'])
            .doUpdateSet(fresh)
            .where((eb) =>
              eb.or([eb('idempotency_keys.status', 'is', null), eb('idempotency_keys.created_at', '<', now - RETENTION_SECONDS)]),
            ),
        )
        .returning('key')
        .executeTakeFirst();
      // The handler's own statements wait for locks as long as the database's default says.
      if (postgres) await sql`set local lock_timeout to default`.execute(trx);
      return claimed !== undefined;
    } catch (error) {
      if (isLockTimeout(error)) throw this.inProgress();
      throw error;
    }
  }

  private replay(existing: IdempotencyRow, print: string): ApiResult {
    if (existing.fingerprint !== print) {
      throw new ApiError(
        'idempotency_conflict',
        'This Idempotency-Key was already used for a different request (method, path or content)',
        'Idempotency-Key',
      );
    }
    if (existing.status === null) throw this.inProgress(); // not reached: an unfinished row is taken over
    const headers = { ...StoredHeaders.parse(JSON.parse(existing.response_headers ?? '{}')), 'Idempotent-Replayed': 'true' };
    const body = existing.response_body === null ? undefined : JSON.parse(existing.response_body);
    return { status: existing.status, body, headers };
  }

  private async record(db: Db, userId: string, key: string, result: ApiResult) {
    await db
      .updateTable('idempotency_keys')
      .set({
        status: result.status,
        response_headers: JSON.stringify(result.headers ?? {}),
        response_body: result.body === undefined ? null : JSON.stringify(result.body),
      })
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .execute();
  }

  async purgeExpired(): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('created_at', '<', nowSeconds() - RETENTION_SECONDS).execute();
  }
}
