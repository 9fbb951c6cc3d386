// Storage behind Kysely: SQLite (better-sqlite3) by default, PostgreSQL by dialect switch.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  type Generated,
  type Dialect,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import type { ChangeEventType } from '../../objects';
import { migrations } from './migrations';
import { registerFastReader } from './prepared';
import { WriteGate } from './write-gate';
import type { DialectName, FastReader } from './engine';
export type { DialectName, FastReader } from './engine';

export interface ConversationRow {
  seq: Generated<number>;
  id: string;
  user_id: string;
  contact_id: string | null;
  group_id: string | null;
  pinned_message_id: string | null;
  is_pinned: number;
  is_muted: number;
  last_active_at: number | null;
  last_opened_at: number | null;
  created_at: number;
  archived_at: number | null;
}

export interface MessageRow {
  seq: Generated<number>;
  id: string;
  conversation_id: string;
  user_id: string;
  author: string;
  created_at: number;
}

export interface FileRow {
  seq: Generated<number>;
  id: string;
  user_id: string;
  conversation_id: string;
  message_id: string;
  filename: string;
  file_type: string;
  file_size: number;
  storage_key: string;
  sha256: string;
  created_at: number;
}

export interface TokenRow {
  id: string;
  user_id: string;
  token_hash: string;
  label: string | null;
  created_at: number;
  /** Set by a revocation with wipe: requests with it answer 401 device_wiped. */
  wiped_at: number | null;
  /** 'cli' (npm run token) or 'device' (pairing, sign-in): device tokens expire unused (TOKEN_TTL_DAYS). */
  kind: Generated<TokenKind>;
  /** When it was last used, to within a few minutes (the Authenticator writes it at most every 5 min). */
  last_seen_at: number | null;
}

export type TokenKind = 'cli' | 'device';

/** A one-use pairing code and what came of it (domain/pairings.ts). */
export interface PairingRow {
  id: string;
  user_id: string;
  code_hash: string;
  status: 'waiting' | 'redeemed' | 'approved' | 'denied' | 'collected';
  created_at: number;
  /** Until when the code can be redeemed; once redeemed, until when it can be approved and its token collected. */
  expires_at: number;
  /** The redeeming device's label (e.g. "Chrome on Android"). */
  label: string | null;
  /** The redeeming device's secret (hashed): what collects the token. */
  secret_hash: string | null;
  redeemed_at: number | null;
  decided_at: number | null;
  /** The device token made when it was collected. */
  token_id: string | null;
}

export interface IdempotencyRow {
  user_id: string;
  key: string;
  fingerprint: string;
  /** null while the first request is still running */
  status: number | null;
  response_headers: string | null;
  response_body: string | null;
  created_at: number;
}

/** One change to a conversation or file row, written by trigger (migration 0003_events). */
export interface EventRow {
  seq: Generated<number>;
  user_id: string;
  /** The triggers write these types only. */
  type: ChangeEventType;
  object_id: string;
  /** For file events: the conversation the file is (or was) in. */
  conversation_id: string | null;
  created_at: number;
}

/** A stored blob whose row is gone: removed after commit, retried with backoff (see blob-deletions.ts). */
export interface BlobDeletionRow {
  storage_key: string;
  queued_at: number;
  attempts: Generated<number>;
  /** Unix seconds; 0 = due now. */
  next_attempt_at: Generated<number>;
}

/** One action of the audit trail (migration 0020_audit; lib/api/domain/audit.ts). Append-only. */
export interface AuditTableRow {
  seq: Generated<number>;
  /** Unix milliseconds. */
  at: number;
  user_id: string;
  token_id: string | null;
  action: string;
  object_type: string | null;
  object_id: string | null;
  conversation_id: string | null;
  address: string | null;
  outcome: string;
}

/**
 * A single sign-on that has passed the identity provider's checks, waiting to be handed to the
 * browser that started it (lib/api/http/oidc.ts): one use, about a minute. The token is made only
 * when it is redeemed, so no token is ever stored here; the id and the browser's binding are hashed.
 */
export interface SignInRow {
  id_hash: string;
  user_id: string;
  label: string;
  /** The hash of the secret in the HttpOnly cookie of the browser that signed in. */
  binding_hash: string;
  expires_at: number;
  /** The device token made when it was redeemed (null: not yet). */
  token_id: string | null;
}

