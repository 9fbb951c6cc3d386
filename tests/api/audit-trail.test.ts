// @vitest-environment node
// The audit trail's group commit on its own (lib/api/domain/audit.ts): rows queued together are
// committed before `enqueue` resolves (the service sends a read's answer only then), off the
// request thread on SQLite (a writer thread with its own connection, behind the write gate), one
// INSERT of JSON on PostgreSQL. And the one exception: a database that refuses rows does not hold
// answers back; the rows are kept and written at the next try. The refusal is the database's own
// (a trigger that aborts inserts), not a stand-in.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuditTrail, type AuditEntry } from '../../lib/api/domain/audit';
import { openDb, type OpenedDb } from '../../lib/api/storage/db';
import { createTestDatabase } from '../helpers/postgres';

const postgres = process.env.PARLEY_TEST_POSTGRES === '1';
// Storage only: nothing here goes through a proxy, an object store or two instances.
const elsewhere = ['PARLEY_TEST_VIA_PROXY', 'PARLEY_TEST_S3', 'PARLEY_TEST_TWO_INSTANCES'].some((name) => process.env[name] === '1');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(): Promise<OpenedDb> {
  let opened: OpenedDb;
  if (postgres) {
    const database = await createTestDatabase();
    opened = await openDb({ dataDir: '', databaseUrl: database.url });
    cleanups.push(database.drop);
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-audit-trail-'));
    opened = await openDb({ dataDir: dir });
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  cleanups.push(() => opened.close());
  return opened;
}

function trailOn(opened: OpenedDb, log: Pick<Console, 'error'> = { error: () => {} }): AuditTrail {
  const trail = new AuditTrail(opened.db, { enabled: true, retentionDays: 365, dialect: opened.dialect, log });
  cleanups.push(() => trail.close());
  return trail;
}

const read = (i: number): AuditEntry => ({ user: 'alice', token: 'static', action: 'read', objectType: 'conversation', objectId: `C${String(i).padStart(15, '0')}`, address: '127.0.0.1', outcome: 200 });
const count = async (opened: OpenedDb) => Number((await opened.db.selectFrom('audit').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

async function refuseInserts(opened: OpenedDb, refuse: boolean): Promise<void> {
  if (opened.dialect === 'postgres') {
    if (refuse) {
      await sql`create function refuse_audit() returns trigger language plpgsql as $$ begin raise exception 'no room for audit rows'; end $$`.execute(opened.db);
      await sql`create trigger refuse_audit before insert on audit for each statement execute function refuse_audit()`.execute(opened.db);
    } else {
      await sql`drop trigger refuse_audit on audit`.execute(opened.db);
    }
  } else if (refuse) {
    await sql`create trigger refuse_audit before insert on audit begin select raise(abort, 'no room for audit rows'); end`.execute(opened.db);
  } else {
    await sql`drop trigger refuse_audit`.execute(opened.db);
  }
}

describe.skipIf(elsewhere)('the audit trail’s group commit', () => {
  it('rows queued in one turn are committed, in order, by the time each enqueue resolves', async () => {
    const opened = await open();
    const trail = trailOn(opened);
    await Promise.all(Array.from({ length: 1200 }, (_, i) => trail.enqueue(read(i))));
    expect(await count(opened)).toBe(1200);
    const ids = (await opened.db.selectFrom('audit').select('object_id').orderBy('seq').execute()).map((r) => r.object_id);
    expect(ids).toEqual(Array.from({ length: 1200 }, (_, i) => read(i).objectId));
  });

  it('rows queued while a group is being written go with the next one, once that is answered: each enqueue still resolves on its commit', async () => {
    const opened = await open();
    const trail = trailOn(opened);
    const first = trail.enqueue(read(0));
    const later: Promise<void>[] = [];
    // Turns of the event loop while the first group is with the writer.
    for (let i = 1; i <= 30; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      later.push(trail.enqueue(read(i)));
    }
    await first;
    for (const [i, queued] of later.entries()) {
      await queued;
      expect(await count(opened)).toBeGreaterThanOrEqual(i + 2);
    }
    const ids = (await opened.db.selectFrom('audit').select('object_id').orderBy('seq').execute()).map((r) => r.object_id);
    const queued = Array.from({ length: 31 }, (_, i) => read(i).objectId);
    // SQLite's writer takes one group at a time, so groups commit in order; PostgreSQL's pool writes them side by side.
    expect(postgres ? ids.toSorted() : ids).toEqual(postgres ? queued.toSorted() : queued);
  });

  /** One turn of the event loop (the trail gathers a group over turns). */
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('a group gathers while each turn of the event loop brings rows to it (up to 8 turns): rows queued a turn apart share one commit', async () => {
    const opened = await open();
    const trail = trailOn(opened);
    await trail.enqueue(read(-1)); // the writer (thread) is up
    const done: boolean[] = [];
    const queued: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) {
      // As in the server, where the fair share's turn that starts the next request is scheduled
      // before the request queues its row: each turn's row comes before the trail looks again.
      const next = turn();
      const at = queued.push(trail.enqueue(read(i))) - 1;
      void queued[at].then(() => (done[at] = true));
      await next;
    }
    await queued[0];
    // The first row's commit is the others' too: each resolved with it.
    expect(done).toEqual([true, true, true, true, true, true]);
  });

  it('a group goes at the first turn that brought it no row: a lone read beside other work is not held for more (issue 30, the flood)', async () => {
    const opened = await open();
    const trail = trailOn(opened);
    await trail.enqueue(read(-1));
    const first = trail.enqueue(read(0));
    // Two turns with no row (another user's writes, say), then a second read. (Whether the first
    // group is still being written then or already committed, the second read is not in it.)
    await turn();
    await turn();
    let secondDone = false;
    const second = trail.enqueue(read(1));
    void second.then(() => (secondDone = true));
    await first;
    // Had the first group waited its 8 turns, the second read would be in it and done with it.
    expect(secondDone).toBe(false);
    await second;
    expect(await count(opened)).toBe(3);
  });

  it.runIf(!postgres)('SQLite: request-thread transactions and the writer thread take turns (no busy error, nothing lost)', async () => {
    const opened = await open();
    const trail = trailOn(opened);
    await trail.enqueue(read(-1)); // the writer thread is up
    const reads: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      await opened.db.transaction().execute(async (trx) => {
        // Reads first (its snapshot); rows are queued meanwhile, and the transaction stays open
        // for a while before it writes: had the writer thread committed them in that while,
        // SQLite would refuse the write (SQLITE_BUSY_SNAPSHOT, whatever the busy timeout).
        await trx.selectFrom('settings').select('key').where('key', '=', `k${i}`).execute();
        for (let k = 0; k < 50; k++) reads.push(trail.enqueue(read(i * 50 + k)));
        await new Promise((resolve) => setTimeout(resolve, 10));
        await trx.insertInto('settings').values({ key: `k${i}`, value: 'w' }).execute();
      });
    }
    await Promise.all(reads);
    expect(await count(opened)).toBe(1001);
    expect((await opened.db.selectFrom('settings').select('key').where('value', '=', 'w').execute()).length).toBe(20);
  });

  it('a database that refuses the rows: enqueue still resolves (the answer is not held), the rows are kept and written once it accepts them', async () => {
    const opened = await open();
    const errors: string[] = [];
    const trail = trailOn(opened, { error: (...args: unknown[]) => errors.push(args.map(String).join(' ')) });
    await refuseInserts(opened, true);
    await Promise.all([trail.enqueue(read(1)), trail.enqueue(read(2))]);
    expect(await count(opened)).toBe(0);
    expect(errors.join('\n')).toContain('writing audit records failed (kept for the next pass)');
    // Meanwhile: queued for the retry, answered at once.
    await trail.enqueue(read(3));
    await refuseInserts(opened, false);
    await vi.waitFor(async () => expect(await count(opened)).toBe(3), { timeout: 10_000, interval: 50 });
  });
});
