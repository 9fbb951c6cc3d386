// GET /healthz (alive) and GET /readyz (the database and the blob store answer): no token, no
// data, Cache-Control: no-store; 503 naming the dependency that failed — when the database is
// gone, when the object store is killed, and when it stops answering (a timeout, never a hang).
import { afterEach, describe, expect, it } from 'vitest';
import { client } from '../helpers/api';
import { startDeployment, type Deployment } from '../helpers/instances';
import { startTestServer, type TestServer } from '../helpers/server';
import { capturingLog } from '../helpers/storage';

let deployment: Deployment | null = null;
let single: TestServer | null = null;
afterEach(async () => {
  await deployment?.stop();
  await single?.stop();
  deployment = single = null;
});

async function probe(s: TestServer, path: '/healthz' | '/readyz') {
  const r = await client(() => s.baseUrl).get(path);
  expect(r.headers.get('cache-control')).toBe('no-store');
  expect(r.headers.get('content-type')).toContain('application/json');
  return r;
}

describe('/healthz and /readyz', () => {
  it('with PostgreSQL and the object store up: alive and ready, without a token', async () => {
    deployment = await startDeployment(1);
    const s = deployment.instances[0]!;
    expect((await probe(s, '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await probe(s, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', storage: 'ok' } });
    // Only GET (and HEAD).
    expect((await client(() => s.baseUrl).post('/readyz')).status).toBe(405);
    expect((await client(() => s.baseUrl).call('HEAD', '/readyz')).status).toBe(200);
  });

  it('with SQLite and local disk: ready', async () => {
    single = await startTestServer();
    expect((await probe(single, '/readyz')).body).toEqual({ status: 'ready', checks: { database: 'ok', storage: 'ok' } });
  });

  it('the database gone (its connections refused): 503 naming the database; still alive', async () => {
    const { log, errors } = capturingLog();
    deployment = await startDeployment(0);
    const s = await deployment.add({ log });
    expect((await probe(s, '/readyz')).status).toBe(200);
    // Dropped under the running instance: its connections end, new ones are refused.
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: new URL('/postgres', deployment.databaseUrl).href });
    await admin.connect();
    try {
      await admin.query(`drop database "${new URL(deployment.databaseUrl).pathname.slice(1)}" with (force)`);
    } finally {
      await admin.end();
    }
    const r = await probe(s, '/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ status: 'not_ready', checks: { database: 'failed', storage: 'ok' } });
    expect((await probe(s, '/healthz')).status).toBe(200);
    expect(errors.some((e) => e.includes('readiness: database is not usable'))).toBe(true);
  });

  it('the object store killed: 503 naming the storage', async () => {
    const { log, errors } = capturingLog();
    deployment = await startDeployment(0);
    const s = await deployment.add({ log });
    expect((await probe(s, '/readyz')).status).toBe(200);
    await deployment.s3.kill();
    const r = await probe(s, '/readyz');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('not_ready');
    expect(r.body.checks.database).toBe('ok');
    expect(['failed', 'timeout']).toContain(r.body.checks.storage);
    expect(errors.some((e) => e.includes('readiness: storage'))).toBe(true);
  });

  it('the object store not answering (stopped, not dead): 503 storage timeout, not a hanging probe', async () => {
    const { log, errors } = capturingLog();
    deployment = await startDeployment(0);
    const s = await deployment.add({ log });
    process.kill(deployment.s3.pid, 'SIGSTOP');
    try {
      const r = await probe(s, '/readyz');
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ status: 'not_ready', checks: { database: 'ok', storage: 'timeout' } });
      expect(errors.some((e) => e.includes('readiness: storage did not answer in time'))).toBe(true);
    } finally {
      process.kill(deployment.s3.pid, 'SIGCONT');
    }
  });
});
