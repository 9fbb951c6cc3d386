// @vitest-environment node
// Remote wipe (issue 28, item 5): `npm run token -- revoke <id-or-token> --wipe` marks a stored
// token wiped; every request with it is answered 401 device_wiped (not unauthenticated), so the
// device erases what it holds. A plain revoke stays a plain 401. In proxy mode the proxy is told
// (the same command with its DATA_DIR, by token value) and answers device_wiped itself.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Authenticator, createToken, revokeToken } from '../../lib/api/domain/tokens';
import { openDb } from '../../lib/api/storage/db';
import { runCommand } from '../helpers/cli';
import { startProxy, type ProxyServer } from '../helpers/proxy-target';
import { startTestServer, tempDataDir, TEST_TOKENS, type TestServer } from '../helpers/server';

const token = (args: string[], env: Record<string, string>) => runCommand('token', args, env);

const get = (baseUrl: string, bearer: string, target = '/v1/conversations') => fetch(baseUrl + target, { headers: { authorization: `Bearer ${bearer}` } });

let server: TestServer;
let env: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  env = server.databaseUrl ? { DATABASE_URL: server.databaseUrl } : { DATA_DIR: server.dataDir };
});
afterAll(async () => server?.stop());

async function created(label: string): Promise<{ id: string; value: string }> {
  const r = await token(['create', '--user', 'alice', '--label', label], env);
  expect(r.code, r.err).toBe(0);
  const id = /created token (\w+)/.exec(r.err)![1]!;
  return { id, value: r.out.trim() };
}

describe('remote wipe: npm run token -- revoke <id> --wipe', () => {
  it('a wiped token is answered 401 device_wiped; the CLI warns that unsynced changes are lost; list marks it', async () => {
    const phone = await created('ward phone');
    const wiped = await token(['revoke', phone.id, '--wipe'], env);
    expect(wiped.code, wiped.err).toBe(0);
    expect(wiped.out).toContain(`revoked ${phone.id} with wipe`);
    expect(wiped.err).toMatch(/not yet synced are lost/);

    for (const target of ['/v1/conversations', '/v1/me', '/v1/files?limit=1']) {
      const r = await get(server.baseUrl, phone.value, target);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(await r.json()).toMatchObject({ type: 'invalid_request', code: 'device_wiped' });
    }
    const listed = await token(['list'], env);
    expect(listed.out).toMatch(new RegExp(`${phone.id}\\s+alice\\s+\\S+\\s+ward phone\\s+\\[wiped `));
    // Other tokens of the same user go on working.
    expect((await get(server.baseUrl, TEST_TOKENS.alice)).status).toBe(200);
  });

  it('by the token itself too; a plain revoke is a plain 401 (unauthenticated)', async () => {
    const a = await created('by value');
    expect((await token(['revoke', a.value, '--wipe'], env)).code).toBe(0);
    expect((await (await get(server.baseUrl, a.value)).json()).code).toBe('device_wiped');
    const b = await created('plain');
    expect((await token(['revoke', b.id], env)).code).toBe(0);
    const r = await get(server.baseUrl, b.value);
    expect(r.status).toBe(401);
    expect((await r.json()).code).toBe('unauthenticated');
  });
});

describe('a token in use (cached by the server) is answered device_wiped within the cache time', () => {
  it('the Authenticator drops a wiped token once its 10 s cache lapses', async () => {
    const dir = tempDataDir();
    const { db, close } = await openDb({ dataDir: dir });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { token: value, id } = await createToken(db, 'alice', 'in use');
      const auth = new Authenticator(db, new Map());
      expect(await auth.authenticate(`Bearer ${value}`)).toBe('alice');
      expect(await revokeToken(db, id, { wipe: true })).toBe(1);
      expect(await auth.authenticate(`Bearer ${value}`)).toBe('alice'); // cached, as any token is
      vi.setSystemTime(Date.now() + 10_001);
      await expect(auth.authenticate(`Bearer ${value}`)).rejects.toMatchObject({ code: 'device_wiped', status: 401 });
      // Live streams re-check without the cache: a wiped token is no longer accepted.
      expect((await auth.recheck([value])).get(value)).toBeNull();
    } finally {
      vi.useRealTimers();
      await close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('proxy mode: the proxy answers device_wiped for a token it was told to wipe', () => {
  let proxy: ProxyServer;
  let proxyDir: string;
  beforeAll(async () => {
    proxyDir = tempDataDir();
    proxy = await startProxy(server.baseUrl, { DATA_DIR: proxyDir });
  });
  afterAll(async () => {
    await proxy?.stop();
    fs.rmSync(proxyDir, { recursive: true, force: true });
  });

  it('revoke <token> --wipe with the proxy’s DATA_DIR: 401 device_wiped before anything is forwarded; others pass', async () => {
    const phone = await created('through the proxy');
    const wiped = await token(['revoke', phone.value, '--wipe'], { DATA_DIR: proxyDir, UPSTREAM_BASE_URL: server.baseUrl });
    expect(wiped.code, wiped.err).toBe(0);
    expect(wiped.err).toMatch(/revoke it at the upstream too/);
    const r = await get(proxy.baseUrl, phone.value);
    expect(r.status).toBe(401);
    expect((await r.json()).code).toBe('device_wiped');
    // The upstream still accepts it (the proxy never asked it): the proxy answered by itself.
    expect((await get(server.baseUrl, phone.value)).status).toBe(200);
    expect((await get(proxy.baseUrl, TEST_TOKENS.alice)).status).toBe(200);
  });

  it('a revoke without --wipe in proxy mode says the tokens are the upstream’s (exit 2)', async () => {
    const r = await token(['revoke', 'whatever'], { DATA_DIR: proxyDir, UPSTREAM_BASE_URL: server.baseUrl });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/tokens belong to the upstream/);
  });
});
