// The built app as `npm start` serves it, with Next attached (issue 17): Next adds its own
// `upgrade` listener to the server on the first page request, which took every upgrade request and
// never answered it. After a page has been served, upgrade requests to any path, `*` and
// absolute-form targets are answered 400 in the contract's shape by the front, and closed.
// API-level: raw sockets, no page.
import { expect, test } from '@playwright/test';
import { APP_PORT } from '../../playwright.config';
import { rawRequest } from '../helpers/raw-http';

test('npm start: upgrades, "*" and absolute targets get 400 and a closed connection, after Next has served a page', async ({ request }) => {
  expect((await request.get(`http://127.0.0.1:${APP_PORT}/`)).status()).toBe(200); // Next is attached now
  const requests = [
    'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    'GET /v1/events/stream HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
    'GET /_next/webpack-hmr HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
    'OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n',
    'GET * HTTP/1.1\r\nHost: localhost\r\n\r\n',
    'GET http://evil.example/v1/me HTTP/1.1\r\nHost: evil.example\r\n\r\n',
    'GET http://evil.example/ HTTP/1.1\r\nHost: localhost\r\n\r\n',
  ];
  for (const raw of requests) {
    const answer = await rawRequest(APP_PORT, raw);
    const line = raw.split('\r\n')[0];
    expect(answer.status, line).toBe(400);
    expect(answer.headers.location, line).toBeUndefined();
    expect(JSON.parse(answer.body), line).toMatchObject({ type: 'invalid_request', code: 'parameter_invalid' });
    expect(answer.closedByServer, line).toBe(true);
  }
  // And the app still serves ordinary requests.
  expect((await request.get(`http://127.0.0.1:${APP_PORT}/healthz`)).status()).toBe(200);
});
