// @vitest-environment node
// Your devices (issue 29, item 3): GET /v1/me/devices lists the stored tokens of the token's user
// (label, created, last seen, this one marked); DELETE /v1/me/devices/:id signs one out, with
// ?wipe=true marked wiped (401 device_wiped afterwards). Anyone else's device: 404. Device tokens
// expire after TOKEN_TTL_DAYS unused (an injected clock); CLI tokens do not. last_seen_at is written
// at most every 5 minutes per token. Every project runs it (through the proxy: the upstream's).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DevicePage } from '../../lib/schemas';
import { createDeviceToken, createToken } from '../../lib/api/domain/tokens';
import { client, expectError } from '../helpers/api';
import type { TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';

const DAY_MS = 24 * 3600_000;

let s: TestServer;
beforeAll(async () => {
  s = await startTarget({ env: { TOKEN_TTL_DAYS: '30' } });
});
afterAll(() => s?.stop());
afterEach(() => vi.useRealTimers());

const as = (token: string) => client(() => s.baseUrl, token);
const list = async (token: string) => {
  const r = await as(token).get('/v1/me/devices');
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('cache-control')).toBe('no-store');
  return DevicePage.parse(r.body);
};

describe('GET /v1/me/devices', () => {
  it("lists the user's stored tokens, newest first, this one marked; never another user's", async () => {
    const laptop = await createToken(s.service.db, 'dana', 'laptop');
    const phone = await createDeviceToken(s.service.db, 'dana', 'Chrome on Android');
    const other = await createDeviceToken(s.service.db, 'erin', 'Safari on iPhone');
    const page = await list(phone.token);
    expect(page.has_more).toBe(false);
    expect(page.data.map((d) => d.id).sort()).toEqual([phone.id, laptop.id].sort());
    const mine = page.data.find((d) => d.id === phone.id)!;
    expect(mine).toMatchObject({ label: 'Chrome on Android', current: true });
    expect(mine.last_seen_at).not.toBeNull();
    expect(page.data.find((d) => d.id === laptop.id)).toMatchObject({ label: 'laptop', current: false });
    expect(page.data.some((d) => d.id === other.id)).toBe(false);
    // A static token (PARLEY_TOKENS) has no record: it lists its user's stored tokens, none current.
    const alice = await createDeviceToken(s.service.db, 'alice', 'tablet');
    const fromStatic = await list(s.tokens.alice);
    expect(fromStatic.data.find((d) => d.id === alice.id)).toMatchObject({ current: false });
    expect(fromStatic.data.every((d) => !d.current)).toBe(true);
    expectError(await as(phone.token).get('/v1/me/devices?limit=5'), 400, 'parameter_unknown', 'limit');
    expectError(await client(() => s.baseUrl).get('/v1/me/devices'), 401, 'unauthenticated');
  });
});

describe('DELETE /v1/me/devices/:id', () => {
  it("another user's device (or an unknown id): 404, and it goes on working", async () => {
    const mallory = await createDeviceToken(s.service.db, 'mallory', 'attacker');
    const victim = await createDeviceToken(s.service.db, 'victim', 'ward phone');
    expectError(await as(mallory.token).del(`/v1/me/devices/${victim.id}`), 404, 'resource_missing');
    expectError(await as(mallory.token).del(`/v1/me/devices/${victim.id}?wipe=true`), 404, 'resource_missing');
    expectError(await as(mallory.token).del('/v1/me/devices/0000000000000000'), 404, 'resource_missing');
    expectError(await as(mallory.token).del('/v1/me/devices/nope'), 404, 'resource_missing');
    expect((await as(victim.token).get('/v1/me')).status).toBe(200);
    expect((await list(victim.token)).data.map((d) => d.id)).toContain(victim.id);
  });

  it('sign out: the token is gone (401 unauthenticated); with ?wipe=true: 401 device_wiped', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const a = await createDeviceToken(s.service.db, 'frank', 'Chrome on Android');
    const b = await createDeviceToken(s.service.db, 'frank', 'Firefox on Windows');
    const c = await createToken(s.service.db, 'frank', 'cli');
    for (const t of [a, b, c]) expect((await as(t.token).get('/v1/me')).status).toBe(200);

    // A parameter given twice is refused (which one would count?), and nothing is signed out.
    expectError(await as(c.token).del(`/v1/me/devices/${a.id}?wipe=false&wipe=true`), 400, 'parameter_invalid', 'wipe');
    expect((await list(c.token)).data.map((d) => d.id)).toContain(a.id);
    const out = await as(c.token).del(`/v1/me/devices/${a.id}`);
    expect(out.status, out.text).toBe(204);
    const wiped = await as(c.token).del(`/v1/me/devices/${b.id}?wipe=true`);
    expect(wiped.status, wiped.text).toBe(204);
    expectError(await as(c.token).del(`/v1/me/devices/${b.id}?wipe=maybe`), 400, 'parameter_invalid', 'wipe');
    // Other instances may have the tokens in their 10 s cache: past it, every instance knows.
    vi.setSystemTime(Date.now() + 10_001);
    expectError(await as(a.token).get('/v1/conversations'), 401, 'unauthenticated');
    expectError(await as(b.token).get('/v1/conversations'), 401, 'device_wiped');
    // Neither is listed; signing out again: 404.
    expect((await list(c.token)).data.map((d) => d.id)).toEqual([c.id]);
    expectError(await as(c.token).del(`/v1/me/devices/${b.id}`), 404, 'resource_missing');
    // A device may sign itself out.
    expect((await as(c.token).del(`/v1/me/devices/${c.id}`)).status).toBe(204);
    vi.setSystemTime(Date.now() + 10_001);
    expectError(await as(c.token).get('/v1/me'), 401, 'unauthenticated');
  });
});

