// @vitest-environment node
// SQLite's WAL checkpoints while the audit trail's writer thread runs (lib/api/storage/audit-writer.ts):
// the request thread's connection does none inside its commits (wal_autocheckpoint 0), the thread
// does them, nudged by the request thread's writes, so a load of writes alone (no audit rows for
// the thread) still keeps the WAL bounded. Once the thread is gone, the request thread's
// connection checkpoints in its commits again (1000 pages, SQLite's default).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CHECKPOINT_EVERY_COMMITS, threadAuditWriter, type ThreadAuditWriter } from '../../lib/api/storage/audit-writer';
import { openDb, sqliteFileOf, type Db, type OpenedDb } from '../../lib/api/storage/db';
import { startTestServer } from '../helpers/server';
import { client } from '../helpers/api';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(): Promise<OpenedDb> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-wal-'));
  const opened = await openDb({ dataDir: dir });
  cleanups.push(async () => {
    await opened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return opened;
}

function thread(db: Db): ThreadAuditWriter {
  const writer = threadAuditWriter(sqliteFileOf(db)!);
  cleanups.push(() => writer.close());
  return writer;
}

/** The request thread's connection's setting (Kysely's connection: the one the requests write through). */
async function autocheckpoint(db: Db): Promise<number> {
  const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db);
  return rows[0]!.wal_autocheckpoint;
}

const walSize = (db: Db) => {
  try {
    return fs.statSync(`${sqliteFileOf(db)!.path}-wal`).size;
  } catch {
    return 0;
  }
};

/**
 * `commits` writes on the request thread's connection, one after another with no pause (as under
 * a steady load), each about 3 WAL pages (an 8 KB value: overflow pages): without any checkpoint
 * the WAL grows by 12 MB every 1,000. Returns the WAL's largest size on disk meanwhile.
 */
async function writeLoad(db: Db, commits: number): Promise<number> {
  let largest = 0;
  for (let i = 0; i < commits; i++) {
    const value = `${i}:`.padEnd(8192, String.fromCharCode(97 + (i % 26)));
    await db
      .insertInto('settings')
      .values({ key: `load-${i % 50}`, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
    largest = Math.max(largest, walSize(db));
  }
  return largest;
}

const COMMITS = 6000;
/**
 * Unbounded, COMMITS × ~3 pages × 4 KB is over 70 MB. The thread restarts the WAL from about 8 MB,
 * plus what comes while it copies (a test's writes come faster than a server's, and the machine may be busy); SQLite's own checkpoint near 4 MB.
 */
const BOUND = 32 * 1024 * 1024;

describe('WAL checkpoints with the audit writer thread', () => {
  it('while the thread runs: the request thread’s connection does no automatic checkpoint, and a write-only load (no audit rows) keeps the WAL bounded', async () => {
    const opened = await open();
    expect(await autocheckpoint(opened.db)).toBe(1000);
    const writer = thread(opened.db);
    expect(await writer.running).toBe(true);
    expect(await autocheckpoint(opened.db)).toBe(0);
    const largest = await writeLoad(opened.db, COMMITS);
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(BOUND);
    expect(await autocheckpoint(opened.db)).toBe(0);
  });

  it('the thread copies the WAL into the database without the write gate: while the request thread holds it (a transaction open), its checkpoint goes on', async () => {
    const opened = await open();
    const writer = thread(opened.db);
    expect(await writer.running).toBe(true);
    const dbFile = sqliteFileOf(opened.db)!.path;
    await writeLoad(opened.db, CHECKPOINT_EVERY_COMMITS - 1); // WAL frames to copy, one write short of a nudge
    const before = fs.statSync(dbFile);
    await opened.db.transaction().execute(async (trx) => {
      // The gate is this thread's from the BEGIN to the COMMIT.
      await trx.insertInto('settings').values({ key: 'in-transaction', value: 'x' }).execute();
      writer.checkpoint();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Pages copied into the database file meanwhile: it grew (it held only the schema).
      expect(fs.statSync(dbFile).size).toBeGreaterThan(before.size);
    });
  });

  it('once the thread is gone (it died): the request thread’s connection checkpoints again, and the WAL stays bounded', async () => {
    const opened = await open();
    const writer = thread(opened.db);
    expect(await writer.running).toBe(true);
    expect(await autocheckpoint(opened.db)).toBe(0);
    await writer.terminate();
    await vi.waitFor(async () => expect(await autocheckpoint(opened.db)).toBe(1000));
    await expect(writer.write([[1, 'alice', null, 'read', null, null, null, null, '200']])).rejects.toThrow('audit writer thread');
    const largest = await writeLoad(opened.db, COMMITS);
    expect(largest).toBeLessThan(BOUND);
  });

  it('a thread that could not start (as in a bundle without better-sqlite3): the request thread’s connection never gave its checkpoints up', async () => {
    const opened = await open();
    const file = sqliteFileOf(opened.db)!;
    // Its own connection cannot open (no such folder): the thread fails before it runs.
    const writer = threadAuditWriter({ ...file, path: path.join(path.dirname(file.path), 'missing', 'parley.sqlite') });
    cleanups.push(() => writer.close());
    expect(await writer.running).toBe(false);
    expect(await autocheckpoint(opened.db)).toBe(1000);
    expect(await writeLoad(opened.db, COMMITS)).toBeLessThan(BOUND);
  });

  it('a server under PUTs alone (their audit rows are in their own transactions): autocheckpoint 0 while the thread runs, the WAL bounded', async () => {
    const s = await startTestServer();
    cleanups.push(() => s.stop());
    const alice = client(() => s.baseUrl, s.tokens.alice);
    const created = await alice.post('/v1/conversations', { json: { contact_id: 'patient-wal' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const db = s.service.db;
    await vi.waitFor(async () => expect(await autocheckpoint(db)).toBe(0));
    const start = walSize(db);
    let largest = 0;
    for (let i = 0; i < 1500; i++) {
      const r = await alice.put(`/v1/conversations/${id}`, { json: { is_pinned: i % 2 === 0, is_muted: i % 2 === 1 } });
      expect(r.status).toBe(200);
      largest = Math.max(largest, walSize(db));
    }
    expect(largest).toBeGreaterThan(start);
    expect(largest).toBeLessThan(BOUND);
    const [row] = (await sql<{ busy: number; log: number; checkpointed: number }>`pragma wal_checkpoint(passive)`.execute(db)).rows;
    // The WAL's frames now: at most its restart size and a nudge's worth, far from the ~15,000 the PUTs wrote.
    expect(row!.log).toBeLessThan(6000);
  });
});
