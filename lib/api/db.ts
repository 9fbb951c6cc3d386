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
} from 'kysely';
import { migrations } from './migrations';
import { registerFastReader } from './prepared';

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

export interface SettingRow {
  key: string;
  value: string;
}

export interface Tables {
  conversations: ConversationRow;
  messages: MessageRow;
  files: FileRow;
  tokens: TokenRow;
  idempotency_keys: IdempotencyRow;
  settings: SettingRow;
}

export type Db = Kysely<Tables>;
export type DialectName = 'sqlite' | 'postgres';

export interface OpenedDb {
  db: Db;
  dialect: DialectName;
  close(): Promise<void>;
}

/** Synchronous reads of committed data, outside any transaction (see registerFastReader). */
export interface FastReader {
  all(sql: string, parameters: readonly unknown[]): unknown[];
  close(): void;
}

/**
 * better-sqlite3 compiles a statement on every prepare(); Kysely calls prepare() for every query.
 * Caching statements by SQL text makes every repeated query a prepared statement.
 */
function statementCache(sqlite: Database.Database) {
  const cache = new Map<string, Database.Statement>();
  return {
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= 500) cache.clear(); // bounded: queries with variable IN-lists vary
        statement = sqlite.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
    close() {
      sqlite.close();
    },
  };
}

const sqliteFile = (dataDir: string) => path.join(dataDir, 'parley.sqlite');

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
    all: (sql, parameters) => statements.prepare(sql).all(...parameters),
    close: () => reader.close(),
  };
}

function openSqlite(dataDir: string): Dialect {
  fs.mkdirSync(dataDir, { recursive: true });
  const raw = new Database(sqliteFile(dataDir));
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = ON');
  // WAL + NORMAL survives a process crash; a power cut may lose the last commits (see README).
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 5000');
  return new SqliteDialect({ database: statementCache(raw) as never });
}

async function openPostgres(url: string): Promise<Dialect> {
  const pg = await import('pg');
  const types = pg.default?.types ?? pg.types;
  types.setTypeParser(20, (v: string) => Number(v)); // int8 → number; our values fit in 2^53
  const Pool = pg.default?.Pool ?? pg.Pool;
  return new PostgresDialect({ pool: new Pool({ connectionString: url, max: 10 }) });
}

export async function openDb(options: { dataDir: string; databaseUrl?: string | null }): Promise<OpenedDb> {
  const dialectName: DialectName = options.databaseUrl ? 'postgres' : 'sqlite';
  const dialect =
    dialectName === 'postgres' ? await openPostgres(options.databaseUrl!) : openSqlite(options.dataDir);
  const db = new Kysely<Tables>({ dialect });
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
