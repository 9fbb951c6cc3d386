// Proxy mode against real servers on loopback: an embedded upstream for the contract, and raw
// upstreams that record, stall, vanish or misbehave for everything the contract does not cover.
import { createHash } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { isApiPath } from '../../lib/api/http/node-server';
import { createProxy } from '../../lib/proxy/proxy';
import { readConfig } from '../../lib/config';
import { client } from '../helpers/api';
import { startProxy, type ProxyServer } from '../helpers/proxy-target';
import { startTestServer, TEST_TOKENS, type TestServer } from '../helpers/server';
import { rawRequest, rawSocketRequest, startBlackhole, startRecordingUpstream, timed, type FakeUpstream } from './fakes';

const MiB = 1024 * 1024;
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const stop of cleanup.splice(0).reverse()) await stop();
});

async function upstreamServer(env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer({ env });
  cleanup.push(() => s.stop());
  return s;
}
async function recording(handler?: Parameters<typeof startRecordingUpstream>[0]): Promise<FakeUpstream> {
  const u = await startRecordingUpstream(handler);
  cleanup.push(() => u.stop());
  return u;
}
async function proxyTo(url: string, env: Record<string, string> = {}): Promise<ProxyServer> {
  const p = await startProxy(url, env);
  cleanup.push(() => p.stop());
  return p;
}

/** `total` bytes of a deterministic pattern, generated on demand; `gate(sent)` may hold it back. */
function pattern(total: number, gate: (sent: number) => Promise<void> = async () => {}): Readable {
  return Readable.from(
    (async function* () {
      const chunk = Buffer.alloc(MiB);
      for (let sent = 0, n = 0; sent < total; n++) {
        await gate(sent);
        chunk.fill(n % 251);
        const size = Math.min(MiB, total - sent);
        sent += size;
        yield Buffer.from(chunk.subarray(0, size));
      }
    })(),
  );
}
function patternHash(total: number): string {
  const hash = createHash('sha256');
  for (let sent = 0, n = 0; sent < total; n++, sent += MiB) hash.update(Buffer.alloc(Math.min(MiB, total - sent), n % 251));
  return hash.digest('hex');
}

