// Idempotency-Key when things go wrong: a first request still running (wait, then the retryable
// 409 idempotency_in_progress), a key left behind by a process that was killed, markers left by the
// previous version, bodies too deep to fingerprint naively; and the up-front advertisement.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { client, expectError } from '../helpers/api';
import type { TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';

const dialect = process.env.PARLEY_TEST_POSTGRES === '1' ? 'postgres' : 'sqlite';
const key = (k: string) => ({ 'idempotency-key': k });
const USER = 'alice'; // TEST_TOKENS.alice belongs to alice

interface Holder {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Lets the held request commit; resolves when it has. */
  finish(): Promise<void>;
  kill(): Promise<void>;
}

const holders = new Set<ChildProcess>();
afterAll(() => {
  for (const child of holders) child.kill('SIGKILL'); // those a failed test left running
});

/** A child process that claims `k` for POST /v1/conversations {contact_id} and holds it. */
async function holdKey(s: TestServer, k: string, contactId: string): Promise<Holder> {
  const script = path.join(__dirname, '../helpers/hold-idempotency-key.ts');
  const child = fork(script, [s.dataDir, s.databaseUrl ?? '-', USER, k, contactId], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  holders.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => holders.delete(child));
  const message = (wanted: string) =>
    new Promise<void>((resolve, reject) => {
      child.on('message', (m) => m === wanted && resolve());
      void exited.then((code) => reject(new Error(`holder exited (${code}) before "${wanted}"`)));
    });
  await message('claimed');
  return {
    child,
    exited,
    finish: async () => {
      const done = message('done');
      child.send('finish');
      await done;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Resolves once some session of this database waits for a lock (a repeat queued behind a held key). */
async function untilWaitingOnLock(s: TestServer) {
  await withAdmin(s.databaseUrl!, async (c) => {
    await vi.waitFor(
      async () => {
        const { rows } = await c.query(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        );
        expect(rows[0].n).toBeGreaterThan(0);
      },
      { timeout: 20_000, interval: 20 },
    );
  });
}

describe('Idempotency-Key recovery', () => {
  let s: TestServer;
  let alice: ReturnType<typeof client>;

  beforeAll(async () => {
    s = await startTarget();
    alice = client(() => s.baseUrl, s.tokens.alice);
  });
  afterAll(() => s?.stop());

  it('the extension is advertised on every /v1 response: Idempotency: supported', async () => {
    expect((await alice.get('/v1/conversations')).headers.get('idempotency')).toBe('supported');
    expect((await alice.get('/v1/conversations/AAAAAAAAAAAAAAAA')).headers.get('idempotency')).toBe('supported');
    expect((await alice.get('/v1/conversations', { token: null })).headers.get('idempotency')).toBe('supported');
    const doc = (await alice.get('/v1/openapi.json')).body;
    expect(JSON.stringify(doc.components.headers.Idempotency)).toContain('supported');
  });

  it('a body nested 5,000 levels deep is the same 400 with a key as without, and the refusal is replayed', async () => {
    const deep = `{"contact_id":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const send = (headers: Record<string, string> = {}) =>
      alice.post('/v1/conversations', { body: deep, headers: { 'content-type': 'application/json', ...headers } });
    const plain = await send();
    expect(plain.status).toBe(400);
    const keyed = await send(key('deep-1'));
    expect(keyed.status).toBe(400);
    expect(keyed.body).toEqual(plain.body);
    const again = await send(key('deep-1'));
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('an in-progress marker left by the previous version blocks nothing: the request runs at once', async () => {
    await s.service.db
      .insertInto('idempotency_keys')
      .values({ user_id: USER, key: 'left-by-v1', fingerprint: 'whatever', status: null, response_headers: null, response_body: null, created_at: Math.floor(Date.now() / 1000) })
      .execute();
    const r = await alice.post('/v1/conversations', { json: { contact_id: 'after-upgrade' }, headers: key('left-by-v1') });
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    const again = await alice.post('/v1/conversations', { json: { contact_id: 'after-upgrade' }, headers: key('left-by-v1') });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(r.body);
  });

  it('a key held by a process that is then killed is free at once: the retry runs (once)', async () => {
    const holder = await holdKey(s, 'killed-holder', 'orphaned-op');
    await holder.kill();
    const r = await alice.post('/v1/conversations', { json: { contact_id: 'orphaned-op' }, headers: key('killed-holder') });
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    const list = (await alice.get('/v1/conversations?limit=100')).body.data.filter((c: any) => c.contact_id === 'orphaned-op');
    expect(list.map((c: any) => c.id)).toEqual([r.body.id]);
  });
});

describe.runIf(dialect === 'postgres')('a repeat while the first is still running (PostgreSQL, several processes)', () => {
  let s: TestServer;
  let alice: ReturnType<typeof client>;

  beforeAll(async () => {
    s = await startTarget({ env: { IDEMPOTENCY_WAIT_MS: '20000' } });
    alice = client(() => s.baseUrl, s.tokens.alice);
  });
  afterAll(() => s?.stop());

  it('waits for the first and replays its answer', async () => {
    const holder = await holdKey(s, 'held-then-done', 'waited-for');
    const repeat = alice.post('/v1/conversations', { json: { contact_id: 'waited-for' }, headers: key('held-then-done') });
    await untilWaitingOnLock(s);
    await holder.finish();
    const r = await repeat;
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBe('true');
    const list = (await alice.get('/v1/conversations?limit=100')).body.data.filter((c: any) => c.contact_id === 'waited-for');
    expect(list.map((c: any) => c.id)).toEqual([r.body.id]);
    await holder.exited;
  });

  it('waits for a first that is killed, then runs itself', async () => {
    const holder = await holdKey(s, 'held-then-killed', 'taken-over');
    const repeat = alice.post('/v1/conversations', { json: { contact_id: 'taken-over' }, headers: key('held-then-killed') });
    await untilWaitingOnLock(s);
    await holder.kill();
    const r = await repeat;
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe.runIf(dialect === 'postgres')('a repeat that waited long enough (IDEMPOTENCY_WAIT_MS)', () => {
  let s: TestServer;
  let alice: ReturnType<typeof client>;

  beforeAll(async () => {
    s = await startTarget({ env: { IDEMPOTENCY_WAIT_MS: '200' } });
    alice = client(() => s.baseUrl, s.tokens.alice);
  });
  afterAll(() => s?.stop());

  it('is the retryable 409 idempotency_in_progress with Retry-After; after the holder dies the retry runs', async () => {
    const holder = await holdKey(s, 'held-long', 'held-long');
    try {
      const r = await alice.post('/v1/conversations', { json: { contact_id: 'held-long' }, headers: key('held-long') });
      expectError(r, 409, 'idempotency_in_progress', 'Idempotency-Key');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await holder.kill();
    }
    const r = await alice.post('/v1/conversations', { json: { contact_id: 'held-long' }, headers: key('held-long') });
    expect(r.status).toBe(201);
  });
});
