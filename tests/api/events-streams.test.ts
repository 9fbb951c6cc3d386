// The live stream's limits and the feed's per-user cursors (../shared/API.md "Limits"), over real
// HTTP on every project: a revoked token's stream ends; open streams are capped per user and per
// instance; one feed read per change serves all of a user's streams; a backlog drains as fast as
// the client reads; nothing about one user's cursors changes when another user writes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiErrorBody, ChangeEvent, EventPage } from '../../lib/schemas';
import { createToken, revokeToken } from '../../lib/api/domain/tokens';
import { client, expectError } from '../helpers/api';
import { openSse, type SseConnection } from '../helpers/sse';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';
import type { TwoInstances } from '../helpers/two-instances';

const MAX_PER_USER = 8;
const MAX_TOTAL = 10;

let s: TestServer;
/** Caps and channels are per instance: with two instances, the first one, talked to directly. */
let one: TestServer;
const open: SseConnection[] = [];

beforeAll(async () => {
  s = await startTarget({
    env: {
      EVENTS_HEARTBEAT_MS: '30000',
      STREAM_TOKEN_RECHECK_MS: '50',
      MAX_STREAMS_PER_USER: String(MAX_PER_USER),
      MAX_STREAMS: String(MAX_TOTAL),
    },
  });
  one = 'instances' in s ? (s as TwoInstances).instances[0] : s;
});
afterAll(() => s.stop());
afterEach(async () => {
  for (const stream of open.splice(0)) stream.close();
  // The server lets go of streams their clients closed (so the caps start from zero).
  while (s.service.hub.size > 0) await new Promise((r) => setTimeout(r, 10));
});

async function stream(token: string, headers: Record<string, string> = {}, base = one.baseUrl): Promise<SseConnection> {
  const connection = await openSse(`${base}/v1/events/stream`, { authorization: `Bearer ${token}`, ...headers });
  open.push(connection);
  return connection;
}

/** A stream that is open and attached (its first line arrived). */
async function connected(token: string, headers: Record<string, string> = {}, base = one.baseUrl): Promise<SseConnection> {
  const connection = await stream(token, headers, base);
  expect(connection.status).toBe(200);
  await connection.comment('connected');
  return connection;
}

