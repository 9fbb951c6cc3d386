// Rate limits (../shared/API.md, "Limits"): per token, and per client address for requests
// without a valid token; over the limit 429 rate_limited with Retry-After, in the contract's
// error shape; other users unaffected; on PostgreSQL every instance on the database shares them.
// Each server here sets small limits of its own (the test helpers' defaults are generous).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError, type CallResult } from '../helpers/api';
import { startTestServer, TEST_TOKENS, type TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';
import { parseLimitList, type LimitItem } from '../../lib/sync/core/ratelimit-fields';

const viaProxy = process.env.PARLEY_TEST_VIA_PROXY === '1';
const postgres = process.env.PARLEY_TEST_POSTGRES === '1';

const TOKENS = { ...TEST_TOKENS, carol: 'carol-test-token-5555555555', dave: 'dave-test-token-7777777777', erin: 'erin-test-token-8888888888' };
const PARLEY_TOKENS = Object.entries(TOKENS)
  .map(([user, token]) => `${user}:${token}`)
  .join(',');

/**
 * A token may make 3 requests a second (1 every 333 ms), plus a reserve of 4; without a token, 2
 * a second (1 every 500 ms) and a reserve of 2. Requests sent one after another without pause: at
 * least 1 + 4 with a token, 1 + 2 without, go through before a refusal.
 */
const LIMITS = {
  RATE_LIMIT_PER_SECOND: '3',
  RATE_LIMIT_BURST: '4',
  RATE_LIMIT_BURST_SECONDS: '60',
  RATE_LIMIT_ANONYMOUS_PER_SECOND: '2',
  RATE_LIMIT_ANONYMOUS_BURST: '2',
};
const SMALL = { PARLEY_TOKENS, ...LIMITS };

/** Sends `send()` until it answers 429 (at most `max` times): the answers before it, and the 429. */
async function untilLimited(send: () => Promise<CallResult>, max = 200): Promise<{ before: CallResult[]; limited: CallResult | null }> {
  const before: CallResult[] = [];
  for (let i = 0; i < max; i++) {
    const r = await send();
    if (r.status === 429) return { before, limited: r };
    before.push(r);
  }
  return { before, limited: null };
}

function expectRateLimited(r: CallResult | null): number {
  expect(r, 'no request was refused: there is no rate limit').not.toBeNull();
  expectError(r!, 429, 'rate_limited');
  const retryAfter = r!.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  return Number(retryAfter);
}

/** GET from a given local address (127.0.0.2 is this machine too): another client, as the server sees it. */
function getFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { localAddress, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('rate limits', () => {
  let s: TestServer;
  beforeAll(async () => {
    // edgeEnv: through the proxy, the proxy limits too (in its memory), before the upstream does.
    s = await startTarget({ env: SMALL, edgeEnv: LIMITS });
  });
  afterAll(() => s.stop());

  const as = (token: string | null) => client(() => s.baseUrl, token ?? undefined);

  it('over its limit a token is answered 429 rate_limited with Retry-After, then served again after it', async () => {
    const alice = as(TOKENS.alice);
    const { before, limited } = await untilLimited(() => alice.get('/v1/conversations'));
    // The burst goes through whole: the steady share and the reserve.
    expect(before.length).toBeGreaterThanOrEqual(1 + 4);
    for (const r of before) expect(r.status).toBe(200);
    const retryAfter = expectRateLimited(limited);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Writes are counted too, and refused before they act.
    const create = await alice.post('/v1/conversations', { json: { contact_id: 'refused-while-limited' } });
    if (create.status === 429) {
      expectRateLimited(create);
    }
    // What Retry-After promises: after it, the token is served again.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    const again = await alice.get('/v1/conversations?limit=100');
    expect(again.status).toBe(200);
    expect(again.body.data.filter((c: { contact_id: string }) => c.contact_id === 'refused-while-limited').length).toBe(create.status === 201 ? 1 : 0);
  });

  it('every counted answer says where the token stands (RateLimit-Policy, RateLimit); the 429 says nothing is left until Retry-After', async () => {
    const erin = as(TOKENS.erin);
    const { before, limited } = await untilLimited(() => erin.get('/v1/conversations'));
    const retryAfter = expectRateLimited(limited);
    // Through the proxy its own items ("proxy-token") come after the upstream's.
    const name = viaProxy ? 'proxy-token' : 'token';
    const item = (field: string | null, policy = name): LimitItem | undefined => parseLimitList(field)?.find((i) => i.name === policy);
    for (const r of [...before, limited!]) {
      const policy = item(r.headers.get('ratelimit-policy'));
      expect(policy && Object.fromEntries(policy.params)).toEqual({ q: 3, w: 1, 'parley-reserve': 4, 'parley-reserve-w': 60 });
    }
    // What is left now: the share of the moment and the reserve; the first request spent the share.
    const left = before.map((r) => item(r.headers.get('ratelimit'))?.params.get('r'));
    expect(left[0]).toBe(4);
    for (const r of left) expect(r).toBeLessThanOrEqual(4);
    expect(Math.min(...left.map(Number))).toBeLessThanOrEqual(1);
    for (const r of before) expect(item(r.headers.get('ratelimit'))?.params.get('t')).toBeGreaterThanOrEqual(1);
    // Refused: nothing left, for as long as Retry-After says.
    const refused = item(limited!.headers.get('ratelimit'));
    expect(refused?.params.get('r')).toBe(0);
    expect(refused?.params.get('t')).toBe(retryAfter);
  });

  it("another user's requests are not slowed or refused while one token is over its limit", async () => {
    const carol = as(TOKENS.carol);
    const { limited } = await untilLimited(() => carol.post('/v1/conversations', { json: { contact_id: `flood-${Math.random().toString(36).slice(2)}` } }));
    expectRateLimited(limited);
    const bob = as(TOKENS.bob);
    for (let i = 0; i < 1 + 4; i++) expect((await bob.get('/v1/conversations')).status).toBe(200);
  });

  it('requests without a valid token are limited per client address, and never a valid token from that address', async () => {
    const nobody = as(null);
    const wrong = as('not-a-token-of-anyone');
    let n = 0;
    const { before, limited } = await untilLimited(() => (n++ % 2 === 0 ? nobody : wrong).get('/v1/conversations'));
    expect(before.length).toBeGreaterThanOrEqual(1 + 2);
    for (const r of before) expectError(r, 401, 'unauthenticated');
    expectRateLimited(limited);
    // A valid token from the same address has its own limit.
    expect((await as(TOKENS.dave).get('/v1/conversations')).status).toBe(200);
    // Health checks need no token and are not limited (the proxy's are its route handlers').
    if (!viaProxy) expect((await nobody.get('/healthz')).status).toBe(200);
  });

  // Through the proxy, the upstream sees every client at the proxy's address.
  it.skipIf(viaProxy)('another address without a token is not refused for the first one', async () => {
    const nobody = as(null);
    const { limited } = await untilLimited(() => nobody.get('/v1/conversations'));
    expectRateLimited(limited);
    const elsewhere = await getFrom('127.0.0.2', `${s.baseUrl}/v1/conversations`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.code).toBe('unauthenticated');
  });
});

// Through the proxy, the proxy's own limits are always advertised.
describe.skipIf(viaProxy)('a server without the ratelimit extension', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTarget({ env: { ...SMALL, PARLEY_EXTENSIONS: 'idempotency,me' } });
  });
  afterAll(() => s.stop());

  it('limits as before, and says nothing of where the token stands', async () => {
    const { before, limited } = await untilLimited(() => client(() => s.baseUrl, TOKENS.erin).get('/v1/conversations'));
    expectRateLimited(limited);
    for (const r of [...before, limited!]) {
      expect(r.headers.get('ratelimit')).toBeNull();
      expect(r.headers.get('ratelimit-policy')).toBeNull();
    }
  });
});

