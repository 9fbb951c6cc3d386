// @vitest-environment node
// Live updates: the engine opens GET /v1/events/stream (through fetch, with the token) once a pull
// has found the change feed, and every event it carries reaches the mirror — no poll, no user
// action (applied as it comes, or pulled through /v1/events: live-apply.test.ts). Against the real server and through a proxy-mode server in front of one; the
// stream is cut and silenced at the fake network to see it come back with Last-Event-ID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_KEY, type FeedState } from '../../lib/sync/pull/feed';
import { startProxiedServer } from '../helpers/proxy-target';
import { startTestServer, type TestServer } from '../helpers/server';
import { createToken, revokeToken } from '../../lib/api/domain/tokens';
import { cleanSlate, makeDevice, PLAIN, RecordingClock, until, type Device } from './harness';



const PERIOD = 3_600_000; // an hour: no periodic sync can explain what arrives within a test
const SAFETY = 7_200_000;

function liveDevice(server: TestServer, token: string, options: { silenceMs?: number } = {}) {
  const clock = new RecordingClock();
  const d = makeDevice(server.baseUrl, token, {
    engine: {
      clock,
      periodMs: PERIOD,
      safetyPeriodMs: SAFETY,
      live: { silenceMs: options.silenceMs ?? 30_000, backoff: { baseMs: 50, maxMs: 500 } },
    },
  });
  return { d, clock };
}

const streamRequests = (d: Device) => d.net.seen.filter((r) => r.path.startsWith('/v1/events/stream'));
const listings = (d: Device, from: number) => d.net.seen.slice(from).filter((r) => /^\/v1\/(conversations|files)\?/.test(r.path));


for (const via of ['direct', 'proxy'] as const) {
  describe(`live updates (${via})`, () => {
    let server: TestServer;
    beforeAll(async () => {
      const env = { EVENTS_HEARTBEAT_MS: '50' };
      server = via === 'proxy' ? await startProxiedServer({ env }) : await startTestServer({ env });
    });
    afterAll(async () => server.stop());

    it("another device's change arrives without any sync being asked for; the periodic sync slows to a safety net", async () => {
      const other = await cleanSlate(server.baseUrl, server.tokens.alice);
      const { d, clock } = liveDevice(server, server.tokens.alice);
      d.engine.start();
      await until(() => d.engine.live!.connected);
      await until(() => clock.delays.includes(SAFETY)); // the next periodic sync: the safety net's
      const from = d.net.seen.length;

      const c = await other.createConversation({ contact_id: `live-${via}` });
      await until(async () => (await d.db.conversations.get(c.id)) !== undefined);
      const f = await other.upload(c.id, 'live.txt', new TextEncoder().encode('x'));
      await until(async () => (await d.db.files.get(f.id))?.conversationId === c.id);
      expect(listings(d, from)).toEqual([]); // never relisted
      // The stream carried the events themselves: applied as they came (live-apply.test.ts).
      expect(d.net.seen.slice(from).filter((r) => r.path.startsWith('/v1/events?'))).toEqual([]);

      // Stop (sign-out, worker stop): the stream closes, and the server lets go of it.
      d.engine.stop();
      expect(d.engine.live!.connected).toBe(false);
      await until(() => server.service.hub.size === 0);
      d.close();
    });

    it('reconnects with Last-Event-ID after the stream drops, and gets what happened meanwhile', async () => {
      const other = await cleanSlate(server.baseUrl, server.tokens.bob);
      const { d } = liveDevice(server, server.tokens.bob);
      d.engine.start();
      await until(() => d.engine.live!.connected);
      const first = await other.createConversation({ contact_id: `drop-first-${via}` });
      await until(async () => (await d.db.conversations.get(first.id)) !== undefined);
      const cursor = ((await d.db.meta.get(FEED_KEY))!.value as FeedState).cursor!;
      const streamsBefore = streamRequests(d).length;

      d.net.dropStreams();
      const meanwhile = await other.createConversation({ contact_id: `drop-meanwhile-${via}` });
      await until(async () => (await d.db.conversations.get(meanwhile.id)) !== undefined);
      const reconnect = streamRequests(d)[streamsBefore];
      expect(reconnect).toBeDefined();
      // It resumes after the last event it saw (applied: the feed cursor).
      expect(reconnect!.headers['Last-Event-ID']).toBe(cursor);
      d.engine.stop();
      d.close();
    });
  });
}

