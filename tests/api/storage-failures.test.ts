// Disk full and read-only storage, produced for real: DATA_DIR on a tiny tmpfs, SQLite's own
// max_page_count, a PostgreSQL tablespace on a tiny tmpfs, a read-only database. Every write then
// answers at once — 507 insufficient_storage or 503 service_unavailable — leaves nothing half-stored
// (no row, no blob, no temporary file) and logs its cause once; the server keeps answering.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError } from '../helpers/api';
import { POSTGRES_ADMIN_URL } from '../helpers/postgres';
import type { TestServer } from '../helpers/server';
import { blobKeys, capturingLog, objectStoreProject, rowKeys, tempFiles } from '../helpers/storage';
import { startTarget } from '../helpers/target';
import { fillDisk, freeBytes, mountTmpfs, tmpfsProblem, type Tmpfs } from '../helpers/tmpfs';

const dialect = process.env.PARLEY_TEST_POSTGRES === '1' ? 'postgres' : 'sqlite';
const noTmpfs = tmpfsProblem() !== null;
const MiB = 1024 * 1024;
const key = (k: string) => ({ 'idempotency-key': k });

async function expectNothingHalfStored(s: TestServer) {
  expect(await tempFiles(s)).toEqual([]);
  expect(await blobKeys(s)).toEqual(await rowKeys(s));
}

/** Sends writes until one is not a 201 (the storage is full by then); returns that answer. */
async function writeUntilRefused(send: (i: number) => Promise<{ status: number; body: any; headers: Headers }>, limit = 5000) {
  for (let i = 0; i < limit; i++) {
    const r = await send(i);
    if (r.status !== 201) return { ...r, attempt: i };
  }
  throw new Error(`still accepting writes after ${limit} attempts`);
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>, url = POSTGRES_ADMIN_URL): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe.skipIf(noTmpfs || objectStoreProject)('file bytes on a full disk (DATA_DIR on a tiny tmpfs)', () => {
  let disk: Tmpfs;
  let s: TestServer;
  let alice: ReturnType<typeof client>;
  let conversation: string;
  const captured = capturingLog();

  beforeAll(async () => {
    disk = mountTmpfs(24 * MiB);
    s = await startTarget({ env: { DATA_DIR: disk.dir }, log: captured.log });
    alice = client(() => s.baseUrl, s.tokens.alice);
    conversation = (await alice.post('/v1/conversations', { json: { contact_id: 'full-disk' } })).body.id;
  });
  afterAll(async () => {
    await s?.stop();
    disk?.unmount();
  });

  it('an upload that does not fit: 507 insufficient_storage, nothing stored, cause logged once; the same key works once there is room', async () => {
    const filler = fillDisk(disk.dir);
    freeBytes(filler, 1 * MiB);
    captured.errors.length = 0;
    const bytes = new Uint8Array(3 * MiB).fill(7);
    const send = () => alice.upload({ conversation_id: conversation }, { name: 'big.bin', bytes }, { headers: key('full-upload') });
    const refused = await send();
    expectError(refused, 507, 'insufficient_storage');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    await expectNothingHalfStored(s);
    expect((await alice.get(`/v1/files?conversation_id=${conversation}`)).body.data).toEqual([]);
    expect(captured.errors.filter((e) => e.includes('ENOSPC')).length).toBe(1);
    expect(captured.errors.join('\n')).not.toContain('could not be received');

    fs.unlinkSync(filler);
    const accepted = await send();
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get('idempotent-replayed')).toBeNull();
    await expectNothingHalfStored(s);
  });

  it.runIf(dialect === 'sqlite')('with the disk full, keyed writes answer 507 at once and every other request keeps answering', async () => {
    const filler = fillDisk(disk.dir);
    captured.errors.length = 0;
    const refused = await writeUntilRefused(async (i) => {
      const [write, read] = await Promise.all([
        alice.post('/v1/conversations', { json: { contact_id: `full-${i}` }, headers: key(`full-create-${i}`) }),
        alice.get('/v1/conversations?limit=1'),
      ]);
      expect(read.status).toBe(200);
      return write;
    });
    expectError(refused, 507, 'insufficient_storage');
    const log = captured.errors.join('\n');
    expect(log).not.toContain('cannot rollback');
    // The request's failure, logged once. (The audit trail's batch of read records, refused by the
    // same full disk, says so in its own words and keeps them for its next pass.)
    expect(captured.errors.filter((e) => /SQLITE_FULL|ENOSPC|disk is full/.test(e) && !e.includes('audit records')).length).toBe(1);

    fs.unlinkSync(filler);
    const again = await alice.post('/v1/conversations', { json: { contact_id: `full-${refused.attempt}` }, headers: key(`full-create-${refused.attempt}`) });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });

  it.runIf(dialect === 'sqlite')('empty uploads on a full disk: each is 201 or 507, and a refused one leaves no blob', async () => {
    const filler = fillDisk(disk.dir);
    const refused = await writeUntilRefused((i) =>
      alice.upload({ conversation_id: conversation }, { name: 'empty.txt', bytes: '' }, i % 2 ? { headers: key(`empty-${i}`) } : {}),
    );
    expectError(refused, 507, 'insufficient_storage');
    await expectNothingHalfStored(s);
    fs.unlinkSync(filler);
  });
});

