// GET /v1/me (extension): who the token belongs to. And a server without it answers /v1/me
// exactly like any unknown route, which is what the app meets on a server with only the brief.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError } from '../helpers/api';
import { startTestServer, type TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';

describe('GET /v1/me', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTarget();
  });
  afterAll(() => s.stop());

  it("answers the token's user id, for each user", async () => {
    const alice = await client(() => s.baseUrl, s.tokens.alice).get('/v1/me');
    expect(alice.status).toBe(200);
    expect(alice.body).toEqual({ id: 'alice' });
    expect(alice.headers.get('cache-control')).toBe('no-store');
    expect((await client(() => s.baseUrl, s.tokens.bob).get('/v1/me')).body).toEqual({ id: 'bob' });
  });

  it('needs a token (401 with WWW-Authenticate)', async () => {
    const anonymous = client(() => s.baseUrl);
    const none = await anonymous.get('/v1/me');
    expectError(none, 401, 'unauthenticated');
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expectError(await anonymous.get('/v1/me', { token: 'not-a-token' }), 401, 'unauthenticated');
  });

  it('other methods: 405 with Allow; unknown query parameters: 400', async () => {
    const alice = client(() => s.baseUrl, s.tokens.alice);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await alice.call(method, '/v1/me');
      expectError(r, 405, 'method_not_allowed');
      expect(r.headers.get('allow')).toBe('GET');
    }
    expectError(await alice.get('/v1/me?id=bob'), 400, 'parameter_unknown', 'id');
    expectError(await alice.get('/v1/me/x'), 404, 'resource_missing');
  });
});

describe('a server with PARLEY_EXTENSIONS=none', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTarget({ env: { PARLEY_EXTENSIONS: 'none' } });
  });
  afterAll(() => s.stop());

  it('answers /v1/me exactly like an unknown route', async () => {
    const alice = client(() => s.baseUrl, s.tokens.alice);
    for (const method of ['GET', 'POST']) {
      const me = await alice.call(method, '/v1/me');
      const unknown = await alice.call(method, '/v1/nothing-here');
      expectError(me, 404, 'resource_missing');
      expect({ status: me.status, body: me.body }).toEqual({ status: unknown.status, body: unknown.body });
    }
    const anonymous = client(() => s.baseUrl);
    const me = await anonymous.get('/v1/me');
    const unknown = await anonymous.get('/v1/nothing-here');
    expect({ status: me.status, body: me.body }).toEqual({ status: unknown.status, body: unknown.body });
  });

  it('ignores Idempotency-Key: a repeat runs again', async () => {
    const alice = client(() => s.baseUrl, s.tokens.alice);
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'plain' } })).body;
    const send = () => alice.upload({ conversation_id: c.id }, { name: 'dup.txt', bytes: 'd' }, { headers: { 'Idempotency-Key': 'same' } });
    const a = await send();
    const b = await send();
    expect(a.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('an embedded server without the uploads extension (PARLEY_EXTENSIONS=idempotency,me)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { PARLEY_EXTENSIONS: 'idempotency,me' } });
  });
  afterAll(() => s.stop());

  it('offers no resumable uploads: OPTIONS and POST /v1/uploads answer like an unknown route', async () => {
    const alice = client(() => s.baseUrl, s.tokens.alice);
    for (const method of ['OPTIONS', 'POST']) {
      const uploads = await alice.call(method, '/v1/uploads');
      expectError(uploads, 404, 'resource_missing');
      expect(uploads.headers.get('tus-version')).toBeNull();
    }
  });
});
