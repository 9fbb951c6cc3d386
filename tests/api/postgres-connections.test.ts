// PostgreSQL closing the server's connections (a restart, a failover, pg_terminate_backend) must
// not take the process down: idle pooled connections and the LISTEN connection are replaced.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api';
import { startTestServer, type TestServer } from '../helpers/server';

const postgres = process.env.PARLEY_TEST_POSTGRES === '1';

describe.runIf(postgres)('PostgreSQL connections closed under the server', () => {
  let s: TestServer;
  let database: { url: string; drop(): Promise<void> };
  let admin: pg.Client;
  beforeAll(async () => {
    const { createTestDatabase } = await import('../helpers/postgres');
    database = await createTestDatabase();
    s = await startTestServer({ env: { DATABASE_URL: database.url } });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await s.stop();
    await database.drop();
  });

  const backends = async () =>
    (
      await admin.query<{ pid: number; query: string }>(
        'select pid, query from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      )
    ).rows;

  it('survives its connections being terminated, and answers again', async () => {
    const alice = client(() => s.baseUrl, s.tokens.alice);
    // Several requests at once leave several idle connections in the pool.
    await Promise.all(Array.from({ length: 5 }, (_, i) => alice.post('/v1/conversations', { json: { contact_id: `pool-${i}` } })));
    const before = await backends();
    expect(before.some((b) => b.query.startsWith('LISTEN'))).toBe(true);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    // The LISTEN connection comes back (a new backend): the process handled the closures and lives.
    const old = new Set(before.map((b) => b.pid));
    while (!(await backends()).some((b) => b.query.startsWith('LISTEN') && !old.has(b.pid))) await new Promise((r) => setTimeout(r, 50));
    const r = await alice.get('/v1/conversations?limit=100');
    expect(r.status).toBe(200);
    expect(r.body.data.filter((c: { contact_id: string }) => c.contact_id.startsWith('pool-')).length).toBe(5);
  });
});
