// Requests the front serves nobody (issue 17): an upgrade to any path (no WebSocket here), `*`
// and absolute-form request targets. Each gets 400 in the contract's shape through the front —
// logged like any request — and its connection is closed. The fallback plays Next: on its first
// request it adds an `upgrade` listener to the server that never answers (what Next's custom
// server does), and it answers `*` with a 500 and an absolute URL with a redirect to that host.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { createHttpServer, listen } from '../../lib/api/http/node-server';
import { jsonLog } from '../../lib/api/http/log';
import { rawRequest } from '../helpers/raw-http';

let server: http.Server;
let port: number;
const out: string[] = [];
let dispatched = 0;

beforeAll(async () => {
  let nextListening = false;
  server = createHttpServer(
    async () => {
      dispatched++;
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{}' };
    },
    (req, res) => {
      if (!nextListening) {
        nextListening = true;
        (req.socket as unknown as { server: http.Server }).server.on('upgrade', () => {}); // takes the socket, never answers
      }
      if (req.url === '*') return void res.writeHead(500).end('Error: at Object.<anonymous> (stack trace)');
      if (/^https?:/.test(req.url ?? '')) return void res.writeHead(308, { Location: req.url }).end();
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>page</p>');
    },
    readConfig({}),
    { log: jsonLog({ out: (line) => out.push(line), err: () => {} }) },
  );
  port = await listen(server, 0, '127.0.0.1');
  // A page request first, so that the fallback ("Next") has added its upgrade listener.
  expect((await rawRequest(port, 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')).status).toBe(200);
});
afterAll(() => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
}));

function expectRefused(answer: Awaited<ReturnType<typeof rawRequest>>, param?: string) {
  expect(answer.status, answer.text).toBe(400);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers.location).toBeUndefined();
  const body = JSON.parse(answer.body);
  expect(body).toMatchObject({ type: 'invalid_request', code: 'parameter_invalid' });
  if (param) expect(body.param).toBe(param);
  expect(answer.body).not.toMatch(/at .*\(|stack/i);
  expect(answer.closedByServer).toBe(true);
}

const requestLog = () => out.map((line) => JSON.parse(line)).filter((r) => r.msg === 'request');

describe('requests the front does not serve', () => {
  it.each([
    ['a WebSocket upgrade of a page path', '/'],
    ['a WebSocket upgrade of an API path, no token', '/v1/conversations'],
    ['a WebSocket upgrade of Next\'s own path', '/_next/webpack-hmr'],
  ])('%s: 400 in the contract\'s shape, logged, connection closed', async (_name, path) => {
    const before = dispatched;
    const answer = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    expectRefused(answer, 'Upgrade');
    expect(dispatched).toBe(before); // the core never saw it
    expect(requestLog().some((r) => r.request_id === answer.headers['x-request-id'] && r.status === 400)).toBe(true);
  });

  it('an upgrade sent by a client that then goes quiet is still answered and closed (no socket kept)', async () => {
    const answer = await rawRequest(port, 'GET /anything HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n');
    expectRefused(answer);
    expect(await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)))).toBe(0);
  });

  it.each([
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n'],
    ['GET *', 'GET * HTTP/1.1\r\nHost: localhost\r\n\r\n'],
    ['an absolute-form target to another host', 'GET http://evil.example/v1/me HTTP/1.1\r\nHost: evil.example\r\n\r\n'],
    ['an absolute-form target to a page', 'GET http://evil.example/ HTTP/1.1\r\nHost: localhost\r\n\r\n'],
    ['a target that is not a path', 'GET evil.example/v1/me HTTP/1.1\r\nHost: localhost\r\n\r\n'],
    ['a network-path target', 'GET //evil.example/v1/me HTTP/1.1\r\nHost: localhost\r\n\r\n'],
  ])('%s: 400 in the contract\'s shape, no redirect, connection closed', async (_name, request) => {
    expectRefused(await rawRequest(port, request));
  });

  it('ordinary requests are served as before, on a kept-alive connection', async () => {
    const before = dispatched;
    const answer = await rawRequest(port, 'GET /v1/me HTTP/1.1\r\nHost: localhost\r\n\r\n', 300);
    expect(answer.status).toBe(200);
    expect(dispatched).toBe(before + 1);
    expect(answer.closedByServer).toBe(false);
  });
});