describe('the write cap (RATE_LIMIT_WRITES_PER_SECOND)', () => {
  // A generous share for everything, but at most 2 writes a second per token (1 per 500 ms window).
  const WRITE_CAP = { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '0', RATE_LIMIT_WRITES_PER_SECOND: '2' };
  let s: TestServer;
  beforeAll(async () => {
    s = await startTarget({ env: { PARLEY_TOKENS, ...WRITE_CAP }, edgeEnv: WRITE_CAP });
  });
  afterAll(() => s.stop());

  it("a token's writes beyond the cap are refused before they act, its reads are not, and another token's writes go on", async () => {
    const alice = client(() => s.baseUrl, TOKENS.alice);
    const dave = client(() => s.baseUrl, TOKENS.dave);
    const contacts = Array.from({ length: 8 }, (_, i) => `capped-${i}-${Math.random().toString(36).slice(2)}`);
    const [writes, reads] = await Promise.all([
      Promise.all(contacts.map((contact_id) => alice.post('/v1/conversations', { json: { contact_id } }))),
      Promise.all(Array.from({ length: 8 }, () => alice.get('/v1/conversations?limit=1'))),
    ]);
    const created = writes.filter((r) => r.status === 201).length;
    expect(created).toBeGreaterThanOrEqual(1);
    expect(created).toBeLessThanOrEqual(2); // a window or two may pass while the eight arrive
    for (const r of writes.filter((w) => w.status !== 201)) expectRateLimited(r);
    for (const r of reads) expect(r.status).toBe(200);
    // A write's answer says where the token's writes stand too; a read's does not.
    const writesItem = (r: CallResult) => parseLimitList(r.headers.get('ratelimit-policy'))?.find((i) => i.name === (viaProxy ? 'proxy-writes' : 'writes'));
    expect(Object.fromEntries(writesItem(writes.find((w) => w.status === 201)!)?.params ?? [])).toEqual({ q: 2, w: 1 });
    expect(writesItem(reads[0]!)).toBeUndefined();
    // Refused writes did nothing: exactly the created ones exist.
    const listed = (await alice.get('/v1/conversations?limit=100')).body.data.filter((c: { contact_id: string }) => contacts.includes(c.contact_id));
    expect(listed).toHaveLength(created);
    expect((await dave.post('/v1/conversations', { json: { contact_id: `dave-${Math.random().toString(36).slice(2)}` } })).status).toBe(201);
  });
});