describe('TOKEN_TTL_DAYS: device tokens unused for 30 days expire; CLI tokens stay', () => {
  it('last seen moves the deadline; past it: 401, and the device is no longer listed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const device = await createDeviceToken(s.service.db, 'gina', 'Chrome on Android');
    const cli = await createToken(s.service.db, 'gina', 'laptop');
    expect((await as(device.token).get('/v1/me')).status).toBe(200);
    vi.setSystemTime(Date.now() + 20 * DAY_MS);
    // Used on day 20: last seen is written (the cache lapsed and last seen is older than 5 minutes).
    expect((await as(device.token).get('/v1/me')).status).toBe(200);
    const seen = (await list(cli.token)).data.find((d) => d.id === device.id)!;
    expect(seen.last_seen_at).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 1);
    vi.setSystemTime(Date.now() + 25 * DAY_MS); // day 45: 25 days since last use
    expect((await as(device.token).get('/v1/me')).status).toBe(200);
    vi.setSystemTime(Date.now() + 31 * DAY_MS); // 31 days unused
    const r = await as(device.token).get('/v1/me');
    expectError(r, 401, 'unauthenticated');
    expect(r.body.message).toMatch(/expired/);
    expect((await list(cli.token)).data.map((d) => d.id)).toEqual([cli.id]);
    expectError(await as(cli.token).del(`/v1/me/devices/${device.id}`), 404, 'resource_missing');
    // The CLI token, unused for 76 days, still works.
    expect((await as(cli.token).get('/v1/me')).status).toBe(200);
  });

  it('last_seen_at is written at most once per 5 minutes per token, not per request', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const device = await createDeviceToken(s.service.db, 'hugo', 'Chrome on Android');
    const read = async () => (await s.service.db.selectFrom('tokens').select('last_seen_at').where('id', '=', device.id).executeTakeFirstOrThrow()).last_seen_at;
    const first = Number(await read());
    vi.setSystemTime(Date.now() + 60_000); // a minute later, cache lapsed: not written (younger than 5 min)
    expect((await as(device.token).get('/v1/me')).status).toBe(200);
    expect(Number(await read())).toBe(first);
    vi.setSystemTime(Date.now() + 5 * 60_000);
    expect((await as(device.token).get('/v1/me')).status).toBe(200);
    expect(Number(await read())).toBeGreaterThan(first + 300);
  });
});

describe('a server without the devices extension (a plain /v1 server, e.g. behind the proxy)', () => {
  let plain: TestServer;
  beforeAll(async () => {
    plain = await startTarget({ env: { PARLEY_EXTENSIONS: 'idempotency,me,events,uploads' } });
  });
  afterAll(() => plain?.stop());

  it('answers every devices and pairing path like an unknown route (404), and the app then offers neither', async () => {
    const alice = client(() => plain.baseUrl, plain.tokens.alice);
    const unknown = await alice.get('/v1/nothing-here');
    for (const [method, path] of [['GET', '/v1/me/devices'], ['POST', '/v1/me/pairings'], ['POST', '/v1/pairings/redeem']] as const) {
      const r = await alice.call(method, path, method === 'GET' ? {} : { json: {} });
      expectError(r, 404, 'resource_missing');
      expect(r.body).toEqual(unknown.body);
    }
    // What the Device screen asks: null means "no such extension", and its buttons stay hidden.
    const { listDevices } = await import('../../lib/view/devices');
    const at = (base: string) => ((path: string, init?: RequestInit) => fetch(base + path, init)) as typeof fetch;
    expect(await listDevices(plain.tokens.alice, at(plain.baseUrl))).toBeNull();
    expect(await listDevices(s.tokens.alice, at(s.baseUrl))).not.toBeNull();
  });
});
