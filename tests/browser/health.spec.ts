// /healthz and /readyz of the built app, through both adapters onto the core: `npm start`'s
// node:http server and plain `next start`'s App Router route handlers. No token, no data,
// no-store, an X-Request-Id on every answer. API-level: no page involved.
import { expect, test } from '@playwright/test';
import { APP_PORT, ROUTE_HANDLER_PORT } from '../../playwright.config';

for (const [name, port] of [
  ['npm start', APP_PORT],
  ['route handlers', ROUTE_HANDLER_PORT],
] as const) {
  test(`${name}: /healthz and /readyz answer without a token`, async ({ request }) => {
    const base = `http://127.0.0.1:${port}`;
    const live = await request.get(`${base}/healthz`);
    expect(live.status()).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    expect(live.headers()['cache-control']).toBe('no-store');
    const ready = await request.get(`${base}/readyz`, { headers: { 'x-request-id': `probe-${port}` } });
    expect(ready.status()).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', storage: 'ok' } });
    expect(ready.headers()['cache-control']).toBe('no-store');
    expect(ready.headers()['x-request-id']).toBe(`probe-${port}`);
  });
}
