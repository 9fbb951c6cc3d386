// @vitest-environment node
// Single sign-on with OpenID Connect (issue 29, item 1), against a real OpenID provider run here
// (oidc-provider 8 with its development login form): discovery, state, nonce, PKCE, the claim as the
// user id, the device token handed over once without a URL, the audit trail's sign-in. Refusals
// (a forged signature, another audience, an expired ID token, a replayed or mismatched state, a
// wrong or missing PKCE verifier) come from the real provider where it can produce them, and from a
// small fake provider where only a misbehaving one would (signing with another key, …): each ends
// at /?signin_error=<code> and makes no token.
import http from 'node:http';
import { createHash, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { userIdFor } from '../../lib/api/http/oidc';
import { startTestServer, type TestServer } from '../helpers/server';
import { startProxy, type ProxyServer } from '../helpers/proxy-target';
import { createTestDatabase } from '../helpers/postgres';

const CLIENT_ID = 'parley-test';
const CLIENT_SECRET = 'parley-test-secret-0123456789abcdef';
const PHONE_UA = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36';

/** A cookie jar per host (names only: enough for one provider and one server). */
class Jar {
  private readonly cookies = new Map<string, Map<string, string>>();
  header(url: string): string {
    const jar = this.cookies.get(new URL(url).host);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }
  take(url: string, response: Response): void {
    const host = new URL(url).host;
    const jar = this.cookies.get(host) ?? new Map<string, string>();
    this.cookies.set(host, jar);
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
      if (gone || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }
  copy(): Jar {
    const other = new Jar();
    for (const [host, jar] of this.cookies) other.cookies.set(host, new Map(jar));
    return other;
  }
}

async function get(jar: Jar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie) headers.set('cookie', cookie);
  if (!headers.has('user-agent')) headers.set('user-agent', PHONE_UA);
  const response = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.take(url, response);
  return response;
}

/**
 * Follows the browser's way from a URL through the provider's login and consent forms until the
 * provider sends it to `stopAt` (the server's callback): that URL.
 */
async function throughProvider(jar: Jar, url: string, stopAt: string, login = 'carol'): Promise<string> {
  for (let hops = 0; hops < 20; hops++) {
    if (url.startsWith(stopAt)) return url;
    const response = await get(jar, url);
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const html = await response.text();
    expect(response.status, html.slice(0, 500)).toBe(200);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    expect(action, html.slice(0, 500)).toBeTruthy();
    const form = new URLSearchParams({ prompt: prompt! });
    if (prompt === 'login') {
      form.set('login', login);
      form.set('password', 'anything');
    }
    const posted = await get(jar, new URL(action!, url).href, { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect([302, 303]).toContain(posted.status);
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error('too many redirects');
}

// Nothing here depends on the object store or a proxy in front: the flow runs on SQLite and on
// PostgreSQL (its migration, its transaction), not again in the other projects.
const elsewhere = ['PARLEY_TEST_VIA_PROXY', 'PARLEY_TEST_S3', 'PARLEY_TEST_TWO_INSTANCES'].some((name) => process.env[name] === '1');
const dropDatabases: Array<() => Promise<void>> = [];

async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  if (process.env.PARLEY_TEST_POSTGRES !== '1') return startTestServer({ env });
  const database = await createTestDatabase();
  dropDatabases.push(database.drop);
  return startTestServer({ env: { ...env, DATABASE_URL: database.url } });
}

afterAll(async () => {
  for (const drop of dropDatabases) await drop();
});

let provider: http.Server;
let issuer: string;
let server: TestServer;

async function listenOnFreePort(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const s = http.createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  if (elsewhere) return;
  // The provider's port first (its issuer is in the server's environment), then the server (its
  // port is in the client's redirect URI), then the provider itself: discovery happens on first use.
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const listening = await listenOnFreePort((req, res) => handler(req, res));
  provider = listening.server;
  issuer = listening.url;
  server = await startServer({ OIDC_ISSUER_URL: issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_DISPLAY_NAME: 'Test IdP' });
  const { default: Provider } = await import('oidc-provider');
  const oidc = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${server.baseUrl}/auth/oidc/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    cookies: { keys: ['parley-test-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The login typed in the dev form is the account; its e-mail address, in mixed case.
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id[0]!.toUpperCase()}${id.slice(1)}@Example.test`, email_verified: id !== 'unverified' }),
    }),
  });
  handler = oidc.callback();
}, 30_000);

afterAll(async () => {
  await server?.stop();
  provider?.closeAllConnections();
  await new Promise((resolve) => provider?.close(resolve));
});

const callbackOf = (s: TestServer) => `${s.baseUrl}/auth/oidc/callback`;

async function signInAt(s: TestServer, jar: Jar, login = 'carol'): Promise<{ callback: string; landed: Response }> {
  const start = await get(jar, `${s.baseUrl}/auth/oidc/start`);
  expect(start.status).toBe(302);
  const callback = await throughProvider(jar, start.headers.get('location')!, callbackOf(s), login);
  const landed = await get(jar, callback);
  return { callback, landed };
}

async function handoff(s: TestServer, jar: Jar, id: string): Promise<Response> {
  return get(jar, `${s.baseUrl}/auth/oidc/handoff`, { method: 'POST', body: JSON.stringify({ id }), headers: { 'content-type': 'application/json' } });
}

const deviceTokens = async (s: TestServer) => s.service.db.selectFrom('tokens').select(['user_id', 'label', 'token_hash']).where('kind', '=', 'device').execute();

describe.skipIf(elsewhere)('single sign-on with a real OpenID provider', () => {
  it('GET /auth/oidc tells the sign-in screen the provider’s name', async () => {
    const r = await fetch(`${server.baseUrl}/auth/oidc`);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(await r.json()).toEqual({ enabled: true, name: 'Test IdP' });
  });

  it('start sends the browser to the provider with state, nonce and a PKCE challenge (S256), keeping them in an HttpOnly cookie', async () => {
    const r = await fetch(`${server.baseUrl}/auth/oidc/start`, { redirect: 'manual' });
    expect(r.status).toBe(302);
    const to = new URL(r.headers.get('location')!);
    expect(to.origin).toBe(issuer);
    expect(to.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(to.searchParams.get('redirect_uri')).toBe(callbackOf(server));
    expect(to.searchParams.get('scope')).toBe('openid email');
    expect(to.searchParams.get('state')).toBeTruthy();
    expect(to.searchParams.get('nonce')).toBeTruthy();
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    const cookie = r.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^parley_oidc=[\w-]+; Path=\/auth\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/);
    // The verifier is not readable in it (sealed with the installation's key).
    expect(cookie).not.toContain(to.searchParams.get('state')!);
  });

  it('login at the provider → callback → a one-time handoff → a device token for the claim’s user, labelled with the device', async () => {
    const jar = new Jar();
    const before = (await deviceTokens(server)).length;
    const { callback, landed } = await signInAt(server, jar, 'carol');
    expect(new URL(callback).searchParams.get('code')).toBeTruthy();
    expect(landed.status).toBe(303);
    const location = landed.headers.get('location')!;
    expect(location).toMatch(/^\/\?signin=[\w-]{43}$/);
    const id = new URL(location, server.baseUrl).searchParams.get('signin')!;

    // The handoff id alone (another browser, without the cookie) is useless.
    const stranger = await handoff(server, new Jar(), id);
    expect(stranger.status).toBe(404);
    expect((await stranger.json()).code).toBe('resource_missing');

    const r = await handoff(server, jar, id);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const body = (await r.json()) as { token: string; user: string; device_id: string };
    expect(body.user).toBe('carol@example.test'); // the email claim, lower-cased
    expect(body.token).toMatch(/^pk_/);
    // Redeemed once: the same id again is refused, and no second token is made.
    const again = await handoff(server, jar, id);
    expect(again.status).toBe(404);

    const me = await fetch(`${server.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${body.token}` } });
    expect(me.status).toBe(200);
    expect((await me.json()).id).toBe('carol@example.test');
    const devices = await fetch(`${server.baseUrl}/v1/me/devices`, { headers: { authorization: `Bearer ${body.token}` } });
    const list = (await devices.json()) as { data: Array<{ id: string; label: string; current: boolean }> };
    expect(list.data).toEqual([expect.objectContaining({ id: body.device_id, label: 'Chrome on Android', current: true })]);

    const tokens = await deviceTokens(server);
    expect(tokens.length).toBe(before + 1);
    // Stored as a hash, never as itself.
    expect(tokens.some((t) => t.token_hash === createHash('sha256').update(body.token).digest('hex'))).toBe(true);
    expect(JSON.stringify(tokens)).not.toContain(body.token);
    const audit = await server.service.db.selectFrom('audit').selectAll().where('action', '=', 'sign-in').execute();
    expect(audit.filter((row) => row.outcome === '200')).toEqual([expect.objectContaining({ user_id: 'carol@example.test', token_id: body.device_id })]);
    // The stranger's try and the second redemption (its cookie spent): failed sign-ins, by nobody named.
    expect(audit.filter((row) => row.outcome === 'refused:handoff_refused').map((row) => row.user_id)).toEqual(['(unknown)', '(unknown)']);
    // Nothing left of the handoff but its hash and the token's id.
    const rows = await server.service.db.selectFrom('sign_ins').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(id);
  });

  it('a replayed callback is refused: the flow cookie is spent (expired), and with the old cookie the provider refuses the used code', async () => {
    const jar = new Jar();
    const start = await get(jar, `${server.baseUrl}/auth/oidc/start`);
    const callback = await throughProvider(jar, start.headers.get('location')!, callbackOf(server), 'dave');
    const oldCookies = jar.copy();
    const first = await get(jar, callback);
    expect(first.headers.get('location')).toMatch(/^\/\?signin=/);
    const before = (await deviceTokens(server)).length;
    // The same browser again: its cookie now only binds the handoff.
    const replay = await get(jar, callback);
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/?signin_error=expired');
    // Someone who kept the flow cookie too: the code was used, the provider refuses it.
    const stolen = await get(oldCookies, callback);
    expect(stolen.headers.get('location')).toBe('/?signin_error=refused');
    expect((await deviceTokens(server)).length).toBe(before);
  });

  it('a state that is not this browser’s is refused (state_mismatch), as is a callback without a flow (expired)', async () => {
    const a = new Jar();
    const startA = await get(a, `${server.baseUrl}/auth/oidc/start`);
    const callback = await throughProvider(a, startA.headers.get('location')!, callbackOf(server), 'erin');
    // Another browser that started its own sign-in is handed A's callback (login CSRF).
    const b = new Jar();
    await get(b, `${server.baseUrl}/auth/oidc/start`);
    const crossed = await get(b, callback);
    expect(crossed.headers.get('location')).toBe('/?signin_error=state_mismatch');
    const none = await get(new Jar(), callback);
    expect(none.headers.get('location')).toBe('/?signin_error=expired');
    // A forged cookie is no flow either.
    const forged = await fetch(callback, { redirect: 'manual', headers: { cookie: 'parley_oidc=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    expect(forged.headers.get('location')).toBe('/?signin_error=expired');
  });

  it('a wrong PKCE verifier (the challenge swapped) or none at all is refused, with no token', async () => {
    const before = (await deviceTokens(server)).length;
    const jar = new Jar();
    const start = await get(jar, `${server.baseUrl}/auth/oidc/start`);
    const swapped = new URL(start.headers.get('location')!);
    swapped.searchParams.set('code_challenge', createHash('sha256').update('someone else’s verifier, 43 characters or more').digest('base64url'));
    const callback = await throughProvider(jar, swapped.href, callbackOf(server), 'frank');
    const r = await get(jar, callback);
    expect(r.headers.get('location')).toBe('/?signin_error=refused');

    const jar2 = new Jar();
    const start2 = await get(jar2, `${server.baseUrl}/auth/oidc/start`);
    const without = new URL(start2.headers.get('location')!);
    without.searchParams.delete('code_challenge');
    without.searchParams.delete('code_challenge_method');
    // The provider (PKCE required) sends the browser back with an error.
    const back = await throughProvider(jar2, without.href, callbackOf(server), 'frank');
    expect(new URL(back).searchParams.get('error')).toBe('invalid_request');
    const r2 = await get(jar2, back);
    expect(r2.headers.get('location')).toBe('/?signin_error=refused');
    expect((await deviceTokens(server)).length).toBe(before);
  });

  it('an e-mail address the provider says is not verified makes no user (no_user)', async () => {
    const { landed } = await signInAt(server, new Jar(), 'unverified');
    expect(landed.headers.get('location')).toBe('/?signin_error=no_user');
  });

  it.runIf(process.env.PARLEY_TEST_POSTGRES === '1')('two instances on one database: started on one, back on the other, handed over by the first (nothing kept per instance)', async () => {
    const other = await startTestServer({
      env: { DATABASE_URL: server.databaseUrl!, OIDC_ISSUER_URL: issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET },
    });
    try {
      const jar = new Jar();
      const start = await get(jar, `${server.baseUrl}/auth/oidc/start`);
      const callback = new URL(await throughProvider(jar, start.headers.get('location')!, callbackOf(server), 'hana'));
      // A load balancer sends the way back to the other instance: the same cookie, the same query.
      const cookie = jar.header(server.baseUrl);
      const landed = await fetch(`${other.baseUrl}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie, 'user-agent': PHONE_UA } });
      expect(landed.headers.get('location')).toMatch(/^\/\?signin=/);
      const id = new URL(landed.headers.get('location')!, other.baseUrl).searchParams.get('signin')!;
      const binding = landed.headers.getSetCookie()[0]!.split(';')[0]!;
      const r = await fetch(`${server.baseUrl}/auth/oidc/handoff`, { method: 'POST', headers: { cookie: binding, 'content-type': 'application/json' }, body: JSON.stringify({ id }) });
      expect(r.status).toBe(200);
      const { token } = (await r.json()) as { token: string };
      const me = await fetch(`${other.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      expect((await me.json()).id).toBe('hana@example.test');
    } finally {
      await other.stop();
    }
  });

  it('the handoff: JSON errors in the contract’s shape; GET on it 405', async () => {
    const missing = await handoff(server, new Jar(), undefined as unknown as string);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ type: 'invalid_request', code: 'parameter_missing', param: 'id' });
    const unknown = await handoff(server, new Jar(), 'x'.repeat(43));
    expect(unknown.status).toBe(404);
    const wrongMethod = await fetch(`${server.baseUrl}/auth/oidc/handoff`);
    expect(wrongMethod.status).toBe(405);
  });
});

const signInRows = async (s: TestServer, outcome: string) =>
  s.service.db.selectFrom('audit').selectAll().where('action', '=', 'sign-in').where('outcome', '=', outcome).execute();

describe.skipIf(elsewhere)('failed sign-ins are in the audit trail, committed before the answer', () => {
  it('a refused callback: one row, its reason, the address, no user it did not name', async () => {
    const before = (await signInRows(server, 'refused:expired')).length;
    const none = await get(new Jar(), `${server.baseUrl}/auth/oidc/callback?code=x&state=y`);
    expect(none.headers.get('location')).toBe('/?signin_error=expired');
    // No polling: the row is there once the answer is.
    const rows = await signInRows(server, 'refused:expired');
    expect(rows.length).toBe(before + 1);
    expect(rows.at(-1)).toMatchObject({ user_id: '(unknown)', token_id: null, object_type: 'token', address: expect.stringMatching(/127\.0\.0\.1/) });

    const a = new Jar();
    const start = await get(a, `${server.baseUrl}/auth/oidc/start`);
    const callback = await throughProvider(a, start.headers.get('location')!, callbackOf(server), 'ines');
    const b = new Jar();
    await get(b, `${server.baseUrl}/auth/oidc/start`);
    expect((await get(b, callback)).headers.get('location')).toBe('/?signin_error=state_mismatch');
    expect(await signInRows(server, 'refused:state_mismatch')).not.toEqual([]);
  });

  it('a user the provider named but that is refused (unverified e-mail) is recorded with that user', async () => {
    const { landed } = await signInAt(server, new Jar(), 'unverified');
    expect(landed.headers.get('location')).toBe('/?signin_error=no_user');
    expect(await signInRows(server, 'refused:no_user')).toEqual(expect.arrayContaining([expect.objectContaining({ user_id: 'unverified@example.test' })]));
  });

  it('a handoff redeemed without its browser’s cookie: recorded with the user it was for', async () => {
    const jar = new Jar();
    const { landed } = await signInAt(server, jar, 'jules');
    const id = new URL(landed.headers.get('location')!, server.baseUrl).searchParams.get('signin')!;
    // A browser with a handoff cookie of its own, but not this one's.
    const other = new Jar();
    const otherSignIn = await signInAt(server, other, 'kim');
    expect(otherSignIn.landed.status).toBe(303);
    expect((await handoff(server, other, id)).status).toBe(404);
    expect(await signInRows(server, 'refused:handoff_refused')).toEqual(expect.arrayContaining([expect.objectContaining({ user_id: 'jules@example.test' })]));
    // Its own browser still can.
    expect((await handoff(server, jar, id)).status).toBe(200);
  });
});

describe.skipIf(elsewhere)('the sign-in paths: a rate limit per address; the cookie Secure behind a TLS-terminating proxy', () => {
  it('RATE_LIMIT_SIGN_IN_PER_MINUTE: the steps over it are 429 rate_limited with Retry-After (and not recorded); asking whether SSO is offered is not counted with them', async () => {
    const s = await startServer({ OIDC_ISSUER_URL: issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, RATE_LIMIT_SIGN_IN_PER_MINUTE: '3' });
    try {
      for (let i = 0; i < 2; i++) expect((await get(new Jar(), `${s.baseUrl}/auth/oidc/start`)).status).toBe(302);
      expect((await get(new Jar(), `${s.baseUrl}/auth/oidc/callback`)).headers.get('location')).toBe('/?signin_error=expired');
      const refusedBefore = (await signInRows(s, 'refused:expired')).length;
      for (const path of ['/auth/oidc/start', '/auth/oidc/callback', '/auth/oidc/handoff']) {
        const r = await get(new Jar(), `${s.baseUrl}${path}`, path.endsWith('handoff') ? { method: 'POST', body: '{}' } : {});
        expect(r.status, path).toBe(429);
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60);
        expect(await r.json()).toMatchObject({ type: 'invalid_request', code: 'rate_limited' });
      }
      expect((await signInRows(s, 'refused:expired')).length).toBe(refusedBefore);
      expect((await fetch(`${s.baseUrl}/auth/oidc`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('ASSET_URL https (TLS ends at a proxy; the request arrives over http): the flow cookie is Secure, the redirect URI https', async () => {
    const s = await startServer({ OIDC_ISSUER_URL: issuer, OIDC_CLIENT_ID: CLIENT_ID, ASSET_URL: 'https://parley.example.org' });
    try {
      const r = await fetch(`${s.baseUrl}/auth/oidc/start`, { redirect: 'manual' });
      expect(r.status).toBe(302);
      expect(new URL(r.headers.get('location')!).searchParams.get('redirect_uri')).toBe('https://parley.example.org/auth/oidc/callback');
      expect(r.headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await s.stop();
    }
  });
});

// A provider that misbehaves on purpose: it answers the authorization request at once (no login)
// and its token endpoint returns the ID token this test asks for.
type Mode = 'ok' | 'forged' | 'audience' | 'expired' | 'nonce';

describe.skipIf(elsewhere)('ID tokens a real provider would not send are refused', () => {
  let fake: http.Server;
  let fakeUrl: string;
  let s: TestServer;
  let mode: Mode = 'ok';
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pending = new Map<string, { nonce: string; challenge: string }>();

  function jwt(claims: Record<string, unknown>, privateKey: KeyObject): string {
    const enc = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const input = `${enc({ alg: 'RS256', typ: 'JWT', kid: 'k1' })}.${enc(claims)}`;
    return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
  }

  beforeAll(async () => {
    const listening = await listenOnFreePort(async (req, res) => {
      const url = new URL(req.url!, fakeUrl);
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (url.pathname === '/.well-known/openid-configuration') {
        return send(200, {
          issuer: fakeUrl,
          authorization_endpoint: `${fakeUrl}/authorize`,
          token_endpoint: `${fakeUrl}/token`,
          jwks_uri: `${fakeUrl}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
        });
      }
      if (url.pathname === '/jwks') return send(200, { keys: [{ ...key.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' }] });
      if (url.pathname === '/authorize') {
        const code = `code-${pending.size}`;
        pending.set(code, { nonce: url.searchParams.get('nonce')!, challenge: url.searchParams.get('code_challenge')! });
        const back = new URL(url.searchParams.get('redirect_uri')!);
        back.searchParams.set('code', code);
        back.searchParams.set('state', url.searchParams.get('state')!);
        return res.writeHead(302, { location: back.href }).end();
      }
      if (url.pathname === '/token') {
        let body = '';
        for await (const chunk of req) body += chunk;
        const form = new URLSearchParams(body);
        const grant = pending.get(form.get('code')!);
        pending.delete(form.get('code')!);
        const verifier = form.get('code_verifier') ?? '';
        if (!grant || createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return send(400, { error: 'invalid_grant' });
        const now = Math.floor(Date.now() / 1000);
        const claims = {
          iss: fakeUrl,
          sub: 'grace',
          aud: mode === 'audience' ? 'someone-else' : CLIENT_ID,
          iat: mode === 'expired' ? now - 7200 : now,
          exp: mode === 'expired' ? now - 3600 : now + 300,
          nonce: mode === 'nonce' ? 'not-the-nonce' : grant.nonce,
          email: 'grace@example.test',
        };
        return send(200, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: jwt(claims, mode === 'forged' ? otherKey.privateKey : key.privateKey) });
      }
      send(404, {});
    });
    fake = listening.server;
    fakeUrl = listening.url;
    // A public client (no secret): PKCE alone.
    s = await startServer({ OIDC_ISSUER_URL: fakeUrl, OIDC_CLIENT_ID: CLIENT_ID });
  }, 30_000);

  afterAll(async () => {
    await s?.stop();
    fake?.closeAllConnections();
    await new Promise((resolve) => fake?.close(resolve));
  });

  async function attempt(m: Mode): Promise<string> {
    mode = m;
    const jar = new Jar();
    const start = await get(jar, `${s.baseUrl}/auth/oidc/start`);
    const redirect = await get(jar, start.headers.get('location')!);
    const landed = await get(jar, redirect.headers.get('location')!);
    return landed.headers.get('location')!;
  }

  it('the fake provider’s well-formed token is accepted (so the refusals below are the checks’)', async () => {
    expect(await attempt('ok')).toMatch(/^\/\?signin=/);
  });

  it.each([
    ['forged', 'a signature by another key'],
    ['audience', 'another client’s audience'],
    ['expired', 'an expired ID token'],
    ['nonce', 'a nonce not this sign-in’s'],
  ] as const)('%s: %s is refused and makes no token', async (m, _what) => {
    const before = await s.service.db.selectFrom('sign_ins').select('id_hash').execute();
    expect(await attempt(m)).toBe('/?signin_error=refused');
    expect(await s.service.db.selectFrom('sign_ins').select('id_hash').execute()).toEqual(before);
    expect((await deviceTokens(s)).length).toBe(0);
  });

  it('a provider that cannot be reached: idp_unreachable (discovery is tried again next time)', async () => {
    const down = await startTestServer({ env: { OIDC_ISSUER_URL: 'http://127.0.0.1:9', OIDC_CLIENT_ID: CLIENT_ID } });
    try {
      const r = await fetch(`${down.baseUrl}/auth/oidc/start`, { redirect: 'manual' });
      expect(r.status).toBe(303);
      expect(r.headers.get('location')).toBe('/?signin_error=idp_unreachable');
    } finally {
      await down.stop();
    }
  });
});