describe.runIf(dialect === 'sqlite')('SQLite database full (PRAGMA max_page_count)', () => {
  let s: TestServer;
  let alice: ReturnType<typeof client>;
  const captured = capturingLog();

  beforeAll(async () => {
    s = await startTarget({ log: captured.log });
    alice = client(() => s.baseUrl, s.tokens.alice);
  });
  afterAll(() => s?.stop());

  it('keyed and plain writes answer 507 (no "cannot rollback"), reads keep answering; writes work again once there is room', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'page-limit' } })).body;
    const pages = await sql<{ page_count: number }>`pragma page_count`.execute(s.service.db);
    await sql.raw(`pragma max_page_count = ${pages.rows[0]!.page_count}`).execute(s.service.db);
    captured.errors.length = 0;
    const refused = await writeUntilRefused((i) =>
      alice.post('/v1/conversations', { json: { contact_id: `pages-${i}` }, headers: key(`pages-${i}`) }),
    );
    expectError(refused, 507, 'insufficient_storage');
    const upload = await writeUntilRefused(() => alice.upload({ conversation_id: c.id }, { name: 'x.txt', bytes: 'x'.repeat(5000) }));
    expectError(upload, 507, 'insufficient_storage');
    expect((await alice.get(`/v1/conversations/${c.id}`)).status).toBe(200);
    expect(captured.errors.join('\n')).not.toContain('cannot rollback');
    expect(captured.errors.filter((e) => e.includes('SQLITE_FULL')).length).toBe(2);
    await expectNothingHalfStored(s);

    await sql.raw('pragma max_page_count = 1073741823').execute(s.service.db);
    const again = await alice.post('/v1/conversations', { json: { contact_id: `pages-${refused.attempt}` }, headers: key(`pages-${refused.attempt}`) });
    expect(again.status).toBe(201);
  });
});

