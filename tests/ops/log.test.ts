// The request log: one JSON line per request, with the request id (a sane incoming X-Request-Id
// kept, else a new one, returned either way), method, route template, status, duration and user
// — and never a token, a signature, a query string, an id or a file name in a path, or file
// contents. Errors are JSON records carrying the request id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLog } from '../../lib/api/http/log';
import { DiskBlobStore } from '../../lib/api/storage/disk-blob-store';
import type { ByteRange } from '../../lib/api/storage/blob-store';
import { client } from '../helpers/api';
import { startTestServer, type TestServer } from '../helpers/server';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A disk store whose reads fail for one file name: an unexpected error while serving bytes. */
class BrokenReads extends DiskBlobStore {
  broken = new Set<string>();
  override open(key: string, range?: ByteRange) {
    if (this.broken.has(key)) return Promise.reject(new Error('the disk is on fire'));
    return super.open(key, range);
  }
}

let s: TestServer;
let store: BrokenReads;
const out: string[] = [];
const err: string[] = [];

beforeAll(async () => {
  s = await startTestServer({
    log: jsonLog({ out: (line) => out.push(line), err: (line) => err.push(line) }),
    store: (dataDir) => (store = new BrokenReads(dataDir)),
  });
});
afterAll(() => s?.stop());

const records = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, any>);
const requestRecords = () => records(out).filter((r) => r.msg === 'request');
const recordOf = (id: string) => requestRecords().find((r) => r.request_id === id);

describe('request log', () => {
  it('one JSON record per request: id, method, route template, status, duration, user; no secrets', async () => {
    const alice = client(() => s.baseUrl, s.tokens.alice);
    const secretContent = 'FILE-CONTENT-never-logged-7731';
    const fileName = 'secret-plan-name-5521.txt';
    const c = await alice.post('/v1/conversations', { json: { contact_id: 'logged' } });
    const f = await alice.upload({ conversation_id: c.body.id }, { name: fileName, bytes: secretContent });
    expect(f.status).toBe(201);
    const url = new URL(f.body.file_url);
    const sig = url.searchParams.get('sig')!;
    const download = await client(() => s.baseUrl).get(url.pathname + url.search);
    expect(download.text).toBe(secretContent);
    const one = await alice.get(`/v1/files/${f.body.id}?sig=${sig}`); // an unknown parameter: refused, never logged
    expect(one.status).toBe(400);
    const refused = await client(() => s.baseUrl, 'pk_not-a-real-token-but-secret-9182').get('/v1/conversations');
    expect(refused.status).toBe(401);
    // Every path of the route table is logged by its template (the table is the one list of them);
    // a /v1 path no route has, as /v1/*.
    const device = await alice.get('/v1/me/devices/dev_never-logged-4410');
    const nowhere = await alice.get('/v1/no-such-thing/secret-4411');
    expect(nowhere.status).toBe(404);

    for (const r of [c, f, download, one, refused, device, nowhere]) expect(r.headers.get('x-request-id')).toMatch(UUID);
    expect(recordOf(c.headers.get('x-request-id')!)).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/v1/conversations',
      status: 201,
      user_id: 'alice',
      duration_ms: expect.any(Number),
      time: expect.any(String),
    });
    expect(recordOf(f.headers.get('x-request-id')!)).toMatchObject({ method: 'POST', route: '/v1/files', status: 201, user_id: 'alice' });
    expect(recordOf(download.headers.get('x-request-id')!)).toMatchObject({ method: 'GET', route: '/files/:id/:name', status: 200, user_id: null });
    expect(recordOf(one.headers.get('x-request-id')!)).toMatchObject({ method: 'GET', route: '/v1/files/:id', status: 400, user_id: 'alice' });
    expect(recordOf(refused.headers.get('x-request-id')!)).toMatchObject({ route: '/v1/conversations', status: 401, user_id: null });
    expect(recordOf(device.headers.get('x-request-id')!)).toMatchObject({ method: 'GET', route: '/v1/me/devices/:id' });
    expect(recordOf(nowhere.headers.get('x-request-id')!)).toMatchObject({ method: 'GET', route: '/v1/*', status: 404 });

    const everything = [...out, ...err].join('\n');
    for (const secret of [s.tokens.alice, 'pk_not-a-real-token-but-secret-9182', sig, 'sig=', secretContent, fileName, f.body.id, c.body.id, 'dev_never-logged-4410', 'secret-4411']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('keeps a sane incoming X-Request-Id, replaces one that is not', async () => {
    const anon = client(() => s.baseUrl);
    const kept = await anon.get('/healthz', { headers: { 'x-request-id': 'edge-7f3a.42:trace' } });
    expect(kept.headers.get('x-request-id')).toBe('edge-7f3a.42:trace');
    expect(recordOf('edge-7f3a.42:trace')).toMatchObject({ route: '/healthz', status: 200 });
    for (const insane of ['has space', 'x'.repeat(129), '"quoted"', 'line\u00e9']) {
      const r = await anon.get('/healthz', { headers: { 'x-request-id': insane } });
      expect(r.headers.get('x-request-id')).toMatch(UUID);
      expect(out.join('\n')).not.toContain(insane);
    }
  });

  it('an unexpected error is one JSON record with the request id, the route template and the error', async () => {
    const alice = client(() => s.baseUrl, s.tokens.alice);
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'broken-read' } })).body;
    const f = (await alice.upload({ conversation_id: c.id }, { name: 'unreadable.txt', bytes: 'x' })).body;
    const key = (await s.service.db.selectFrom('files').select('storage_key').where('id', '=', f.id).executeTakeFirstOrThrow()).storage_key;
    store.broken.add(key);
    const url = new URL(f.file_url);
    const r = await client(() => s.baseUrl).get(url.pathname + url.search, { headers: { 'x-request-id': 'failing-read-1' } });
    expect(r.status).toBe(500);
    const error = records(err).find((e) => e.request_id === 'failing-read-1');
    expect(error).toMatchObject({
      level: 'error',
      msg: 'internal error',
      method: 'GET',
      route: '/files/:id/:name',
      error: { name: 'Error', message: 'the disk is on fire' },
    });
    expect(recordOf('failing-read-1')).toMatchObject({ status: 500 });
    expect(err.join('\n')).not.toContain('unreadable.txt');
    expect(err.join('\n')).not.toContain(url.searchParams.get('sig')!);
  });
});