describe('forwarding to an embedded upstream', () => {
  it('serves the contract through the proxy, with file_urls moved onto the proxy and their bytes served', async () => {
    const up = await upstreamServer();
    const proxy = await proxyTo(up.baseUrl);
    const alice = client(() => proxy.baseUrl, TEST_TOKENS.alice);
    const c = await alice.post('/v1/conversations', { json: { contact_id: 'via-proxy' } });
    expect(c.status).toBe(201);
    const f = await alice.upload({ conversation_id: c.body.id }, { name: 'hello world.txt', bytes: 'hello through the proxy' });
    expect(f.status).toBe(201);
    expect(f.body.file_url.startsWith(`${proxy.baseUrl}/files/hello%20world.txt?id=${f.body.id}&sig=`)).toBe(true);
    // the list and the retrieve say the same; the upstream itself still says its own origin
    expect((await alice.get(`/v1/files?conversation_id=${c.body.id}`)).body.data[0].file_url).toBe(f.body.file_url);
    expect((await alice.get(`/v1/files/${f.body.id}`)).body.file_url).toBe(f.body.file_url);
    expect((await client(() => up.baseUrl, TEST_TOKENS.alice).get(`/v1/files/${f.body.id}`)).body.file_url.startsWith(up.baseUrl)).toBe(true);

    const whole = await fetch(f.body.file_url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await whole.text()).toBe('hello through the proxy');
    const range = await fetch(f.body.file_url, { headers: { range: 'bytes=6-12' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe('bytes 6-12/23');
    expect(await range.text()).toBe('through');
    const etag = whole.headers.get('etag')!;
    expect((await fetch(f.body.file_url, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const head = await fetch(f.body.file_url, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe('23');
    // a bad signature is the upstream's 404, passed on
    expect((await fetch(f.body.file_url.replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`))).status).toBe(404);
  });

  it("passes the upstream's errors and their headers on unchanged", async () => {
    const up = await upstreamServer();
    const proxy = await proxyTo(up.baseUrl);
    const anonymous = await client(() => proxy.baseUrl).get('/v1/conversations');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(anonymous.body.code).toBe('unauthenticated');
    const wrongMethod = await client(() => proxy.baseUrl, TEST_TOKENS.alice).call('PATCH', '/v1/conversations');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
  });

  it('answers an over-limit upload with the upstream 413 while the browser is still sending', async () => {
    const up = await upstreamServer({ MAX_UPLOAD_BYTES: String(MiB) });
    const proxy = await proxyTo(up.baseUrl);
    const alice = client(() => proxy.baseUrl, TEST_TOKENS.alice);
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'big' } })).body;
    const r = await alice.upload({ conversation_id: c.id }, { name: 'big.bin', bytes: new Uint8Array(8 * MiB) });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('file_too_large');
  });
});

describe('UPSTREAM_TOKEN', () => {
  it('replaces whatever Authorization the browser sent; without it, Authorization passes through', async () => {
    const up = await recording();
    const withToken = await proxyTo(up.url, { UPSTREAM_TOKEN: 'upstream-secret' });
    await rawRequest(withToken.port, '/v1/conversations');
    await rawRequest(withToken.port, '/v1/conversations', { headers: { authorization: 'Bearer browser-token' } });
    await rawRequest(withToken.port, '/v1/conversations', { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    const plain = await proxyTo(up.url);
    await rawRequest(plain.port, '/v1/conversations', { headers: { authorization: 'Bearer browser-token' } });
    await rawRequest(plain.port, '/v1/conversations');
    expect(up.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer upstream-secret',
      'Bearer upstream-secret',
      'Bearer upstream-secret',
      'Bearer browser-token',
      undefined,
    ]);
  });

  it('works end to end: a browser without a token acts as the token’s user, and never sees the token', async () => {
    const up = await upstreamServer();
    const proxy = await proxyTo(up.baseUrl, { UPSTREAM_TOKEN: TEST_TOKENS.alice });
    const browser = client(() => proxy.baseUrl);
    const c = await browser.post('/v1/conversations', { json: { contact_id: 'token-user' } });
    expect(c.status).toBe(201);
    expect(c.text).not.toContain(TEST_TOKENS.alice);
    expect((await client(() => up.baseUrl, TEST_TOKENS.alice).get(`/v1/conversations/${c.body.id}`)).status).toBe(200);
    expect((await client(() => proxy.baseUrl, 'anything-at-all').get(`/v1/conversations/${c.body.id}`)).status).toBe(200);
  });

  it('sends no credentials to /files, which its signature authorises', async () => {
    const up = await recording();
    const proxy = await proxyTo(up.url, { UPSTREAM_TOKEN: 'upstream-secret' });
    await rawRequest(proxy.port, '/files/x.txt?id=AbCdEf0123456789&sig=s', { headers: { authorization: 'Bearer browser' } });
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]!.url).toBe('/files/x.txt?id=AbCdEf0123456789&sig=s');
    expect(up.requests[0]!.headers.authorization).toBeUndefined();
  });
});

describe('paths: only /v1 and /files on the one configured upstream', () => {
  const escapes = [
    '/v1/../admin',
    '/v1/%2e%2e/x',
    '/v1/%2E%2E/%2e%2e/admin',
    '/v1/..%2fadmin',
    '/v1/x%5c..%5cadmin',
    '/v1\\..\\admin',
    '/v1//evil.example/v1',
    '/v1/conversations/%2e%2e%2f%2e%2e%2fadmin',
    '/files/../v1/conversations',
    '/files/%2e%2e/admin',
    '//evil.example/v1',
    '/admin',
  ];

  it('refuses escapes with a 404 (a network-path target: 400 at the front) and forwards nothing; a safe path lands under the base path', async () => {
    const up = await recording();
    const proxy = await proxyTo(`${up.url}/base`);
    for (const path of escapes) {
      const r = await rawRequest(proxy.port, path);
      // The front refuses a target that is not a single-slash path before any routing.
      if (path.startsWith('//')) {
        expect(r.status, path).toBe(400);
        expect(JSON.parse(r.text).code, path).toBe('parameter_invalid');
        continue;
      }
      expect(r.status, path).toBe(404);
      // paths the server routes to the proxy get the contract's error shape; others never reach it
      if (isApiPath(path)) expect(JSON.parse(r.text).code, path).toBe('resource_missing');
    }
    expect(up.requests).toEqual([]);
    await rawRequest(proxy.port, '/v1/conversations?limit=2&pinned=true');
    expect(up.requests.map((r) => r.url)).toEqual(['/base/v1/conversations?limit=2&pinned=true']);
  });

  it('refuses an absolute-form request target; the Host header chooses nothing either', async () => {
    const up = await recording();
    const decoy = await recording(); // "another host": must never be contacted
    // The decoy's name is an allowed Host here, so the request passes the Host check and the test
    // shows that an allowed Host still chooses nothing about where the proxy forwards.
    const proxy = await proxyTo(up.url, { ALLOWED_HOSTS: `127.0.0.1:${decoy.port}` });
    const absolute = await rawSocketRequest(
      proxy.port,
      `GET ${decoy.url}/v1/conversations HTTP/1.1\r\nHost: 127.0.0.1:${decoy.port}\r\nConnection: close\r\n\r\n`,
    );
    expect(absolute).toMatch(/^HTTP\/1\.1 400/); // the front: a target that is not a path
    const viaHost = await rawRequest(proxy.port, '/v1/conversations', { headers: { host: `127.0.0.1:${decoy.port}` } });
    expect(viaHost.status).toBe(200);
    expect(decoy.requests).toEqual([]);
    expect(up.requests.map((r) => [r.url, r.headers.host])).toEqual([['/v1/conversations', `127.0.0.1:${up.port}`]]);
  });

  it('dispatch itself refuses targets that name a host, whatever server calls it', async () => {
    const up = await recording();
    const proxy = createProxy(readConfig({ UPSTREAM_BASE_URL: up.url }), { log: () => {}, error: () => {} });
    cleanup.push(() => proxy.close());
    for (const path of ['http://evil.example/v1/conversations', '//evil.example/v1/conversations', 'v1/conversations']) {
      const reply = await proxy.dispatch({
        method: 'GET',
        path,
        query: new URLSearchParams(),
        scheme: 'http',
        host: 'localhost',
        localPort: 80,
        header: () => null,
        body: null,
      });
      expect(reply.status, path).toBe(404);
      expect(JSON.parse(reply.body as string)).toMatchObject({ type: 'invalid_request', code: 'resource_missing' });
    }
    expect(up.requests).toEqual([]);
  });
});

describe('upstream failures', () => {
  const fast = { UPSTREAM_CONNECT_TIMEOUT_MS: '300', UPSTREAM_IDLE_TIMEOUT_MS: '300' };

  it('a stopped upstream: 502 upstream_unavailable at once, even with a pooled connection to it', async () => {
    const up = await startTestServer();
    // A connect timeout far beyond anything a loaded machine adds: waiting for it instead of taking the
    // refusal would show as a 504 upstream_timeout (or the test's own timeout), never as this 502.
    const proxy = await proxyTo(up.baseUrl, { UPSTREAM_CONNECT_TIMEOUT_MS: '120000' });
    const alice = client(() => proxy.baseUrl, TEST_TOKENS.alice);
    expect((await alice.get('/v1/conversations')).status).toBe(200);
    await up.stop();
    const r = await alice.get('/v1/conversations');
    expect(r.status).toBe(502);
    expect(r.body).toEqual({ type: 'api_error', code: 'upstream_unavailable', message: expect.any(String) });
    // and it comes back when the upstream does
    await up.restart();
    cleanup.push(() => up.stop());
    expect((await alice.get('/v1/conversations')).status).toBe(200);
  });

  it('a pooled connection the upstream dropped: a bodyless request is retried once on a new one, a body is not', async () => {
    // Every second request on a connection is met with a reset: what a keep-alive race looks like.
    const served = new WeakMap<object, number>();
    const up = await recording((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      if (n === 2) return req.socket.destroy();
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    const proxy = await proxyTo(up.url);
    const alice = client(() => proxy.baseUrl, TEST_TOKENS.alice);
    expect((await alice.get('/v1/conversations')).status).toBe(200);
    expect((await alice.get('/v1/conversations')).status).toBe(200);
    expect(up.requests).toHaveLength(3);
    const post = await alice.post('/v1/conversations', { json: { contact_id: 'x' } });
    expect(post.status).toBe(502);
    expect(up.requests).toHaveLength(4);
  });

  it('a connect that never completes: 504 upstream_timeout after the connect timeout', async () => {
    const hole = await startBlackhole();
    cleanup.push(() => hole.stop());
    const proxy = await proxyTo(hole.url, { ...fast, UPSTREAM_IDLE_TIMEOUT_MS: '30000' });
    const { value: r, ms } = await timed(() => withDeadline(rawRequest(proxy.port, '/v1/conversations'), 20_000, 'the proxy hung'));
    expect(r.status).toBe(504);
    expect(JSON.parse(r.text)).toMatchObject({ type: 'api_error', code: 'upstream_timeout' });
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(15_000); // the configured 300 ms fired, not the other timeout of 30 s
  });

  it('an upstream that accepts but never answers: 504 upstream_timeout after the idle timeout', async () => {
    const up = await recording((req) => req.resume()); // reads the request, answers nothing, ever
    const proxy = await proxyTo(up.url, { ...fast, UPSTREAM_CONNECT_TIMEOUT_MS: '30000' });
    const { value: r, ms } = await timed(() =>
      rawRequest(proxy.port, '/v1/conversations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
    );
    expect(r.status).toBe(504);
    expect(JSON.parse(r.text)).toMatchObject({ type: 'api_error', code: 'upstream_timeout' });
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(15_000); // the configured 300 ms fired, not the other timeout of 30 s
    expect(up.requests).toHaveLength(1);
  });

  it('an upstream that stalls mid-response: the browser’s response is broken off after the idle timeout', async () => {
    const up = await recording((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000' }).write('x'.repeat(100));
    });
    const proxy = await proxyTo(up.url, fast);
    const outcome = await readWhole(proxy.port, '/files/a.bin?id=AbCdEf0123456789&sig=s');
    expect(outcome).toEqual({ status: 200, received: 100, complete: false }); // without the idle timeout, this never ends
  });

  it('an upstream that dies mid-response: the browser’s response is destroyed, not ended as if complete', async () => {
    const up = await recording((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: only a clean end marks it complete
      res.write('{"has_more":false,"data":[');
      setTimeout(() => res.socket!.destroy(), 50);
    });
    const proxy = await proxyTo(up.url);
    expect(await readWhole(proxy.port, '/v1/conversations')).toMatchObject({ status: 200, complete: false });
    // /v1/files answers are read whole to rewrite file_url: there the same failure is a 502
    const files = await rawRequest(proxy.port, '/v1/files');
    expect(files.status).toBe(502);
    expect(JSON.parse(files.text).code).toBe('upstream_unavailable');
  });

  it('a browser that goes away mid-upload takes the upstream request with it', async () => {
    let upstreamAborted: () => void;
    const aborted = new Promise<void>((resolve) => (upstreamAborted = resolve));
    const up = await recording((req) => {
      req.resume();
      req.on('close', () => {
        if (!req.complete) upstreamAborted();
      });
    });
    const proxy = await proxyTo(up.url);
    const req = http.request({ host: '127.0.0.1', port: proxy.port, path: '/v1/files', method: 'POST', agent: false, headers: { 'content-length': String(10 * MiB) } });
    req.on('error', () => {});
    req.write(Buffer.alloc(MiB));
    await waitFor(() => up.requests.length === 1);
    req.destroy();
    await withDeadline(aborted, 2000, 'the upstream request was not aborted');
  });
});

describe('headers', () => {
  it('drops hop-by-hop headers both ways and passes end-to-end ones', async () => {
    const up = await recording((req, res) => {
      req.resume();
      res.writeHead(429, {
        'Content-Type': 'application/json',
        Connection: 'keep-alive, X-Upstream-Private',
        'X-Upstream-Private': 'internal',
        'Keep-Alive': 'timeout=99',
        'Proxy-Authenticate': 'Basic',
        Trailer: 'X-Checksum',
        Upgrade: 'h2c',
        'Set-Cookie': 'upstream_session=1',
        'Retry-After': '7',
        'Idempotent-Replayed': 'true',
        'X-Request-Id': 'r1',
      });
      res.end('{"type":"invalid_request","code":"rate_limited","message":"slow down"}');
    });
    const proxy = await proxyTo(up.url);
    const r = await rawRequest(proxy.port, '/v1/conversations', {
      method: 'POST',
      headers: {
        Connection: 'keep-alive, X-Hop, Idempotency-Key',
        'X-Hop': '1',
        'Keep-Alive': 'timeout=5',
        TE: 'trailers',
        'Proxy-Authorization': 'Basic cHJveHk6c2VjcmV0',
        Cookie: 'app_session=1',
        'Idempotency-Key': 'dropped-because-connection-names-it',
        'Content-Type': 'application/json',
        'X-Request-Id': 'r1',
      },
      body: '{"contact_id":"x"}',
    });
    const seen = up.requests[0]!.headers;
    for (const name of ['x-hop', 'te', 'proxy-authorization', 'cookie', 'idempotency-key', 'upgrade']) expect(seen[name], name).toBeUndefined();
    expect(seen['keep-alive']).toBeUndefined();
    expect(seen['content-type']).toBe('application/json');
    expect(seen['content-length']).toBe('18');
    expect(seen['x-request-id']).toBe('r1');

    expect(r.status).toBe(429);
    for (const name of ['x-upstream-private', 'proxy-authenticate', 'trailer', 'upgrade', 'set-cookie']) expect(r.headers[name], name).toBeUndefined();
    expect(r.headers['keep-alive']).not.toBe('timeout=99'); // the proxy's own, if any
    expect(r.headers['retry-after']).toBe('7');
    expect(r.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(r.text).code).toBe('rate_limited');
  });

  it('passes Idempotency-Key, and the upstream replays through the proxy', async () => {
    const up = await upstreamServer();
    const proxy = await proxyTo(up.baseUrl);
    const alice = client(() => proxy.baseUrl, TEST_TOKENS.alice);
    const once = { json: { contact_id: 'idem' }, headers: { 'idempotency-key': 'op-1' } };
    const first = await alice.post('/v1/conversations', once);
    const again = await alice.post('/v1/conversations', once);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('streaming', () => {
  it('streams a 50 MiB upload: the upstream gets bytes while the browser is still sending, all of them intact', async () => {
    const total = 50 * MiB;
    let received = 0;
    const hash = createHash('sha256');
    const up = await recording((req, res) => {
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        hash.update(chunk);
      });
      req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ received, sha256: hash.digest('hex') })));
    });
    const proxy = await proxyTo(up.url);
    // Never more than 16 MiB ahead of the upstream: a proxy that buffered the body would deadlock here.
    const body = pattern(total, (sent) => withDeadline(waitFor(() => received >= sent - 16 * MiB), 10_000, `upstream stuck at ${received} bytes`));
    const response = await fetch(`${proxy.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(total) },
      body: Readable.toWeb(body) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ received: total, sha256: patternHash(total) });
    expect(up.requests[0]!.headers['content-length']).toBe(String(total));
  });

  it('streams a response: the browser gets the first bytes before the upstream has sent the rest', async () => {
    let firstSeen: () => void;
    const seen = new Promise<void>((resolve) => (firstSeen = resolve));
    const up = await recording(async (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(64 * 1024, 1));
      await withDeadline(seen, 5000, 'the proxy held the first chunk back').catch(() => res.destroy());
      res.end(Buffer.alloc(64 * 1024, 2));
    });
    const proxy = await proxyTo(up.url);
    const response = await fetch(`${proxy.baseUrl}/files/big.bin?id=AbCdEf0123456789&sig=s`);
    const reader = response.body!.getReader();
    let total = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      total += r.value.length;
      firstSeen!();
    }
    expect(total).toBe(128 * 1024);
  });
});

describe('check()', () => {
  it('reports an upstream that answers (any status) and one that does not, without throwing', async () => {
    const up = await upstreamServer();
    const lines: string[] = [];
    const log = { log: (s: string) => lines.push(s), error: (s: string) => lines.push(s) };
    const withToken = createProxy(readConfig({ UPSTREAM_BASE_URL: up.baseUrl, UPSTREAM_TOKEN: TEST_TOKENS.bob }), log);
    const without = createProxy(readConfig({ UPSTREAM_BASE_URL: up.baseUrl }), log);
    // Nothing listens on port 9: the refusal is the answer, long before the connect timeout.
    const down = createProxy(readConfig({ UPSTREAM_BASE_URL: 'http://127.0.0.1:9', UPSTREAM_CONNECT_TIMEOUT_MS: '120000' }), log);
    cleanup.push(() => [withToken, without, down].forEach((p) => p.close()));
    expect(await withToken.check()).toMatchObject({ answers: true, status: 200, error: null });
    expect(await without.check()).toMatchObject({ answers: true, status: 401 });
    const failed = await down.check();
    expect(failed).toMatchObject({ answers: false, status: null });
    expect(failed.error).not.toMatch(/timeout/);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/does not answer/);
  });
});

// ---- small helpers ----

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 2));
}

function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms))),
  ]);
}

/** Reads a response to its end or its breaking off; `complete` says which. */
function readWhole(port: number, path: string): Promise<{ status: number; received: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let received = 0;
        res.on('data', (c: Buffer) => (received += c.length));
        res.on('end', () => resolve({ status: res.statusCode!, received, complete: res.complete }));
        res.on('error', () => resolve({ status: res.statusCode!, received, complete: false }));
      })
      .on('error', reject);
  });
}
