// @vitest-environment node
// Pairing a phone (issue 29, item 2): a signed-in device asks for a one-use code valid 2 minutes;
// another device redeems it (no token: a secret), the first device approves or denies, and the
// second collects its own device token with the secret, in a JSON body. Expired, reused, denied:
// 4xx in the contract's shape. Redemptions are rate-limited per address.
// Every project runs it: through the proxy the routes are the upstream's (a Parley server here),
// forwarded like any /v1 request; a plain upstream answers 404 and the app offers no pairing.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Device, DevicePage, Pairing, PairingCreated, PairingRedeemed, PairingToken, PAIRING_ALPHABET } from '../../lib/schemas';
import { deviceLabel, normaliseCode } from '../../lib/api/domain/pairings';
import { client, expectError } from '../helpers/api';
import type { TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';

const PHONE_UA = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

let s: TestServer;
beforeAll(async () => {
  s = await startTarget({ env: { RATE_LIMIT_PAIRING_PER_MINUTE: '1000' } });
});
afterAll(() => s?.stop());
afterEach(() => vi.useRealTimers());

const alice = () => client(() => s.baseUrl, s.tokens.alice);
const bob = () => client(() => s.baseUrl, s.tokens.bob);
const phone = () => client(() => s.baseUrl, undefined);

async function newCode(as = alice()) {
  const r = await as.post('/v1/me/pairings');
  expect(r.status, r.text).toBe(201);
  return PairingCreated.parse(r.body);
}

async function redeem(code: string, headers: Record<string, string> = { 'user-agent': PHONE_UA }) {
  return phone().post('/v1/pairings/redeem', { json: { code }, headers });
}

const collect = (id: string, secret: string) => phone().post(`/v1/pairings/${id}/token`, { json: { secret } });

describe('pairing a phone', () => {
  it('code → redeem (a secret, no token) → the first device sees who asks → approve → the phone collects its own token, once', async () => {
    const created = await newCode();
    expect(created.code).toMatch(new RegExp(`^[${PAIRING_ALPHABET}]{8}$`));
    const now = Math.floor(Date.now() / 1000);
    expect(created.expires_at - now).toBeGreaterThanOrEqual(115);
    expect(created.expires_at - now).toBeLessThanOrEqual(121);
    expect(Pairing.parse((await alice().get(`/v1/me/pairings/${created.id}`)).body)).toMatchObject({ status: 'waiting', label: null, user: 'alice' });

    // Typed as a person would: lower case, with a dash and spaces.
    const typed = `${created.code.slice(0, 4).toLowerCase()}- ${created.code.slice(4)}`;
    const r = await redeem(typed);
    expect(r.status, r.text).toBe(201);
    const redeemed = PairingRedeemed.parse(r.body);
    expect(JSON.stringify(r.body)).not.toMatch(/pk_/); // no token in a redemption
    expect(redeemed.pairing_id).toBe(created.id);
    expect(r.headers.get('cache-control')).toBe('no-store');

    // Not yet approved: 409 pairing_pending, with Retry-After (the phone polls).
    const early = await collect(redeemed.pairing_id, redeemed.secret);
    expectError(early, 409, 'pairing_pending');
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThan(0);

    const seen = Pairing.parse((await alice().get(`/v1/me/pairings/${created.id}`)).body);
    expect(seen).toMatchObject({ status: 'redeemed', label: 'Chrome on Android', user: 'alice' });
    // Bob cannot see nor approve alice's pairing.
    expectError(await bob().get(`/v1/me/pairings/${created.id}`), 404, 'resource_missing');
    expectError(await bob().post(`/v1/me/pairings/${created.id}/approve`), 404, 'resource_missing');

    const approved = await alice().post(`/v1/me/pairings/${created.id}/approve`);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.status).toBe('approved');

    // A wrong secret is a missing pairing.
    expectError(await collect(redeemed.pairing_id, 'x'.repeat(43)), 404, 'resource_missing');
    const got = await collect(redeemed.pairing_id, redeemed.secret);
    expect(got.status, got.text).toBe(200);
    expect(got.headers.get('cache-control')).toBe('no-store');
    const token = PairingToken.parse(got.body);
    expect(token.user).toBe('alice');
    // The phone's own token works as alice, and is listed as a device labelled from its User-Agent.
    const asPhone = client(() => s.baseUrl, token.token);
    expect((await asPhone.get('/v1/me')).body).toEqual({ id: 'alice' });
    const devices = DevicePage.parse((await asPhone.get('/v1/me/devices')).body);
    const mine = devices.data.find((d) => d.current);
    expect(Device.parse(mine)).toMatchObject({ id: token.device_id, label: 'Chrome on Android', current: true });

    // Once: a second collection, a second redemption, a second approval: 410 pairing_used.
    expectError(await collect(redeemed.pairing_id, redeemed.secret), 410, 'pairing_used');
    expectError(await redeem(created.code), 410, 'pairing_used');
    expectError(await alice().post(`/v1/me/pairings/${created.id}/approve`), 410, 'pairing_used');
    expect((await alice().get(`/v1/me/pairings/${created.id}`)).body.status).toBe('collected');
  });

  it('deny: the phone is told pairing_denied (403) and gets no token', async () => {
    const created = await newCode();
    const redeemed = PairingRedeemed.parse((await redeem(created.code)).body);
    // Approving before anyone redeemed is refused (there is nobody to allow); here someone did.
    const denied = await alice().post(`/v1/me/pairings/${created.id}/deny`);
    expect(denied.status, denied.text).toBe(200);
    expect(denied.body.status).toBe('denied');
    expectError(await collect(redeemed.pairing_id, redeemed.secret), 403, 'pairing_denied');
    expectError(await alice().post(`/v1/me/pairings/${created.id}/approve`), 410, 'pairing_used');
  });

  it('approve before any device redeemed the code: 409 pairing_pending', async () => {
    const created = await newCode();
    expectError(await alice().post(`/v1/me/pairings/${created.id}/approve`), 409, 'pairing_pending');
  });

  it('expired: a code older than 2 minutes answers 410 pairing_expired, so does a redeemed one left unapproved', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const created = await newCode();
    vi.setSystemTime(Date.now() + 121_000);
    expectError(await redeem(created.code), 410, 'pairing_expired');
    expect((await alice().get(`/v1/me/pairings/${created.id}`)).body.status).toBe('expired');

    const second = await newCode();
    const redeemed = PairingRedeemed.parse((await redeem(second.code)).body);
    vi.setSystemTime(Date.now() + 121_000);
    expectError(await alice().post(`/v1/me/pairings/${second.id}/approve`), 410, 'pairing_expired');
    expectError(await collect(redeemed.pairing_id, redeemed.secret), 410, 'pairing_expired');
  });

  it('unknown and malformed codes: 404 resource_missing and 400 parameter_invalid (param code); the body is checked', async () => {
    expectError(await redeem('ZZZZ-2222'), 404, 'resource_missing', 'code');
    expectError(await redeem('0O1IL'), 400, 'parameter_invalid', 'code');
    expectError(await phone().post('/v1/pairings/redeem', { json: {} }), 400, 'parameter_missing', 'code');
    expectError(await phone().post('/v1/pairings/redeem', { json: { code: 'ABCDEFGH', token: 'x' } }), 400, 'parameter_unknown', 'token');
    expectError(await phone().get('/v1/pairings/redeem'), 405, 'method_not_allowed');
    expectError(await phone().post('/v1/pairings/not-an-id/token', { json: { secret: 'x' } }), 404, 'resource_missing');
    // Making a code needs a token.
    expectError(await phone().post('/v1/me/pairings'), 401, 'unauthenticated');
  });

  it('at most 5 codes of a user wait at once', async () => {
    const carol = client(() => s.baseUrl, s.tokens.bob);
    const made: string[] = [];
    for (;;) {
      const r = await carol.post('/v1/me/pairings');
      if (r.status !== 201) {
        expectError(r, 429, 'rate_limited');
        break;
      }
      made.push(r.body.id);
      expect(made.length).toBeLessThanOrEqual(5);
    }
    expect(made.length).toBe(5);
  });

  it('a label from the User-Agent, or the one the device sends', async () => {
    expect(deviceLabel(PHONE_UA)).toBe('Chrome on Android');
    expect(deviceLabel('Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1')).toBe('Safari on iPhone');
    expect(deviceLabel('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on Windows');
    expect(deviceLabel(null)).toBe('A device');
    expect(deviceLabel(PHONE_UA, 'Ward 3 tablet')).toBe('Ward 3 tablet');
    expect(deviceLabel(PHONE_UA, 'bad\nlabel')).toBe('Chrome on Android');
    expect(normaliseCode(' abcd-efgh ')).toBe('ABCDEFGH');
    expect(normaliseCode('ABCD-EFGI')).toBeNull(); // I, O, 0, 1, L, U: look-alikes, not in the alphabet
    expect(normaliseCode('ABCDEFG')).toBeNull();
  });
});

describe('rate limit: RATE_LIMIT_PAIRING_PER_MINUTE redemptions per client address', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTarget({ env: { RATE_LIMIT_PAIRING_PER_MINUTE: '3' } });
  });
  afterAll(() => limited?.stop());

  it('the 4th try within a minute is 429 rate_limited with Retry-After, whatever the code', async () => {
    const anon = client(() => limited.baseUrl);
    for (let i = 0; i < 3; i++) expectError(await anon.post('/v1/pairings/redeem', { json: { code: '22222222' } }), 404, 'resource_missing');
    const r = await anon.post('/v1/pairings/redeem', { json: { code: '22222223' } });
    expectError(r, 429, 'rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    // Signed-in requests are not affected.
    expect((await client(() => limited.baseUrl, limited.tokens.alice).get('/v1/me/devices')).status).toBe(200);
  });
});