/**
 * A resumable upload (migration 0004_uploads; lib/api/storage/uploads.ts, lib/api/http/tus/). Its
 * state lives here, not in a process, so any instance on the database continues it.
 */
export interface UploadRow {
  id: string;
  user_id: string;
  conversation_id: string | null;
  message_id: string | null;
  filename: string;
  file_type: string | null;
  upload_length: number;
  upload_offset: number;
  /** The file it became, once finished. */
  file_id: string | null;
  /** The lease of the PATCH writing to it (one at a time), and when that lapses (ms since epoch). */
  writer: string | null;
  writer_until: number | null;
  created_at: number;
  expires_at: number;
}

/** The bytes one PATCH stored: one blob (its row deleted queues the blob for removal, by trigger). */
export interface UploadChunkRow {
  upload_id: string;
  upload_offset: number;
  size: number;
  storage_key: string;
}

export interface SettingRow {
  key: string;
  value: string;
}

export interface Tables {
  conversations: ConversationRow;
  messages: MessageRow;
  files: FileRow;
  tokens: TokenRow;
  pairings: PairingRow;
  sign_ins: SignInRow;
  idempotency_keys: IdempotencyRow;
  settings: SettingRow;
  blob_deletions: BlobDeletionRow;
  events: EventRow;
  audit: AuditTableRow;
  uploads: UploadRow;
  upload_chunks: UploadChunkRow;
}

export type Db = Kysely<Tables>;

export interface OpenedDb {
  db: Db;
  dialect: DialectName;
  close(): Promise<void>;
}

/**
 * better-sqlite3 compiles a statement on every prepare(); Kysely calls prepare() for every query.
 * Caching statements by SQL text makes every repeated query a prepared statement.
 */
function statementCache(sqlite: Database.Database, gate?: WriteGate): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= 500) cache.clear(); // bounded: queries with variable IN-lists vary
        const prepared = sqlite.prepare(gate && DEFERRED_BEGIN.test(sql) ? 'begin immediate' : sql);
        statement = gate && (!prepared.readonly || TRANSACTION_CONTROL.test(sql)) ? gated(prepared, gate, sqlite) : prepared;
        cache.set(sql, statement);
      }
      return statement;
    },
    close() {
      sqlite.close();
    },
  };
}

/**
 * SQLite counts these as read-only, yet they must go through the gate: a transaction holds it from
 * its BEGIN (a deferred transaction that read a snapshot and then found another connection's commit
 * newer would fail SQLITE_BUSY_SNAPSHOT at its first write, busy timeout or not) to its end.
 */
const TRANSACTION_CONTROL = /^\s*(begin|commit|end|rollback|savepoint|release)\b/i;

/**
 * Kysely begins a transaction with a plain (deferred) BEGIN. The write gate orders the writers of
 * this process, but not another process on the same file (`npm run token` beside a running
 * server): a deferred transaction that read, then found that process's commit newer, failed its
 * first write at once with SQLITE_BUSY_SNAPSHOT ("database is locked"), the busy timeout never
 * applied. BEGIN IMMEDIATE takes the write lock at the start, waiting the busy timeout for it.
 */
const DEFERRED_BEGIN = /^\s*begin\s*;?\s*$/i;

/** A statement that writes (BEGIN and COMMIT among them), run through the write gate (write-gate.ts). */
function gated(statement: Database.Statement, gate: WriteGate, sqlite: Database.Database): SqliteStatement {
  const inTransaction = () => sqlite.inTransaction;
  return {
    reader: statement.reader,
    run: (parameters) => gate.run(() => statement.run(parameters), inTransaction),
    all: (parameters) => gate.run(() => statement.all(parameters), inTransaction),
    iterate: (parameters) => statement.iterate(parameters),
  };
}

/** The SQLite database's file inside DATA_DIR. */
export const SQLITE_FILE = 'parley.sqlite';
const sqliteFile = (dataDir: string) => path.join(dataDir, SQLITE_FILE);

/**
 * A second, read-only connection for the hot read paths. In WAL mode it reads the last committed
 * state without waiting for the writer, and it skips Kysely's per-query driver round trip (a mutex
 * and several promise hops, about half the cost of a retrieve). It can never see a write that
 * another request's transaction has not committed yet.
 */