describe('rate limits off', () => {
  it('RATE_LIMIT_PER_SECOND=0 switches the per-token limit off', async () => {
    const s = await startTestServer({ env: { ...SMALL, RATE_LIMIT_PER_SECOND: '0' } });
    try {
      const alice = client(() => s.baseUrl, TOKENS.alice);
      const { limited } = await untilLimited(() => alice.get('/v1/conversations'), 30);
      expect(limited).toBeNull();
    } finally {
      await s.stop();
    }
  });
});

describe.runIf(postgres && !viaProxy)('rate limits shared by two instances on one PostgreSQL database', () => {
  let database: { url: string; drop(): Promise<void> };
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const { createTestDatabase } = await import('../helpers/postgres');
    database = await createTestDatabase();
    // 1 a second and a reserve of 5: 6 in the first second for both instances together (12 if each counted its own).
    const env = { ...SMALL, DATABASE_URL: database.url, RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '5' };
    a = await startTestServer({ env });
    b = await startTestServer({ env });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
  });

  it('a token over its limit on one instance is over it on the other', async () => {
    const clients = [client(() => a.baseUrl, TOKENS.alice), client(() => b.baseUrl, TOKENS.alice)];
    const answers: number[] = [];
    for (let i = 0; i < 12; i++) answers.push((await clients[i % 2]!.get('/v1/conversations')).status);
    const served = answers.filter((status) => status === 200).length;
    // 6, and one more for each second boundary crossed meanwhile: far below the 12 of two separate counts.
    expect(served).toBeGreaterThanOrEqual(6);
    expect(served).toBeLessThanOrEqual(8);
    expect(answers.slice(6)).toContain(429);
    // Both instances refuse it.
    const onA = await clients[0]!.get('/v1/conversations');
    const onB = await clients[1]!.get('/v1/conversations');
    expect([onA.status, onB.status]).toContain(429);
  });

  it('keeps the counts in PostgreSQL (never the token itself), also for limits that are not whole seconds', async () => {
    const pg = (await import('pg')).default;
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      // 3 a second: a window of 334 ms.
      const c = await startTestServer({ env: { ...SMALL, DATABASE_URL: database.url } });
      try {
        const { limited } = await untilLimited(() => client(() => c.baseUrl, TOKENS.dave).get('/v1/conversations'));
        expectRateLimited(limited);
      } finally {
        await c.stop();
      }
      const { rows } = await db.query<{ key: string }>('select key from parley_rate_limits');
      expect(rows.some((r) => r.key.startsWith('tok:'))).toBe(true);
      expect(rows.some((r) => Object.values(TOKENS).some((token) => r.key.includes(token)))).toBe(false);
    } finally {
      await db.end();
    }
  });
});