describe('live stream health', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { EVENTS_HEARTBEAT_MS: '50', PARLEY_TOKENS: 'alice:alice-live-token-0123456789,alice:alice-live-second-0123456789,bob:bob-live-token-0123456789' },
    });
  });
  afterAll(async () => server.stop());

  it('a stream that goes silent (no heartbeat) is dead: it reconnects, and changes arrive again', async () => {
    const token = 'alice-live-token-0123456789';
    const other = await cleanSlate(server.baseUrl, token);
    const { d } = liveDevice(server, token, { silenceMs: 400 });
    d.engine.start();
    await until(() => d.engine.live!.connected);
    const connections = d.engine.live!.connections;
    for (const stream of d.net.streams) stream.stall();
    await until(() => d.engine.live!.connections > connections && d.engine.live!.connected);
    const c = await other.createConversation({ contact_id: 'after-silence' });
    await until(async () => (await d.db.conversations.get(c.id)) !== undefined);
    d.engine.stop();
    d.close();
  });

  it('a new token closes the stream opened with the old one and reconnects with the new one', async () => {
    const token = 'alice-live-token-0123456789';
    const second = 'alice-live-second-0123456789';
    await cleanSlate(server.baseUrl, token);
    const { d } = liveDevice(server, token);
    d.engine.start();
    await until(() => d.engine.live!.connected);
    const before = streamRequests(d).length;
    await d.engine.signedIn(); // same token: nothing to do
    expect(streamRequests(d)).toHaveLength(before);
    d.setToken(second);
    await d.engine.signedIn();
    await until(() => streamRequests(d).length > before && d.engine.live!.connected);
    expect(streamRequests(d).at(-1)!.headers.Authorization).toBe(`Bearer ${second}`);
    await until(() => server.service.hub.size === 1); // the old one was let go
    d.engine.stop();
    await until(() => server.service.hub.size === 0);
    d.close();
  });

  it('a stream going down and up keeps a retry that is due (and, back up, sends the waiting work at once)', async () => {
    const token = 'alice-live-token-0123456789';
    await cleanSlate(server.baseUrl, token);
    const clock = new RecordingClock();
    const d = makeDevice(server.baseUrl, token, {
      engine: { clock, periodMs: PERIOD, safetyPeriodMs: SAFETY, backoff: { baseMs: 20_000, maxMs: 60_000 }, live: { backoff: { baseMs: 50, maxMs: 500 } } },
    });
    d.engine.start();
    await until(() => d.engine.live!.connected);
    d.net.inject('offline', 'POST');
    await d.client.createConversation({ contact_id: 'retry-while-live' });
    d.engine.requestSync();
    // The create failed and its retry is scheduled (status written once the run is over).
    await until(async () => ((await d.db.meta.get('status'))?.value as { nextRetryAt: number | null } | undefined)?.nextRetryAt != null);
    d.net.dropStreams();
    await until(async () => (await d.db.outbox.count()) === 0);
    d.engine.stop();
    d.close();
  });

  it('a 401 on the stream stops it until the user signs in again', async () => {
    const token = 'alice-live-token-0123456789';
    await cleanSlate(server.baseUrl, token);
    const { d } = liveDevice(server, token);
    d.engine.start();
    await until(() => d.engine.live!.connected);
    d.net.inject({ status: 401, body: { type: 'invalid_request', code: 'unauthenticated', message: 'expired' } }, 'GET', /^\/v1\/events\/stream/);
    const before = streamRequests(d).length;
    d.net.dropStreams();
    await until(() => !d.engine.live!.active);
    expect(streamRequests(d)).toHaveLength(before + 1); // tried once, then stopped (no retry loop)
    d.engine.stop();
    d.close();
  });
});

describe('live updates when the token is revoked', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { STREAM_TOKEN_RECHECK_MS: '50' } });
  });
  afterAll(async () => server.stop());

  it("the stream's unauthenticated error event stops it: no reconnect, no relist", async () => {
    const { token } = await createToken(server.service.db, 'revoked-user', 'phone');
    const { d } = liveDevice(server, token);
    d.engine.start();
    await until(() => d.engine.live!.connected);
    const streams = streamRequests(d).length;
    const seen = d.net.seen.length;
    expect(await revokeToken(server.service.db, token)).toBe(1);
    // The server re-checks the token, sends `event: error` (unauthenticated) and ends the stream.
    await until(() => !d.engine.live!.active);
    expect(streamRequests(d)).toHaveLength(streams); // not reopened (it would be refused anyway)
    expect(listings(d, seen)).toEqual([]); // not mistaken for an expired cursor
    d.engine.stop();
    d.close();
  });
});

describe('live updates against a server without the feed', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: PLAIN });
  });
  afterAll(async () => server.stop());

  it('opens no stream and keeps polling at the normal period', async () => {
    const clock = new RecordingClock();
    const d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { clock, periodMs: PERIOD, safetyPeriodMs: SAFETY, live: {} } });
    d.engine.start();
    // The first sync is over when the engine schedules the next periodic one.
    await until(() => clock.delays.includes(PERIOD));
    expect(streamRequests(d)).toEqual([]);
    expect(d.engine.live!.active).toBe(false);
    expect(clock.delays).not.toContain(SAFETY);
    d.engine.stop();
    d.close();
  });
});