function openSqliteReader(dataDir: string): FastReader {
  const reader = new Database(sqliteFile(dataDir), { readonly: true });
  reader.pragma('busy_timeout = 5000');
  const statements = statementCache(reader);
  return {
    all: (sql, parameters) => statements.prepare(sql).all(parameters),
    close: () => reader.close(),
  };
}

/** The SQLite file and write gate under a Kysely instance (see sqliteFileOf). */
const sqliteFiles = new WeakMap<object, SqliteFile>();

export interface SqliteFile {
  path: string;
  /** Taken by the Kysely connection's writes; a second connection that writes must take it too. */
  gate: WriteGate;
  /**
   * Sets the Kysely connection's automatic checkpoint (`PRAGMA wal_autocheckpoint`, in WAL pages;
   * 0: none): off while the audit trail's writer thread checkpoints the WAL, SQLite's 1000 when it
   * is gone (audit-writer.ts). Nothing once the connection is closed.
   */
  autocheckpoint(pages: number): void;
}

/** The SQLite file under `db` and its write gate, or undefined on PostgreSQL (the audit trail's writer thread). */
export function sqliteFileOf(db: Db): SqliteFile | undefined {
  return sqliteFiles.get(db);
}

function openSqlite(dataDir: string): { dialect: Dialect; file: SqliteFile } {
  fs.mkdirSync(dataDir, { recursive: true });
  const raw = new Database(sqliteFile(dataDir));
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = ON');
  // WAL + NORMAL survives a process crash; a power cut may lose the last commits (see README).
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 5000');
  const gate = new WriteGate();
  const autocheckpoint = (pages: number) => {
    if (raw.open) raw.pragma(`wal_autocheckpoint = ${Math.max(0, Math.trunc(pages))}`);
  };
  return { dialect: new SqliteDialect({ database: statementCache(raw, gate) }), file: { path: sqliteFile(dataDir), gate, autocheckpoint } };
}

async function openPostgres(url: string, log: Pick<Console, 'error'>): Promise<Dialect> {
  const pg = await import('pg');
  const types = pg.default?.types ?? pg.types;
  types.setTypeParser(20, (v: string) => Number(v)); // int8 → number; our values fit in 2^53
  const Pool = pg.default?.Pool ?? pg.Pool;
  const pool = new Pool({
    connectionString: url,
    max: 10,
    // A database that does not hand out a connection in time is an answer (503), not a hang.
    connectionTimeoutMillis: 10_000,
    // A transaction whose process stopped without its connection closing (a machine that vanished)
    // would hold its locks — an Idempotency-Key among them — until TCP gives up; ours never idle
    // inside a transaction (upload bytes arrive before it begins), so the server may end it.
    idle_in_transaction_session_timeout: 60_000,
  });
  // An idle connection that breaks (the server restarted, the session was ended) is dropped by the
  // pool and reported here; without a listener that report would be an uncaught 'error' and end the process.
  pool.on('error', (error) => log.error('[parley] idle PostgreSQL connection lost:', error.message));
  // The same for a connection in use between two queries (inside a transaction): its holder's next
  // query fails ("not queryable", answered 503) and the pool drops it when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  return new PostgresDialect({ pool });
}

export async function openDb(options: { dataDir: string; databaseUrl?: string | null; log?: Pick<Console, 'error'> }): Promise<OpenedDb> {
  const dialectName: DialectName = options.databaseUrl ? 'postgres' : 'sqlite';
  const sqlite = dialectName === 'sqlite' ? openSqlite(options.dataDir) : null;
  const dialect = sqlite ? sqlite.dialect : await openPostgres(options.databaseUrl!, options.log ?? console);
  const db = new Kysely<Tables>({ dialect });
  if (sqlite) sqliteFiles.set(db, sqlite.file);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations(dialectName) },
  });
  const { error } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    throw error instanceof Error ? error : new Error(String(error));
  }
  if (dialectName === 'postgres') return { db, dialect: dialectName, close: () => db.destroy() };
  const reader = openSqliteReader(options.dataDir);
  registerFastReader(db, reader);
  return {
    db,
    dialect: dialectName,
    close: async () => {
      reader.close();
      await db.destroy();
    },
  };
}
