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
import type { Db, SqliteFile } from './db';
import { WRITER } from './write-gate';

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

/**
 * The request thread's writes between two nudges of the writer thread to checkpoint the WAL. A
 * PUT's commit adds about 10 pages to the WAL; SQLite's own automatic checkpoint runs at 1000.
 */
export const CHECKPOINT_EVERY_COMMITS = 100;
/**
 * The WAL's size, in frames (pages), from which the writer thread's checkpoint ends with a short
 * pass holding the write gate, so that the WAL starts again from its beginning: about 8 MB.
 */
const RESTART_FRAMES = 2000;
/** SQLite's default `wal_autocheckpoint`, the request thread's connection's again once the writer thread is gone. */
const SQLITE_AUTOCHECKPOINT = 1000;

// The worker's program: plain CommonJS, evaluated (no file of its own to find in the bundle that
// `npm run build` makes of the server).
//
// The WAL's checkpoints. While this thread runs, neither connection checkpoints inside its commits
// (wal_autocheckpoint = 0 on both): SQLite's automatic checkpoint runs inside the COMMIT that
// crosses 1000 pages, with its fsyncs, and on the request thread that was a request's answer
// waiting several milliseconds. This thread checkpoints instead, after every 2,000 of its own rows
// and whenever the request thread says it has made CHECKPOINT_EVERY_COMMITS writes (a nudge: its
// writes carry their audit rows in their own transactions, so a load of PUTs alone sends this
// thread no rows at all).
//
// The checkpoint's copying does NOT hold the write gate. A PASSIVE checkpoint takes SQLite's
// checkpointer lock only, never the writer lock, and never calls the busy handler
// (https://www.sqlite.org/c3ref/wal_checkpoint_v2.html: "Checkpoint as many frames as possible
// without waiting for any database readers or writers to finish ... The busy-handler callback is
// never invoked in the SQLITE_CHECKPOINT_PASSIVE mode"; only FULL, RESTART and TRUNCATE take the
// writer lock, and sqlite3WalCheckpoint in the amalgamation we build does just that). The
// request thread's connection goes on appending commits to the WAL meanwhile
// (https://www.sqlite.org/wal.html: writers only append; a checkpoint copies the frames up to
// where it began and leaves the rest for the next one); neither waits for the other. The gate exists so that neither connection sleeps in
// SQLite's busy handler for the writer lock; the copying does not contend for that lock, so holding
// the gate through it (as this thread once did) only made the request thread wait in Atomics.wait
// for the copying and its two fsyncs, the very wait this moves off it.
//
// But one short pass does hold it, once the WAL has passed RESTART_FRAMES: SQLite starts the WAL
// again from its beginning only when a write transaction begins with every frame already copied
// (and the database file synced). Under a steady load of the request thread's writes some commit
// always lands during the copying, so without that pass the WAL would only ever grow (the tests
// saw it). Holding the gate, the pass copies the frames of the last few commits, with its two
// fsyncs, usually of little (a pass before it synced the bulk), and the request thread's next
// write restarts the WAL. Still PASSIVE: the gate keeps our one other writer out, and RESTART or
// TRUNCATE would wait on readers through the busy handler.
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
let checkpointDue = false;
const cell = new Int32Array(workerData.gate);
const insert = db.prepare('insert into audit (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?)');
const batch = db.transaction((rows) => { for (const row of rows) insert.run(row); });
parentPort.on('message', (message) => {
  if (message.close) {
    try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
    db.close();
    parentPort.close();
    return;
  }
  if (message.checkpoint) { checkpointSoon(); return; }
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
  if (sinceCheckpoint >= 2000) checkpointSoon();
});
// After the messages already here (batches waiting for their answer go first); one for any number of nudges.
function checkpointSoon() {
  if (checkpointDue) return;
  checkpointDue = true;
  setImmediate(checkpoint);
}
// See the comment above WORKER_SOURCE in audit-writer.ts.
function checkpoint() {
  checkpointDue = false;
  sinceCheckpoint = 0;
  if (!db.open) return;
  try {
    // The copying, without the gate: the request thread's commits go on meanwhile. A pass ends
    // with the database file's fsync only if no commit came during it (SQLite: the checkpoint is
    // then complete); the frames that came are left for the next.
    const done = passive();
    // Another process's checkpoint is running; or the WAL is still small enough to go on growing.
    if (done.busy || done.log < ${RESTART_FRAMES}) return;
    // Those frames, still without the gate: a short pass, that no commit may come during, and then
    // the database file's fsync (of the bulk's pages) is made here rather than under the gate.
    passive();
    // The last frames, with the gate: no commit can come in between, so the WAL ends wholly
    // copied and the next write starts it again from its beginning. SQLite restarts the WAL only
    // for a write that begins with all of it copied; under a steady load of the request thread's
    // writes that never happens by itself, and it would grow for ever. Short: a few frames, and
    // the database file's fsync had most of its pages already when the pass above completed (when
    // commits came during it too, this fsync carries the bulk's pages: the price of the bound).
    while (Atomics.compareExchange(cell, 0, 0, ${WRITER}) !== 0) Atomics.wait(cell, 0, Atomics.load(cell, 0), 50);
    try { passive(); } finally { Atomics.store(cell, 0, 0); Atomics.notify(cell, 0); }
  } catch {}
}
function passive() {
  return db.pragma('wal_checkpoint(PASSIVE)')[0];
}
// Running: the request thread's connection may leave the checkpoints to this thread.
parentPort.postMessage({ ready: true });
`;

export interface ThreadAuditWriter extends AuditWriter {
  /** Resolves once the thread runs and checkpoints the WAL (false: it could not start). */
  readonly running: Promise<boolean>;
  /** Asks the thread for a checkpoint now, as the request thread's writes do every CHECKPOINT_EVERY_COMMITS. */
  checkpoint(): void;
  /** Ends the thread as a crash would (tests). */
  terminate(): Promise<void>;
}

/**
 * A worker thread writing to the SQLite file `file`, through its write gate, and checkpointing
 * its WAL while it runs (the Kysely connection's automatic checkpoint off meanwhile, back on once
 * the thread is gone).
 */
export function threadAuditWriter(file: SqliteFile): ThreadAuditWriter {
  const gate = file.gate;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // Where the thread finds better-sqlite3, as places to resolve it from, never a resolved path: a
    // bundler rewrites `require.resolve('better-sqlite3')` into its own module id (Next's
    // Turbopack did: the route handlers' thread stopped on its first row, every start).
    workerData: { file: file.path, gate: gate.buffer, bases: [String(import.meta.url), pathToFileURL(path.join(process.cwd(), 'index.js')).href] },
  });
  worker.unref();
  const waiting = new Map<number, { resolve(): void; reject(error: Error): void }>();
  let next = 0;
  let gone: Error | null = null;
  const nudge = () => worker.postMessage({ checkpoint: true });
  let started: (running: boolean) => void = () => {};
  const running = new Promise<boolean>((resolve) => (started = resolve));
  const fail = (error: Error) => {
    if (gone) return;
    gone = error;
    // The thread checkpoints no more: the request thread's connection does it in its commits
    // again, or its WAL would grow without bound (every write, no checkpoint).
    gate.everyCommits(0, null);
    file.autocheckpoint(SQLITE_AUTOCHECKPOINT);
    gate.writerGone();
    started(false);
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };
  worker.on('message', (message: { ready?: true; id: number; error: { message: string; code?: string } | null }) => {
    if (message.ready) {
      if (gone) return;
      file.autocheckpoint(0);
      gate.everyCommits(CHECKPOINT_EVERY_COMMITS, nudge);
      started(true);
      return;
    }
    const w = waiting.get(message.id);
    waiting.delete(message.id);
    if (!w) return;
    if (message.error) w.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
    else w.resolve();
  });
  worker.on('error', (error) => fail(new WriterGoneError(`the audit writer thread failed: ${error.message}`)));
  worker.on('exit', () => fail(new WriterGoneError('the audit writer thread has stopped')));
  return {
    running,
    checkpoint: nudge,
    async terminate() {
      await worker.terminate();
    },
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
