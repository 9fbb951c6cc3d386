// One database transaction around `work`, which never hides why it failed.
//
// Kysely's `transaction().execute()` rolls back on any error and lets the rollback's own error
// replace the first one. SQLite rolls a transaction back by itself on SQLITE_FULL, SQLITE_IOERR or
// SQLITE_BUSY, so that rollback fails with "cannot rollback - no transaction is active" and the
// real cause (a full disk) is lost. Here a failed rollback is ignored: the transaction is over
// either way, and the connection is released (Kysely's controlled rollback does that in `finally`).
import type { ControlledTransaction } from 'kysely';
import type { Db, Tables } from './db';

export type Transaction = ControlledTransaction<Tables>;

/** Rolls back, whatever state the transaction is in; never throws. */
export async function rollbackQuietly(trx: Transaction): Promise<void> {
  if (trx.isCommitted || trx.isRolledBack) return;
  await trx.rollback().execute().catch(() => {});
}

const outcomeUnknown = new WeakSet<object>();

/**
 * The commit's answer was lost with the connection (or the session died while committing: a FATAL):
 * the transaction may or may not have committed. (A database that answers with an ERROR, or
 * SQLite, did not commit.) Whatever must stay if the rows committed is then left alone, for a
 * sweep to decide later.
 */
export function isCommitOutcomeUnknown(error: unknown): boolean {
  return typeof error === 'object' && error !== null && outcomeUnknown.has(error);
}

/** Commits; on failure rolls back quietly (releasing the connection) and throws the commit's error. */
export async function commit(trx: Transaction): Promise<void> {
  try {
    await trx.commit().execute();
  } catch (error) {
    const { code, severity }: { code?: unknown; severity?: unknown } = error ?? {};
    const answered = typeof code === 'string' && (code.startsWith('SQLITE_') || (/^[0-9A-Z]{5}$/.test(code) && severity === 'ERROR'));
    if (!answered && typeof error === 'object' && error !== null) outcomeUnknown.add(error);
    await rollbackQuietly(trx);
    throw error;
  }
}

export async function inTransaction<T>(db: Db, work: (trx: Transaction) => Promise<T>): Promise<T> {
  const trx = await db.startTransaction().execute();
  let result: T;
  try {
    result = await work(trx);
  } catch (error) {
    await rollbackQuietly(trx);
    throw error;
  }
  await commit(trx);
  return result;
}