async function expectRefused(token: string) {
  const refused = await stream(token);
  expect(refused.status).toBe(429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  const body = ApiErrorBody.parse(JSON.parse(await refused.text()));
  expect(body).toMatchObject({ type: 'invalid_request', code: 'rate_limited' });
}

const head = async (c: ReturnType<typeof client>) => EventPage.parse((await c.get('/v1/events?limit=0')).body).next;

describe('a stream re-checks its token', () => {
  it('ends with an unauthenticated error event once its token is revoked; other streams go on', async () => {
    const { token } = await createToken(s.service.db, 'revoked-user');
    const { token: kept } = await createToken(s.service.db, 'revoked-user');
    const doomed = await connected(token);
    const staying = await connected(kept);
    // The token is freshly in the authentication cache (a request just used it) when it is revoked.
    expect((await client(() => one.baseUrl, token).get('/v1/me')).status).toBe(200);
    const hub = one.service.hub;
    expect(await revokeToken(s.service.db, token)).toBe(1);
    const roundsAtRevocation = hub.stats.tokenRechecks;
    const message = await doomed.next((m) => m.event === 'error');
    expect(ApiErrorBody.parse(JSON.parse(message.data))).toMatchObject({ type: 'invalid_request', code: 'unauthenticated' });
    await doomed.ended();
    // Within two re-check rounds (the one running when it was revoked may have read before): the
    // re-check does not wait for the 10 s cache to forget the token.
    expect(hub.stats.tokenRechecks - roundsAtRevocation).toBeLessThanOrEqual(2);
    // The other token of the same user still streams.
    const made = (await client(() => one.baseUrl, kept).post('/v1/conversations', { json: { contact_id: 'still-here' } })).body;
    expect((await staying.next((m) => m.data.includes(made.id))).event).toBeNull();
  });
});

describe('open streams are capped', () => {
  it(`per user (${MAX_PER_USER}) and per instance (${MAX_TOTAL}): 429 rate_limited with Retry-After, other users unaffected`, async () => {
    const alice: SseConnection[] = [];
    for (let i = 0; i < MAX_PER_USER; i++) alice.push(await connected(s.tokens.alice));
    await expectRefused(s.tokens.alice);
    // Bob is not held to alice's cap, only to the instance's.
    for (let i = MAX_PER_USER; i < MAX_TOTAL; i++) await connected(s.tokens.bob);
    await expectRefused(s.tokens.bob);
    await expectRefused(s.tokens.alice);
    // A stream closed by its client makes room again.
    alice[0]!.close();
    while (one.service.hub.size >= MAX_TOTAL) await new Promise((r) => setTimeout(r, 10));
    const again = await connected(s.tokens.alice);
    const made = (await client(() => one.baseUrl, s.tokens.alice).post('/v1/conversations', { json: { contact_id: 'after-cap' } })).body;
    await again.next((m) => m.data.includes(made.id));
  });
});

describe('one feed read per change for all of a user’s streams', () => {
  it('streams that are caught up share one read per write, and pokes arriving during a read make one more read, not one each', async () => {
    const alice = client(() => one.baseUrl, s.tokens.alice);
    const streams: SseConnection[] = [];
    for (let i = 0; i < MAX_PER_USER; i++) streams.push(await connected(s.tokens.alice));
    const everyoneGets = async (id: string) => {
      for (const st of streams) await st.next((m) => m.data.includes(id));
    };
    const hub = one.service.hub;
    // Settle: the channel's first read (and, with PostgreSQL, the NOTIFY of this write) are done.
    await everyoneGets((await alice.post('/v1/conversations', { json: { contact_id: 'fan-settle' } })).body.id);

    let before = { ...hub.stats };
    await everyoneGets((await alice.post('/v1/conversations', { json: { contact_id: 'fan-1' } })).body.id);
    // One read for the write (a second one at most, for PostgreSQL's NOTIFY of the same commit).
    expect(hub.stats.channelReads - before.channelReads).toBeGreaterThanOrEqual(1);
    expect(hub.stats.channelReads - before.channelReads).toBeLessThanOrEqual(2);
    expect(hub.stats.catchUpReads - before.catchUpReads).toBe(0);

    before = { ...hub.stats };
    for (let i = 0; i < 100; i++) hub.publish('alice'); // a burst of pokes
    await everyoneGets((await alice.post('/v1/conversations', { json: { contact_id: 'fan-2' } })).body.id);
    expect(hub.stats.channelReads - before.channelReads).toBeLessThanOrEqual(4);
    expect(hub.stats.catchUpReads - before.catchUpReads).toBe(0);
  });
});

describe('a backlog drains as fast as the client reads', () => {
  const BACKLOG = 3000;

  /** BACKLOG events of `user` written straight into the feed (deletions: they render without their objects). */
  async function backlog(user: string, tag: string) {
    const now = Math.floor(Date.now() / 1000);
    const rows = Array.from({ length: BACKLOG }, (_, i) => ({
      user_id: user,
      type: 'conversation.deleted' as const,
      object_id: `${tag}${String(i).padStart(16 - tag.length, '0')}`,
      conversation_id: null,
      created_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await s.service.db.insertInto('events').values(rows.slice(i, i + 500)).execute();
    return rows.map((r) => r.object_id);
  }

  async function receiveAll(connection: SseConnection, expected: string[]) {
    const got: string[] = [];
    while (got.length < expected.length) {
      const message = await connection.next((m) => m.id !== null || m.event === 'error');
      const event = ChangeEvent.parse(JSON.parse(message.data));
      expect(message.id).toBe(event.id);
      got.push(event.object.id);
    }
    expect(got).toEqual(expected);
  }

  // The time limit only makes a stall fail rather than wait for the heartbeat (30 s here) to
  // unstick it; 3,000 events take well under a second.
  const STALL = 25_000;

  it(`a stream opened ${BACKLOG} events behind receives all of them (its user's first stream)`, async () => {
    const { token } = await createToken(s.service.db, 'backlog-user');
    const start = await head(client(() => one.baseUrl, token));
    const ids = await backlog('backlog-user', 'B');
    await receiveAll(await connected(token, { 'last-event-id': start }), ids);
  }, STALL);

  it(`a stream opened ${BACKLOG} events behind the user's other streams catches up on its own, then follows with them`, async () => {
    const alice = client(() => one.baseUrl, s.tokens.alice);
    const start = await head(alice);
    const ids = await backlog('alice', 'C');
    const current = await connected(s.tokens.alice); // at the head, after the backlog
    const hub = one.service.hub;
    const before = hub.stats.catchUpReads;
    const behind = await connected(s.tokens.alice, { 'last-event-id': start });
    await receiveAll(behind, ids);
    expect(hub.stats.catchUpReads - before).toBeGreaterThanOrEqual(BACKLOG / 500);
    const made = (await alice.post('/v1/conversations', { json: { contact_id: 'after-backlog' } })).body;
    for (const st of [current, behind]) {
      const event = ChangeEvent.parse(JSON.parse((await st.next((m) => m.id !== null)).data));
      expect(event.object.id).toBe(made.id);
    }
  }, STALL);
});

describe('cursors are per user and opaque', () => {
  it('0 is everyone’s cursor of the feed’s beginning: the user’s own events from the first', async () => {
    const a = client(() => s.baseUrl, (await createToken(s.service.db, 'from-zero')).token);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await a.post('/v1/conversations', { json: { contact_id: `zero-${i}` } })).body.id);
    const page = EventPage.parse((await a.get('/v1/events?after=0&limit=1000')).body);
    expect(page.data.map((e) => e.object.id)).toEqual(made);
    expect(page.next).toBe(await head(a));
  });

  it('another user’s writes (and their purge) change nothing about a user’s cursors: head, next, ids, 410', async () => {
    const a = client(() => s.baseUrl, (await createToken(s.service.db, 'cursor-a')).token);
    const bToken = (await createToken(s.service.db, 'cursor-b')).token;
    const b = client(() => s.baseUrl, bToken);
    const start = await head(a);
    for (let i = 0; i < 3; i++) await a.post('/v1/conversations', { json: { contact_id: `mine-${i}` } });
    /** What a's cursors answer: the head, the pages after `start` and after the head, and a forged cursor. */
    const observe = async () => {
      const h = await head(a);
      const fromStart = (await a.get(`/v1/events?after=${start}&limit=2`)).body;
      const rest = (await a.get(`/v1/events?after=${fromStart.next}&limit=1000`)).body;
      const atHead = (await a.get(`/v1/events?after=${h}&limit=1000`)).body;
      const headCheck = await a.get(`/v1/events?after=${h}&limit=0`);
      // Cursors a could craft: forged ones, and numbers just past a's head (were cursors the global
      // event number, these would tell how far everyone else's writes have gone).
      const base = /^\d+$/.test(h) ? Number(h) : 0;
      const crafted: Record<string, unknown> = {};
      for (const probe of ['B'.repeat(22), ...[1, 2, 5, 10, 20, 40].map((k) => String(base + k))]) {
        const r = await a.get(`/v1/events?after=${probe}&limit=0`);
        crafted[probe] = [r.status, r.body.code ?? r.body.next];
      }
      return {
        head: h,
        pages: [fromStart, rest, atHead].map((p) => ({ next: p.next, has_more: p.has_more, ids: p.data.map((e: ChangeEvent) => e.id) })),
        headCheck: [headCheck.status, headCheck.body],
        crafted,
      };
    };
    const seen = await observe();
    expect(seen.pages[0]!.ids).toHaveLength(2);
    expect(seen.pages[1]!.ids).toHaveLength(1);
    expect(seen.pages[2]).toEqual({ next: seen.head, has_more: false, ids: [] });

    // b writes a lot; a's answers stay the same, to the byte.
    for (let i = 0; i < 20; i++) await b.post('/v1/conversations', { json: { contact_id: `theirs-${i}` } });
    expect(await observe()).toEqual(seen);
    // Still the same while b follows a stream and goes on writing.
    const bStream = await connected(bToken, {}, s.baseUrl);
    for (let i = 0; i < 5; i++) {
      const made = (await b.post('/v1/conversations', { json: { contact_id: `more-${i}` } })).body;
      await b.put(`/v1/conversations/${made.id}`, { json: { is_pinned: true } });
      await bStream.next((m) => m.data.includes(made.id));
    }
    expect(await observe()).toEqual(seen);

    // The retention purge takes everyone's old events: a's cursor at a's head stays valid however
    // much b wrote after it (a lost nothing after it), and a's older cursor expires (a did).
    await s.service.db.updateTable('events').set({ created_at: 0 }).execute();
    await s.service.purgeExpired();
    expect(await head(a)).toBe(seen.head);
    expect((await a.get(`/v1/events?after=${seen.head}&limit=1000`)).body).toEqual({ data: [], has_more: false, next: seen.head });
    expectError(await a.get(`/v1/events?after=${start}`), 410, 'events_expired', 'after');
    // b's cursors are b's: a's head in b's hands is not a cursor of b's.
    expectError(await b.get(`/v1/events?after=${seen.head}&limit=0`), 410, 'events_expired', 'after');
  });
});
