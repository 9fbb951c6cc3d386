// What the storage code says about the database engine under it, apart from db.ts so that the
// modules db.ts opens with (migrations.ts, prepared.ts) need not import db.ts back.

/** Which SQL engine: SQLite (a file, zero setup) or PostgreSQL (DATABASE_URL). */
export type DialectName = 'sqlite' | 'postgres';

/** Synchronous reads of committed data, outside any transaction (see registerFastReader). */
export interface FastReader {
  all(sql: string, parameters: readonly unknown[]): unknown[];
  close(): void;
}
