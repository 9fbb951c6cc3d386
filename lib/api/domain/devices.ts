// The caller's devices (an extension, GET/DELETE /v1/me/devices): the stored tokens of the
// token's user — device tokens (pairing, sign-in) and CLI ones — not wiped and not expired.
// Another user's device is answered like a missing one (404).
import type { AuditNote } from './audit';
import { inTransaction } from '../storage/transaction';
import { sql } from 'kysely';
import type { Device, PageOf } from '../../schemas';
import { notFound } from '../errors';
import type { Db } from '../storage/db';
import { nowSeconds } from './ids';
import { tokenExpired } from './tokens';

/** How many devices a listing shows at most (a user has a handful; has_more says if there are more). */
const LIST_MAX = 100;

export async function listDevices(db: Db, user: string, currentTokenId: string | null, ttlSeconds: number): Promise<PageOf<Device>> {
  const now = nowSeconds();
  const rows = await db
    .selectFrom('tokens')
    .select(['id', 'label', 'created_at', 'last_seen_at', 'kind'])
    .where('user_id', '=', user)
    .where('wiped_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  const live = rows.filter((row) => !tokenExpired(row, now, ttlSeconds));
  return {
    has_more: live.length > LIST_MAX,
    data: live.slice(0, LIST_MAX).map((row) => ({
      id: row.id,
      label: row.label,
      created_at: Number(row.created_at),
      last_seen_at: row.last_seen_at === null ? null : Number(row.last_seen_at),
      current: row.id === currentTokenId,
    })),
  };
}

/**
 * Signs a device out: its token is deleted, or with `wipe` kept and marked wiped (every request
 * with it is then answered 401 device_wiped, and the app there erases what it holds). 404 when it
 * is not one of the user's (listed) devices.
 */
export async function removeDevice(
  db: Db,
  user: string,
  id: string,
  options: { wipe: boolean; ttlSeconds: number; audit?: AuditNote },
): Promise<void> {
  const now = nowSeconds();
  const row = await db
    .selectFrom('tokens')
    .select(['id', 'kind', 'last_seen_at', 'created_at'])
    .where('id', '=', id)
    .where('user_id', '=', user)
    .where('wiped_at', 'is', null)
    .executeTakeFirst();
  if (!row || tokenExpired(row, now, options.ttlSeconds)) throw notFound('device', 'id');
  // The audit row (revoke or wipe) commits with the change.
  await inTransaction(db, async (trx) => {
    const changed = options.wipe
      ? await trx.updateTable('tokens').set({ wiped_at: now }).where('id', '=', id).where('wiped_at', 'is', null).executeTakeFirst().then((r) => Number(r.numUpdatedRows))
      : await trx.deleteFrom('tokens').where('id', '=', id).where('wiped_at', 'is', null).executeTakeFirst().then((r) => Number(r.numDeletedRows));
    if (changed === 0) throw notFound('device', 'id');
    await options.audit?.record(trx, { status: 204 });
  });
  if (options.audit) options.audit.recorded = true;
}

/**
 * Housekeeping (hourly): device tokens unused for longer than the TTL, and wiped device tokens
 * whose wipe is older than it (they answered device_wiped for TOKEN_TTL_DAYS: their device has
 * been erased or is gone). CLI tokens stay as they are.
 */
export async function purgeExpiredDeviceTokens(db: Db, ttlSeconds: number, now = nowSeconds()): Promise<number> {
  const cutoff = now - ttlSeconds;
  const result = await db
    .deleteFrom('tokens')
    .where('kind', '=', 'device')
    .where((eb) =>
      eb.or([
        eb.and([eb('wiped_at', 'is', null), eb(sql<number>`coalesce(last_seen_at, created_at)`, '<', cutoff)]),
        eb.and([eb('wiped_at', 'is not', null), eb('wiped_at', '<', cutoff)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
