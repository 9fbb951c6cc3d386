// Where the audit trail's batches of rows go (lib/api/domain/audit.ts), off the request thread.
//
// SQLite: a worker thread with a connection of its own inserts each batch in one transaction, so
// the statement's CPU (about 5 µs a row, the indexes' upkeep most of it) is not taken from the
// thread that answers requests. It shares the write gate with Kysely's connection (write-gate.ts).
// PostgreSQL: one INSERT of the whole batch as a single JSON parameter on the pool: the database
// does the work; this thread only serialises the batch.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import type { Db } from './db';
import { WRITER, type WriteGate } from './write-gate';

/** A row as the writer takes it: at, user_id, token_id, action, object_type, object_id, conversation_id, address, outcome. */
export type AuditTuple = [number, string, string | null, string, string | null, string | null, string | null, string | null, string];

export interface AuditWriter {
  /** Resolves once the rows are committed; rejects when the database refused them. */
  write(rows: AuditTuple[]): Promise<void>;
  close(): Promise<void>;
}

const COLUMNS = 'at, user_id, token_id, action, object_type, object_id, conversation_id, address, outcome';

/** The writer thread is gone (it could not start, or died): nothing more goes through it. */
export class WriterGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WriterGoneError';
  }
}

/** One INSERT per batch on this thread's connection (SQLite), where the writer thread cannot run. */
export function connectionAuditWriter(db: Db): AuditWriter {
  return {
    async write(rows) {
      await sql`insert into audit (${sql.raw(COLUMNS)})
        select json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
          json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]'), json_extract(value, '$[7]'), json_extract(value, '$[8]')
        from json_each(${JSON.stringify(rows)})`.execute(db);
    },
    async close() {},
  };
}

/**
 * The writer thread while it runs, then `fallback` for good: a thread that cannot start (a bundle
 * where better-sqlite3 cannot be found from its code, as Next's route handlers' server chunk) or
 * that died must not leave the trail unwritten. `onFallback` is told once.
 */
export function withFallback(primary: AuditWriter, fallback: AuditWriter, onFallback: (error: Error) => void): AuditWriter {
  let fallen = false;
  return {
    async write(rows) {
      if (!fallen) {
        try {
          return await primary.write(rows);
        } catch (error) {
          if (!(error instanceof WriterGoneError)) throw error;
          fallen = true;
          onFallback(error);
        }
      }
      return fallback.write(rows);
    },
    async close() {
      await primary.close();
      await fallback.close();
    },
  };
}

/** One INSERT per batch on the pool (PostgreSQL). */
export function poolAuditWriter(db: Db): AuditWriter {
  return {
    async write(rows) {
      await sql`insert into audit (${sql.raw(COLUMNS)})
        select (r->>0)::bigint, r->>1, r->>2, r->>3, r->>4, r->>5, r->>6, r->>7, r->>8
        from json_array_elements(${JSON.stringify(rows)}::json) as r`.execute(db);
    },
    async close() {},
  };
}

// The worker's program: plain CommonJS, evaluated (no file of its own to find in the bundle that
// `npm run build` makes of the server).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
// better-sqlite3 from the first place that has it: the writer's own module, then the working folder.
const Database = (() => {
  for (const base of workerData.bases) {
    try { return createRequire(base)('better-sqlite3'); } catch {}
  }
  return require('better-sqlite3');
})();
const db = new Database(workerData.file);
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
// The WAL is checkpointed after the batch's answer has gone back, not inside its commit (where
// SQLite's automatic checkpoint would run, with its fsync, while the answers wait).
db.pragma('wal_autocheckpoint = 0');
let sinceCheckpoint = 0;
const cell = new Int32Array(workerData.gate);
const insert = db.prepare('insert into audit (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?)');
const batch = db.transaction((rows) => { for (const row of rows) insert.run(row); });
parentPort.on('message', (message) => {
  if (message.close) { db.close(); parentPort.close(); return; }
  // Waits while the request thread's connection holds the gate (a transaction of its own).
  while (Atomics.compareExchange(cell, 0, 0, ${WRITER}) !== 0) Atomics.wait(cell, 0, Atomics.load(cell, 0), 50);
  let error = null;
  try {
    batch.immediate(message.rows);
  } catch (e) {
    error = { message: String(e && e.message), code: e && e.code };
  } finally {
    Atomics.store(cell, 0, 0);
    Atomics.notify(cell, 0);
  }
  parentPort.postMessage({ id: message.id, error });
  sinceCheckpoint += message.rows.length;
  if (sinceCheckpoint >= 2000) {
    sinceCheckpoint = 0;
    setImmediate(checkpoint);
  }
});
function checkpoint() {
  while (Atomics.compareExchange(cell, 0, 0, ${WRITER}) !== 0) Atomics.wait(cell, 0, Atomics.load(cell, 0), 50);
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} finally { Atomics.store(cell, 0, 0); Atomics.notify(cell, 0); }
}
`;

/** A worker thread writing to the SQLite file at `file`, through `gate`. */
export function threadAuditWriter(file: string, gate: WriteGate): AuditWriter {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // Where the thread finds better-sqlite3, as places to resolve it from, never a resolved path: a
    // bundler rewrites `require.resolve('better-sqlite3')` into its own module id (Next's
    // Turbopack did: the route handlers' thread stopped on its first row, every start).
    workerData: { file, gate: gate.buffer, bases: [String(import.meta.url), pathToFileURL(path.join(process.cwd(), 'index.js')).href] },
  });
  worker.unref();
  const waiting = new Map<number, { resolve(): void; reject(error: Error): void }>();
  let next = 0;
  let gone: Error | null = null;
  const fail = (error: Error) => {
    gone = error;
    gate.writerGone();
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };
  worker.on('message', (message: { id: number; error: { message: string; code?: string } | null }) => {
    const w = waiting.get(message.id);
    waiting.delete(message.id);
    if (!w) return;
    if (message.error) w.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
    else w.resolve();
  });
  worker.on('error', (error) => fail(new WriterGoneError(`the audit writer thread failed: ${error.message}`)));
  worker.on('exit', () => fail(new WriterGoneError('the audit writer thread has stopped')));
  return {
    write(rows) {
      if (gone) return Promise.reject(gone);
      const id = next++;
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id, rows });
      });
    },
    async close() {
      if (gone) return;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      // Unref'd while it serves (it must not keep a process alive), but waited for here: with the
      // server closed nothing else holds the event loop, and the process would end before the
      // thread's exit (no "[parley] stopped", the rest of the shutdown skipped).
      worker.ref();
      worker.postMessage({ close: true });
      await exited;
    },
  };
}
