// What a storage error means, whoever raised it: the blob store (Node's fs: errno codes),
// better-sqlite3 (SQLITE_* codes) or node-postgres (SQLSTATE codes, or a connection that failed).
// Pure functions of the error; the service turns the answer into a response.
import { stringField } from '../../records';

/**
 * full: no room for the write (disk, quota, SQLite's page limit, PostgreSQL disk_full) → 507.
 * read_only: the database or the file system refuses writes → 503.
 * unavailable: the database cannot be reached or is out of other resources right now → 503.
 */
export type StorageFailure = 'full' | 'read_only' | 'unavailable';

const codeOf = (error: unknown) => stringField(error, 'code');

/** A PostgreSQL error sent by the server (five-character SQLSTATE), as node-postgres reports it. */
const sqlState = (error: unknown): string | undefined => {
  const code = codeOf(error);
  return code && /^[0-9A-Z]{5}$/.test(code) && stringField(error, 'severity') !== undefined ? code : undefined;
};

const NODE_FULL = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
const NODE_UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

export function storageFailure(error: unknown): StorageFailure | null {
  const state = sqlState(error);
  if (state) {
    if (state === '53100') return 'full'; // disk_full
    if (state === '25006') return 'read_only'; // read_only_sql_transaction
    // insufficient_resources (53xxx), operator intervention (57P0x: shutdown, cannot connect now),
    // connection exceptions (08xxx)
    if (state.startsWith('53') || /^57P0[1-4]$/.test(state) || state.startsWith('08')) return 'unavailable';
    return null;
  }
  const code = codeOf(error);
  if (code === undefined) {
    // node-postgres reports a lost or refused connection, and a pool with no free client in time, by message only.
    const message = error instanceof Error ? error.message : '';
    return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(message)
      ? 'unavailable'
      : null;
  }
  if (NODE_FULL.has(code) || code === 'SQLITE_FULL') return 'full';
  if (code === 'EROFS' || code.startsWith('SQLITE_READONLY')) return 'read_only';
  if (NODE_UNREACHABLE.has(code) || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'unavailable';
  return null;
}

/** A unique index refused the row (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY). */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** The row points at a parent that is not there (PostgreSQL 23503, SQLite SQLITE_CONSTRAINT_FOREIGNKEY). */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = codeOf(error);
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** PostgreSQL gave up waiting for a lock (lock_timeout: 55P03 lock_not_available). */
export function isLockTimeout(error: unknown): boolean {
  return sqlState(error) === '55P03';
}
