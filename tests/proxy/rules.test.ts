// The proxy's pure rules: which paths may be forwarded, which headers cross, which URLs move.
import { describe, expect, it } from 'vitest';
import { FileUrlRewriter } from '../../lib/proxy/file-urls';
import { forwardRequestHeaders, forwardResponseHeaders } from '../../lib/proxy/headers';
import { classifyPath } from '../../lib/proxy/path';

describe('classifyPath', () => {
  it.each([
    ['/v1', '/v1'],
    ['/v1/conversations', '/v1'],
    ['/v1/conversations/', '/v1'],
    ['/v1/files/AbCdEf0123456789', '/v1'],
    ['/v1/openapi.json', '/v1'],
    ['/files/report%20final.pdf', '/files'],
    ["/files/it's%20(1).txt", '/files'],
    ['/files/%E2%9C%93.txt', '/files'],
  ])('forwards %s', (path, area) => {
    expect(classifyPath(path)).toBe(area);
  });

  it.each([
    'http://evil.example/v1/conversations',
    'https://evil.example/files/x',
    '//evil.example/v1/conversations',
    'v1/conversations',
    '*',
    '/v1/../admin',
    '/v1/./conversations',
    '/v1/conversations/..',
    '/v1/%2e%2e/admin',
    '/v1/%2E%2e/admin',
    '/v1/.%2e/admin',
    '/v1/%2e/conversations',
    '/v1/..%2fadmin',
    '/v1/x%2F..%2F..%2Fadmin',
    '/v1/x%5c..%5cadmin',
    '/v1\\..\\admin',
    '/v1/\\evil.example',
    '/v1//evil.example/x',
    '/v1/conversations//x',
    '/v1/%00',
    '/v1/%0d%0aHost:%20evil',
    '/v1/%zz',
    '/v1/ space',
    '/v1/conversations#frag',
    '/files/',
    '/files/..',
    '/files/%2e%2e',
    '/files/a%2fb',
    '/files//etc/passwd',
    '/admin',
    '/v10/conversations',
    '/v1evil',
    '/',
  ])('refuses %s', (path) => {
    expect(classifyPath(path)).toBeNull();
  });
});

describe('forwardRequestHeaders', () => {
  const headers = (h: Record<string, string>) => (name: string) => h[name] ?? null;

  it('replaces Authorization with UPSTREAM_TOKEN, or passes the browser one when there is none', () => {
    const browser = headers({ authorization: 'Bearer browser' });
    expect(forwardRequestHeaders(browser, { token: 'up', withAuthorization: true }).authorization).toBe('Bearer up');
    expect(forwardRequestHeaders(headers({}), { token: 'up', withAuthorization: true }).authorization).toBe('Bearer up');
    expect(forwardRequestHeaders(browser, { token: null, withAuthorization: true }).authorization).toBe('Bearer browser');
    expect(forwardRequestHeaders(browser, { token: 'up', withAuthorization: false }).authorization).toBeUndefined();
  });

  it('drops cookies, hop-by-hop headers and anything the Connection header names', () => {
    const out = forwardRequestHeaders(
      headers({
        connection: 'keep-alive, Idempotency-Key',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        upgrade: 'websocket',
        'proxy-authorization': 'Basic x',
        cookie: 'session=1',
        'idempotency-key': 'k1',
        'content-type': 'application/json',
        range: 'bytes=0-1',
      }),
      { token: null, withAuthorization: true },
    );
    expect(out).toEqual({ 'content-type': 'application/json', range: 'bytes=0-1', 'accept-encoding': 'identity' });
  });
});

describe('forwardResponseHeaders', () => {
  it('keeps end-to-end headers and drops hop-by-hop, Connection-named and upstream-only ones', () => {
    const out = forwardResponseHeaders({
      connection: 'keep-alive, x-private',
      'keep-alive': 'timeout=65',
      'transfer-encoding': 'chunked',
      'x-private': 'secret',
      'set-cookie': ['a=1'],
      'retry-after': '3',
      allow: 'GET, POST',
      'www-authenticate': 'Bearer realm="parley"',
      'idempotent-replayed': 'true',
      'content-type': 'application/json',
    });
    expect(out).toEqual({
      'retry-after': '3',
      allow: 'GET, POST',
      'www-authenticate': 'Bearer realm="parley"',
      'idempotent-replayed': 'true',
      'content-type': 'application/json',
    });
  });
});

describe('FileUrlRewriter', () => {
  const app = 'https://app.example';

  it("moves the upstream's /files/ URLs onto the app's origin, keeping name, id and signature", () => {
    const r = new FileUrlRewriter('http://10.0.0.5:8080');
    expect(r.rewrite('http://10.0.0.5:8080/files/a%20b.txt?id=AbCdEf0123456789&sig=x-y_z', app)).toBe(
      'https://app.example/files/a%20b.txt?id=AbCdEf0123456789&sig=x-y_z',
    );
  });

  it('strips the base path of an upstream mounted below the root', () => {
    const r = new FileUrlRewriter('https://api.example/parley');
    expect(r.rewrite('https://api.example/parley/files/x.txt?id=1&sig=2', app)).toBe('https://app.example/files/x.txt?id=1&sig=2');
    // outside the base path the proxy has no route to it: left pointing where it was
    expect(r.rewrite('https://api.example/files/x.txt?id=1&sig=2', app)).toBe('https://api.example/files/x.txt?id=1&sig=2');
  });

  it('leaves URLs on any other host alone (an upstream ASSET_URL, a CDN)', () => {
    const r = new FileUrlRewriter('http://10.0.0.5:8080');
    for (const url of ['https://cdn.example/files/x?id=1&sig=2', 'http://10.0.0.5:9090/files/x?id=1', 'not a url']) {
      expect(r.rewrite(url, app)).toBe(url);
    }
  });

  it('rewrites a File and a page of Files; an error body comes back null (untouched)', () => {
    const r = new FileUrlRewriter('http://up:1');
    const file = (id: string) => ({ id, file_url: `http://up:1/files/${id}.txt?id=${id}&sig=s` });
    expect(JSON.parse(r.rewriteBody(JSON.stringify(file('a')), app)!).file_url).toBe('https://app.example/files/a.txt?id=a&sig=s');
    const page = JSON.parse(r.rewriteBody(JSON.stringify({ has_more: false, data: [file('a'), file('b')] }), app)!);
    expect(page.data.map((f: { file_url: string }) => f.file_url)).toEqual([
      'https://app.example/files/a.txt?id=a&sig=s',
      'https://app.example/files/b.txt?id=b&sig=s',
    ]);
    expect(r.rewriteBody('{"type":"invalid_request","code":"resource_missing","message":"x"}', app)).toBeNull();
    expect(r.rewriteBody('not json', app)).toBeNull();
  });
});
