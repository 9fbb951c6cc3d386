// Idempotency-Key: the first response for (user, key) is stored in the same transaction as the
// effect, and replayed for a repeat. A repeat that arrives while the first runs waits for it.
import { createHash } from 'node:crypto';
import type { Db } from './db';
import { ApiError, invalid } from './errors';
import { nowSeconds } from './ids';
import { errorResult, type ApiResult } from './result';

export const RETENTION_SECONDS = 24 * 60 * 60;
/** A marker this old without a response belongs to a process that died: its effect never committed. */
const ABANDONED_SECONDS = 60;
const WAIT_MS = 10_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface RequestIdentity {
  method: string;
  path: string;
  /** The request's content: fields (and, for uploads, the file's name, type and hash). */
  content: Record<string, unknown>;
}

/** Compared by content, never raw bytes: a browser picks a new multipart boundary on every retry. */
export function fingerprint(identity: RequestIdentity): string {
  const fields = Object.keys(identity.content)
    .sort()
    .map((name) => {
      const value = identity.content[name];
      return [name, typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)];
    });
  return createHash('sha256').update(JSON.stringify([identity.method, identity.path, fields])).digest('hex');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    readonly enabled: boolean,
  ) {}

  /**
   * Runs `handler` in a transaction. With a key, its result is recorded in that same transaction,
   * so the effect and the record commit together or not at all.
   */
  async run(
    userId: string,
    key: string | null,
    identity: () => RequestIdentity,
    handler: (trx: Db) => Promise<ApiResult>,
    options: { singleWrite?: boolean } = {},
  ): Promise<ApiResult> {
    if (!this.enabled || key === null) {
      // A handler whose only write is one statement is atomic by itself: no BEGIN/COMMIT needed.
      return options.singleWrite ? handler(this.db) : this.db.transaction().execute(handler);
    }
    if (!KEY_PATTERN.test(key)) throw invalid('Idempotency-Key', 'Idempotency-Key must be 1-255 visible ASCII characters');
    const print = fingerprint(identity());

    const replay = await this.claim(userId, key, print);
    if (replay) return replay;

    try {
      return await this.db.transaction().execute(async (trx) => {
        const result = await handler(trx);
        await this.record(trx, userId, key, result);
        return result;
      });
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        // A refusal is as much "the first response" as a success; the effect was rolled back.
        await this.record(this.db, userId, key, errorResult(error));
      } else {
        // A 5xx is not an answer to keep: release the key so a retry runs again.
        await this.db.deleteFrom('idempotency_keys').where('user_id', '=', userId).where('key', '=', key).execute();
      }
      throw error;
    }
  }

  /** Takes the key for this request, or returns the stored response to replay. */
  private async claim(userId: string, key: string, print: string): Promise<ApiResult | null> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const now = nowSeconds();
      const existing = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('user_id', '=', userId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!existing || existing.created_at < now - RETENTION_SECONDS) {
        if (existing) await this.db.deleteFrom('idempotency_keys').where('user_id', '=', userId).where('key', '=', key).execute();
        try {
          await this.db
            .insertInto('idempotency_keys')
            .values({ user_id: userId, key, fingerprint: print, status: null, response_headers: null, response_body: null, created_at: now })
            .execute();
          return null;
        } catch {
          continue; // another request took it between our read and insert: look again
        }
      }
      if (existing.fingerprint !== print) {
        throw new ApiError(
          'idempotency_conflict',
          'This Idempotency-Key was already used for a different request (method, path or content)',
          'Idempotency-Key',
        );
      }
      if (existing.status !== null) {
        const headers = { ...(JSON.parse(existing.response_headers ?? '{}') as Record<string, string>), 'Idempotent-Replayed': 'true' };
        const body = existing.response_body === null ? undefined : JSON.parse(existing.response_body);
        return { status: existing.status, body, headers };
      }
      if (existing.created_at < now - ABANDONED_SECONDS) {
        const taken = await this.db
          .updateTable('idempotency_keys')
          .set({ created_at: now })
          .where('user_id', '=', userId)
          .where('key', '=', key)
          .where('created_at', '=', existing.created_at)
          .where('status', 'is', null)
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) === 1) return null;
        continue;
      }
      if (Date.now() > deadline) {
        throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress; retry later', 'Idempotency-Key');
      }
      await sleep(25);
    }
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
