// @vitest-environment node
// GET /device-policy (issue 28, item 7): the app's own server tells the device its policy — the
// defaults, or LOCK_AFTER_MINUTES / MAX_OFFLINE_DAYS / WRONG_UNLOCKS_BEFORE_WIPE — with no token
// and never cached; in proxy mode the proxy's own, never the upstream's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { startProxy, type ProxyServer } from '../helpers/proxy-target';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.stop());

describe('GET /device-policy', () => {
  it('the defaults: lock after 5 minutes, erase after 14 days offline or 10 wrong unlocks; no token, no-store', async () => {
    const r = await fetch(`${server.baseUrl}/device-policy`);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(await r.json()).toEqual({ lock_after: 300, max_offline: 14 * 24 * 3600, wrong_unlocks_before_wipe: 10 });
    const post = await fetch(`${server.baseUrl}/device-policy`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect((await post.json()).code).toBe('method_not_allowed');
  });

  it('POST /device-policy/clear: Clear-Site-Data for the app itself only', async () => {
    const url = `${server.baseUrl}/device-policy/clear`;
    const cleared = await fetch(url, { method: 'POST', headers: { 'x-parley-clear': '1', 'sec-fetch-site': 'same-origin' } });
    expect(cleared.status).toBe(204);
    expect(cleared.headers.get('clear-site-data')).toBe('"storage"');
    expect(cleared.headers.get('cache-control')).toBe('no-store');
    // A form posted from another site (no custom header), or a request the browser says is cross-site: refused, nothing cleared.
    for (const headers of [{}, { 'x-parley-clear': '1', 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-origin' }] as Array<Record<string, string>>) {
      const refused = await fetch(url, { method: 'POST', headers });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('clear-site-data')).toBeNull();
      expect((await refused.json()).code).toBe('forbidden');
    }
    const get = await fetch(url);
    expect(get.status).toBe(405);
    expect(get.headers.get('clear-site-data')).toBeNull();
  });

  it('read from the environment, with clear errors for bad values', () => {
    expect(readConfig({ LOCK_AFTER_MINUTES: '0', MAX_OFFLINE_DAYS: '0', WRONG_UNLOCKS_BEFORE_WIPE: '3' }).devicePolicy).toEqual({
      lockAfterSeconds: 0,
      maxOfflineSeconds: 0,
      wrongUnlocksBeforeWipe: 3,
    });
    expect(() => readConfig({ LOCK_AFTER_MINUTES: 'soon' })).toThrow(/LOCK_AFTER_MINUTES/);
    expect(() => readConfig({ MAX_OFFLINE_DAYS: '-1' })).toThrow(/MAX_OFFLINE_DAYS/);
  });
});

describe('proxy mode: the policy is the proxy’s own', () => {
  let proxy: ProxyServer;
  beforeAll(async () => {
    // The upstream says 5 minutes (its defaults); the proxy is set to 1.
    proxy = await startProxy(server.baseUrl, { LOCK_AFTER_MINUTES: '1', MAX_OFFLINE_DAYS: '2', WRONG_UNLOCKS_BEFORE_WIPE: '4' });
  });
  afterAll(async () => proxy?.stop());

  it('answers from its configuration, not the upstream', async () => {
    const r = await fetch(`${proxy.baseUrl}/device-policy`);
    expect(await r.json()).toEqual({ lock_after: 60, max_offline: 2 * 24 * 3600, wrong_unlocks_before_wipe: 4 });
  });

  it('clears a device itself, never forwarding the request', async () => {
    const r = await fetch(`${proxy.baseUrl}/device-policy/clear`, { method: 'POST', headers: { 'x-parley-clear': '1' } });
    expect(r.status).toBe(204);
    expect(r.headers.get('clear-site-data')).toBe('"storage"');
  });
});