describe.runIf(dialect === 'postgres' && !noTmpfs)('PostgreSQL disk full (a tablespace on a tiny tmpfs)', () => {
  let disk: Tmpfs;
  let s: TestServer;
  let alice: ReturnType<typeof client>;
  let conversation: string;
  const tablespace = `parley_full_${Math.random().toString(36).slice(2, 10)}`;
  const captured = capturingLog();

  beforeAll(async () => {
    disk = mountTmpfs(512 * 1024);
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    fs.chownSync(disk.dir, uid, gid);
    await admin((c) => c.query(`create tablespace ${tablespace} location '${disk.dir}'`));
    s = await startTarget({ log: captured.log });
    alice = client(() => s.baseUrl, s.tokens.alice);
    conversation = (await alice.post('/v1/conversations', { json: { contact_id: 'pg-full' } })).body.id;
    await admin(async (c) => {
      for (const table of ['conversations', 'messages', 'files', 'idempotency_keys']) {
        await c.query(`alter table ${table} set tablespace ${tablespace}`);
      }
      await c.query(`create table filler (x text) tablespace ${tablespace}`);
      for (;;) {
        // until 53100 disk_full: no page left in the tablespace
        const full = await c.query(`insert into filler select repeat('x', 1000) from generate_series(1, 100)`).then(() => null, (e) => e);
        if (full) {
          expect(full.code).toBe('53100');
          break;
        }
      }
    }, s.databaseUrl!);
  });
  afterAll(async () => {
    await s?.stop(); // drops the database, and its tables in the tablespace with it
    await admin((c) => c.query(`drop tablespace if exists ${tablespace}`));
    disk?.unmount();
  });

  it('keyed creates and uploads answer 507 with nothing half-stored; free space makes the same key work', async () => {
    expect((await alice.get(`/v1/conversations/${conversation}`)).status).toBe(200); // reads keep answering
    captured.errors.length = 0;
    const refused = await writeUntilRefused((i) =>
      alice.post('/v1/conversations', { json: { contact_id: `pg-full-${i}` }, headers: key(`pg-full-${i}`) }),
    );
    expectError(refused, 507, 'insufficient_storage');
    expect(captured.errors.filter((e) => e.includes('53100')).length).toBe(1);
    const upload = await writeUntilRefused((i) =>
      alice.upload({ conversation_id: conversation }, { name: 'full.txt', bytes: 'x'.repeat(2000) }, { headers: key(`pg-full-upload-${i}`) }),
    );
    expectError(upload, 507, 'insufficient_storage');
    await expectNothingHalfStored(s);

    await admin((c) => c.query('drop table filler'), s.databaseUrl!);
    const again = await alice.post('/v1/conversations', { json: { contact_id: `pg-full-${refused.attempt}` }, headers: key(`pg-full-${refused.attempt}`) });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('read-only database', () => {
  let s: TestServer;
  let alice: ReturnType<typeof client>;
  const captured = capturingLog();

  async function setReadOnly(on: boolean) {
    if (dialect === 'sqlite') {
      await sql.raw(`pragma query_only = ${on ? 1 : 0}`).execute(s.service.db);
      return;
    }
    // A new default for the database, and its sessions ended so that the pool's new ones get it.
    const name = new URL(s.databaseUrl!).pathname.slice(1);
    await admin(async (c) => {
      await c.query(on ? `alter database ${name} set default_transaction_read_only = on` : `alter database ${name} reset default_transaction_read_only`);
      await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
    });
  }

  beforeAll(async () => {
    s = await startTarget({ log: captured.log });
    alice = client(() => s.baseUrl, s.tokens.alice);
  });
  afterAll(() => s?.stop());

  it('writes answer 503 service_unavailable at once (never a hang or a 500), reads answer; writes work again after', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'ro' } })).body;
    await setReadOnly(true);
    try {
      // The first requests after the sessions ended may meet a connection the pool has not yet
      // dropped: that is a 503 too. Then the read-only refusal itself.
      let created;
      for (let i = 0; i < 20; i++) {
        created = await alice.post('/v1/conversations', { json: { contact_id: 'ro-new' }, headers: key('ro-create') });
        expectError(created, 503, 'service_unavailable');
        if (/read-only/.test(created.body.message)) break;
      }
      expect(created!.body.message).toMatch(/read-only/);
      expect(created!.headers.get('retry-after')).toMatch(/^\d+$/);
      expectError(await alice.put(`/v1/conversations/${c.id}`, { json: { is_muted: true } }), 503, 'service_unavailable');
      expectError(await alice.del(`/v1/conversations/${c.id}`, { headers: key('ro-delete') }), 503, 'service_unavailable');
      const upload = await alice.upload({ conversation_id: c.id }, { name: 'ro.txt', bytes: 'read-only' }, { headers: key('ro-upload') });
      expectError(upload, 503, 'service_unavailable');
      expect(await tempFiles(s)).toEqual([]);
      expect(await blobKeys(s)).toEqual([]);
      expect((await alice.get(`/v1/conversations/${c.id}`)).status).toBe(200);
      expect(captured.errors.join('\n')).not.toContain('cannot rollback');
    } finally {
      await setReadOnly(false);
    }
    let again;
    for (let i = 0; i < 20; i++) {
      again = await alice.post('/v1/conversations', { json: { contact_id: 'ro-new' }, headers: key('ro-create') });
      if (again.status !== 503) break;
    }
    expect(again!.status).toBe(201);
    expect(again!.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe.runIf(dialect === 'postgres')('the connection dies while an upload commits (PostgreSQL)', () => {
  let s: TestServer;
  let alice: ReturnType<typeof client>;

  beforeAll(async () => {
    s = await startTarget({ sweepGraceMs: 0 }); // the restart below plays a start long after the failure
    alice = client(() => s.baseUrl, s.tokens.alice);
  });
  afterAll(() => s?.stop());

  it('is a 503, and the bytes stay (the row may have committed) until the sweep finds no row for them', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'dies' } })).body;
    // A deferred trigger runs at COMMIT: there the session ends itself (FATAL 57P01), as a database
    // that goes away mid-commit would: the client cannot know whether the commit happened.
    await admin(async (a) => {
      await a.query(`create function end_own_session() returns trigger language plpgsql as $$
        begin perform pg_terminate_backend(pg_backend_pid()); return null; end $$`);
      await a.query(`create constraint trigger files_end_session after insert on files
        deferrable initially deferred for each row execute function end_own_session()`);
    }, s.databaseUrl!);
    const before = await blobKeys(s);
    const send = () => alice.upload({ conversation_id: c.id }, { name: 'limbo.txt', bytes: 'limbo' }, { headers: key('dies-1') });
    const r = await send();
    expectError(r, 503, 'service_unavailable');
    const kept = (await blobKeys(s)).filter((k) => !before.includes(k));
    expect(kept.length).toBe(1);
    expect(await rowKeys(s)).not.toContain(kept[0]);
    expect(await tempFiles(s)).toEqual([]);

    await admin((a) => a.query('drop trigger files_end_session on files'), s.databaseUrl!);
    await s.restart(); // the start-up sweep: no row points at the kept bytes
    expect(await blobKeys(s)).toEqual(await rowKeys(s));
    expect((await send()).status).toBe(201);
  });
});
