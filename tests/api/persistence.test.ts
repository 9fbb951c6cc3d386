import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { ApiService } from '../../lib/api/service';
import { runCommand } from '../helpers/cli';
import { client } from '../helpers/api';
import { startTarget } from '../helpers/target';
import { tempDataDir, type TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;

beforeAll(async () => {
  // Restarts here play a start long after a crash: the start-up sweep takes what is older than
  // its grace period (an hour by default, as another instance may be uploading; tests/ops/instances).
  s = await startTarget({ sweepGraceMs: 0 });
  alice = client(() => s.baseUrl, s.tokens.alice);
});
afterAll(() => s.stop());

const assetPath = (fileUrl: string) => new URL(fileUrl).pathname + new URL(fileUrl).search;

describe('persistence', () => {
  it('data and signed URLs survive a restart of the server', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'durable' } })).body;
    const pinned = (await alice.put(`/v1/conversations/${c.id}`, { json: { is_pinned: true } })).body;
    const f = (await alice.upload({ conversation_id: c.id }, { name: 'kept.txt', bytes: 'still here' })).body;
    await s.restart();
    expect((await alice.get(`/v1/files/${f.id}`)).body).toEqual(f);
    expect((await alice.get(`/v1/conversations/${c.id}`)).body).toMatchObject({ ...pinned, last_active_at: expect.any(Number) });
    const bytes = await client(() => s.baseUrl).get(assetPath(f.file_url));
    expect(bytes.status).toBe(200);
    expect(bytes.text).toBe('still here');
    // the sequence continues after a restart: a new item is still first
    const newer = (await alice.post('/v1/conversations', { json: { contact_id: 'after-restart' } })).body;
    expect((await alice.get('/v1/conversations?limit=1')).body.data[0].id).toBe(newer.id);
  });

  it('the start-up sweep removes orphaned bytes and temporary files, keeps live ones', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'sweep' } })).body;
    const f = (await alice.upload({ conversation_id: c.id }, { name: 'live.txt', bytes: 'live' })).body;
    // What a crash leaves: bytes stored whose row never committed, and an unfinished write (a
    // half-written temp file on disk, an incomplete multipart upload in a bucket).
    await s.blobs.plantOrphan('zzOrphanKeyWithoutRow000', 'orphan');
    await s.blobs.plantUnfinished();
    expect(await s.blobs.stored()).toContain('zzOrphanKeyWithoutRow000');
    expect(await s.blobs.unfinished()).toHaveLength(1);
    await s.restart();
    expect(await s.blobs.stored()).not.toContain('zzOrphanKeyWithoutRow000');
    expect(await s.blobs.unfinished()).toEqual([]);
    expect((await client(() => s.baseUrl).get(assetPath(f.file_url))).text).toBe('live');
  });
});

describe('tokens', () => {
  it('first start with no tokens at all creates one for "demo"; later starts do not', async () => {
    const dataDir = tempDataDir();
    const config = readConfig({ DATA_DIR: dataDir });
    const quiet = { log: () => {}, error: () => {} };
    const first = await ApiService.open(config, quiet);
    expect(first.info.demoToken).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    const res = await first.service.handle(
      new Request('http://localhost/v1/conversations', { headers: { authorization: `Bearer ${first.info.demoToken}` } }),
    );
    expect(res.status).toBe(200);
    await first.service.close();
    const second = await ApiService.open(config, quiet);
    expect(second.info.demoToken).toBeNull();
    await second.service.close();
    // with static tokens configured, no demo token is made
    const seeded = await ApiService.open(readConfig({ DATA_DIR: tempDataDir(), PARLEY_TOKENS: 'x:y' }), quiet);
    expect(seeded.info.demoToken).toBeNull();
    await seeded.service.close();
  });

  it('npm run token create/list/revoke manages stored tokens, kept only as hashes', async () => {
    const dataDir = tempDataDir();
    const env = { DATA_DIR: dataDir };
    const created = await runCommand('token', ['create', '--user', 'carol', '--label', 'phone'], env);
    const token = created.out.trim();
    expect(token).toMatch(/^pk_/);
    const listed = await runCommand('token', ['list'], env);
    expect(listed.out).toMatch(/carol/);
    expect(listed.out).not.toContain(token);
    const sqlite = fs.readFileSync(path.join(dataDir, 'parley.sqlite'));
    expect(sqlite.includes(Buffer.from(token))).toBe(false);

    const quiet = { log: () => {}, error: () => {} };
    const open = () => ApiService.open(readConfig({ DATA_DIR: dataDir }), quiet);
    const ask = (service: ApiService) =>
      service.handle(new Request('http://localhost/v1/files', { headers: { authorization: `Bearer ${token}` } }));
    let { service } = await open();
    expect((await ask(service)).status).toBe(200);
    await service.close();
    const id = listed.out.trim().split(/\s+/)[0]!;
    expect((await runCommand('token', ['revoke', id], env)).code).toBe(0);
    ({ service } = await open());
    expect((await ask(service)).status).toBe(401);
    await service.close();
  });
});
