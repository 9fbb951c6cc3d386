// @vitest-environment node
// The live stream's events applied as they come: they are the change feed's own, so an event that is
// the next after the stored cursor is written with its id as the cursor, in one transaction, with no
// GET /v1/events. Anything the stream's word cannot place after the stored cursor — a message that
// is not an event (a poke), an event sent twice, a cursor the feed already moved — is left to the
// feed. Against the real server (direct and through a proxy-mode server); the stream's messages are
// rewritten between the two (tests/sync/harness.ts `streamFilter`) to make the gaps and repeats.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_KEY, type FeedState } from '../../lib/sync/pull/feed';
import { startProxiedServer } from '../helpers/proxy-target';
import { startTestServer, type TestServer } from '../helpers/server';
import { cleanSlate, makeDevice, RecordingClock, until, type Device } from './harness';
import { IDBFactory } from 'fake-indexeddb';

const HOUR = 3_600_000;

/**
 * A device holding the live stream. `pokes: 'never'`: a poke (or a run left to the feed) never
 * pulls by itself, so whatever arrives came from the stream, and a test says when the feed is read.
 */
function liveDevice(server: TestServer, token: string, options: { pokes?: 'pull' | 'never'; indexedDB?: IDBFactory; name?: string } = {}) {
  return makeDevice(server.baseUrl, token, {
    indexedDB: options.indexedDB,
    name: options.name,
    engine: {
      clock: new RecordingClock(),
      periodMs: HOUR,
      safetyPeriodMs: 2 * HOUR,
      pokeDebounceMs: options.pokes === 'never' ? HOUR : 50,
      live: { silenceMs: 30_000, backoff: { baseMs: 50, maxMs: 500 } },
    },
  });
}

async function storedCursor(d: Device): Promise<string | null> {
  return ((await d.db.meta.get(FEED_KEY))?.value as FeedState | undefined)?.cursor ?? null;
}

/** The server's head cursor for this token: the id of the user's last event. */
async function head(server: TestServer, token: string): Promise<string> {
  const response = await fetch(`${server.baseUrl}/v1/events?limit=0`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as { next: string }).next;
}

/** GET /v1/events requests (the feed, not its stream) since `from`. */
const feedReads = (d: Device, from = 0) => d.net.seen.slice(from).filter((r) => r.path.startsWith('/v1/events?'));
/** An SSE message that carries an event (the stream's `id:` line). */
const isEvent = (message: string) => /^id: /m.test(message);

async function started(d: Device) {
  d.engine.start();
  await until(() => d.engine.live?.connected === true);
  await d.engine.settled();
}

/** Waits until the stream has handed in `count` messages in all and the engine has dealt with them. */
async function received(d: Device, count: number) {
  await until(() => d.engine.live!.messages >= count);
  await d.engine.settled();
}

for (const via of ['direct', 'proxy'] as const) {
  describe(`live events applied from the stream (${via})`, () => {
    let server: TestServer;
    beforeAll(async () => {
      const env = { EVENTS_HEARTBEAT_MS: '200' };
      server = via === 'proxy' ? await startProxiedServer({ env }) : await startTestServer({ env });
    });
    afterAll(async () => server.stop());

    it('creations, changes and deletions arrive from the stream alone: no GET /v1/events, the cursor is the last event', async () => {
      const token = server.tokens.alice;
      const other = await cleanSlate(server.baseUrl, token);
      const d = liveDevice(server, token, { pokes: 'never' });
      await started(d);
      const from = d.net.seen.length;

      const c = await other.createConversation({ contact_id: `applied-${via}` });
      await until(async () => (await d.db.conversations.get(c.id)) !== undefined);
      expect(await storedCursor(d)).toBe(await head(server, token));

      const f = await other.upload(c.id, 'live.txt', new TextEncoder().encode('x'));
      await until(async () => (await d.db.files.get(f.id))?.conversationId === c.id);
      expect((await other.send('PUT', `/v1/conversations/${c.id}`, undefined, { is_muted: true })).status).toBe(200);
      await until(async () => (await d.db.conversations.get(c.id))?.is_muted === true);
      expect((await other.send('DELETE', `/v1/files/${f.id}`)).status).toBe(204);
      await until(async () => (await d.db.files.get(f.id)) === undefined);
      expect(await storedCursor(d)).toBe(await head(server, token));

      expect(feedReads(d, from)).toEqual([]);
      expect(d.engine.streamed.refused).toBe(0);
      expect(d.engine.streamed.applied).toBeGreaterThanOrEqual(4);
      d.engine.stop();
      d.close();
    });
  });
}