describe.skipIf(elsewhere)('configuration and where single sign-on is offered', () => {
  it('OIDC_*: all or nothing, https (http on loopback only), the claim and its default', () => {
    expect(readConfig({}).oidc).toBeNull();
    expect(readConfig({ OIDC_ISSUER_URL: 'https://login.example.org/tenant/v2.0', OIDC_CLIENT_ID: 'c' }).oidc).toEqual({
      issuerUrl: 'https://login.example.org/tenant/v2.0',
      clientId: 'c',
      clientSecret: null,
      userClaim: 'email',
      displayName: 'single sign-on',
    });
    expect(() => readConfig({ OIDC_ISSUER_URL: 'https://idp.example.org' })).toThrow(/OIDC_CLIENT_ID/);
    expect(() => readConfig({ OIDC_CLIENT_ID: 'c' })).toThrow(/OIDC_ISSUER_URL/);
    expect(() => readConfig({ OIDC_ISSUER_URL: 'http://idp.example.org', OIDC_CLIENT_ID: 'c' })).toThrow(/https/);
    expect(() => readConfig({ OIDC_DISPLAY_NAME: 'X' })).toThrow(/OIDC_ISSUER_URL/);
    expect(() => readConfig({ OIDC_ISSUER_URL: 'https://idp.example.org', OIDC_CLIENT_ID: 'c', OIDC_USER_CLAIM: 'a b' })).toThrow(/OIDC_USER_CLAIM/);
  });

  it('the claim → user id mapping: values that fit are kept (e-mail lower-cased), others get a stable id of their own', () => {
    expect(userIdFor('email', 'Ann.Lee@Example.org')).toBe('ann.lee@example.org');
    expect(userIdFor('preferred_username', 'AnnLee')).toBe('AnnLee');
    const odd = userIdFor('name', 'Ann Lee (Ward 3)')!;
    expect(odd).toMatch(/^oidc_[A-Za-z0-9_-]{32}$/);
    expect(userIdFor('name', 'Ann Lee (Ward 3)')).toBe(odd);
    expect(userIdFor('name', 'x'.repeat(65))).toMatch(/^oidc_/);
    expect(userIdFor('email', undefined)).toBeNull();
    expect(userIdFor('email', '  ')).toBeNull();
  });

  it('a server without OIDC_* answers 404 on /auth/oidc (the app offers no button)', async () => {
    const plain = await startTestServer();
    try {
      const r = await fetch(`${plain.baseUrl}/auth/oidc`);
      expect(r.status).toBe(404);
      expect((await r.json()).code).toBe('resource_missing');
    } finally {
      await plain.stop();
    }
  });

  describe('proxy mode', () => {
    let proxy: ProxyServer;
    beforeAll(async () => {
      proxy = await startProxy('http://127.0.0.1:9', { OIDC_ISSUER_URL: 'https://idp.example.org', OIDC_CLIENT_ID: 'c' });
    });
    afterAll(async () => proxy?.stop());
    it('not offered: the tokens would be this server’s, which the upstream does not know (404)', async () => {
      const r = await fetch(`${proxy.baseUrl}/auth/oidc/start`, { redirect: 'manual' });
      expect(r.status).toBe(404);
    });
  });
});