describe('live events: what the stream cannot vouch for goes to the feed', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { EVENTS_HEARTBEAT_MS: '200' } });
  });
  afterAll(async () => server.stop());

  it('the cursor is kept with the rows: a new engine on the same database resumes from the last streamed event', async () => {
    const token = server.tokens.alice;
    const other = await cleanSlate(server.baseUrl, token);
    const indexedDB = new IDBFactory();
    const d = liveDevice(server, token, { pokes: 'never', indexedDB, name: 'streamed-cursor' });
    await started(d);
    const c = await other.createConversation({ contact_id: 'streamed-cursor' });
    await until(async () => (await d.db.conversations.get(c.id)) !== undefined);
    const cursor = await storedCursor(d);
    expect(cursor).toBe(await head(server, token));
    d.engine.stop();
    d.close();

    // The app starts again: its first pull asks for what came after that cursor, and nothing did.
    const again = liveDevice(server, token, { pokes: 'never', indexedDB, name: 'streamed-cursor' });
    const before = await again.db.conversations.count();
    await again.engine.syncOnce();
    expect(feedReads(again).map((r) => new URL(r.path, server.baseUrl).searchParams.get('after'))).toEqual([cursor]);
    expect(await again.db.conversations.count()).toBe(before);
    // Its stream resumes from there too.
    await started(again);
    const streams = again.net.seen.filter((r) => r.path.startsWith('/v1/events/stream'));
    expect(streams.at(-1)!.headers['Last-Event-ID']).toBe(cursor);
    again.engine.stop();
    again.close();
  });

  it('a gap: after an event the stream did not carry (only a poke with its id), nothing is applied on its word until the feed catches up', async () => {
    const token = server.tokens.bob;
    const other = await cleanSlate(server.baseUrl, token);
    const d = liveDevice(server, token, { pokes: 'never' });
    await started(d);
    const cursor = await storedCursor(d);
    const messages = d.engine.live!.messages;
    // The first event arrives as a bare poke (its id, no event): its change is missing here.
    let poked = false;
    d.net.streamFilter = (message) => {
      if (!isEvent(message) || poked) return [message];
      poked = true;
      return [message.replace(/^data: .*$/m, 'data: something changed')];
    };
    const x = await other.createConversation({ contact_id: 'gap-missed' });
    const y = await other.createConversation({ contact_id: 'gap-after' });
    await received(d, messages + 2);

    // y is the next event after x on the stream, not after the stored cursor: not applied.
    expect(await d.db.conversations.get(y.id)).toBeUndefined();
    expect(await d.db.conversations.get(x.id)).toBeUndefined();
    expect(await storedCursor(d)).toBe(cursor);
    expect(d.engine.streamed.applied).toBe(0);

    // The feed catches up from the stored cursor: both arrive, the cursor is the last event.
    const from = d.net.seen.length;
    await d.engine.syncOnce();
    expect(feedReads(d, from).map((r) => new URL(r.path, server.baseUrl).searchParams.get('after'))).toEqual([cursor]);
    expect(await d.db.conversations.get(x.id)).toBeDefined();
    expect(await d.db.conversations.get(y.id)).toBeDefined();
    expect(await storedCursor(d)).toBe(await head(server, token));

    // And the stream's events are applied as they come again.
    const z = await other.createConversation({ contact_id: 'gap-then' });
    await until(async () => (await d.db.conversations.get(z.id)) !== undefined);
    expect(d.engine.streamed.applied).toBe(1);
    expect(await storedCursor(d)).toBe(await head(server, token));
    d.engine.stop();
    d.close();
  });

  it('a poke with the normal pace: the feed catches up at once, and the missed change arrives', async () => {
    const token = server.tokens.bob;
    const other = await cleanSlate(server.baseUrl, token);
    const d = liveDevice(server, token, { pokes: 'pull' });
    await started(d);
    const cursor = await storedCursor(d);
    let poked = false;
    d.net.streamFilter = (message) => {
      if (!isEvent(message) || poked) return [message];
      poked = true;
      return [message.replace(/^data: .*$/m, 'data: something changed')];
    };
    const from = d.net.seen.length;
    const x = await other.createConversation({ contact_id: 'poke-missed' });
    await until(async () => (await d.db.conversations.get(x.id)) !== undefined);
    expect(feedReads(d, from)[0]!.path).toContain(`after=${cursor}`);
    await until(async () => (await storedCursor(d)) === (await head(server, token)));
    d.engine.stop();
    d.close();
  });

  it('an event sent twice is applied once: its repeat after a newer event does not bring the older state (or cursor) back', async () => {
    const token = server.tokens.alice;
    const other = await cleanSlate(server.baseUrl, token);
    const d = liveDevice(server, token, { pokes: 'never' });
    await started(d);
    const messages = d.engine.live!.messages;
    // The first event (the creation: not muted) is sent again right after the second (muted).
    let first: string | null = null;
    let repeated = false;
    d.net.streamFilter = (message) => {
      if (!isEvent(message)) return [message];
      if (first === null) {
        first = message;
        return [message];
      }
      if (repeated) return [message];
      repeated = true;
      return [message, first];
    };
    const c = await other.createConversation({ contact_id: 'sent-twice' });
    await until(async () => (await d.db.conversations.get(c.id)) !== undefined);
    expect((await other.send('PUT', `/v1/conversations/${c.id}`, undefined, { is_muted: true })).status).toBe(200);
    await received(d, messages + 3);

    expect((await d.db.conversations.get(c.id))?.is_muted).toBe(true);
    expect(await storedCursor(d)).toBe(await head(server, token));
    expect(d.engine.streamed.applied).toBe(2);
    d.engine.stop();
    d.close();
  });

  it('an event the feed already brought (a pull ran meanwhile) is not applied again', async () => {
    const token = server.tokens.bob;
    const other = await cleanSlate(server.baseUrl, token);
    const d = liveDevice(server, token, { pokes: 'never' });
    await started(d);
    const messages = d.engine.live!.messages;
    // Just before a pull asks the feed, another device makes a change, and the stream hands it in.
    let c: { id: string } | null = null;
    d.net.inject(
      {
        before: async () => {
          c = await other.createConversation({ contact_id: 'raced' });
          await until(() => d.engine.live!.messages > messages);
        },
      },
      'GET',
      /^\/v1\/events\?/,
    );
    await d.engine.syncOnce();
    await d.engine.settled();
    expect(await d.db.conversations.get(c!.id)).toBeDefined();
    expect(await storedCursor(d)).toBe(await head(server, token));
    // The stream's run came after the pull had moved the cursor past it: left alone.
    expect(d.engine.streamed).toEqual({ applied: 0, refused: 1 });
    d.engine.stop();
    d.close();
  });

  it('a stream that only pokes (no event in its messages): every change comes through the feed', async () => {
    const token = server.tokens.alice;
    const other = await cleanSlate(server.baseUrl, token);
    const d = liveDevice(server, token, { pokes: 'pull' });
    d.net.streamFilter = (message) => [message.replace(/^data: .*$/m, 'data: poke')];
    await started(d);
    const from = d.net.seen.length;
    const c = await other.createConversation({ contact_id: 'pokes-only' });
    await until(async () => (await d.db.conversations.get(c.id)) !== undefined);
    expect(feedReads(d, from).length).toBeGreaterThan(0);
    expect(d.engine.streamed.applied).toBe(0);
    d.engine.stop();
    d.close();
  });
});
