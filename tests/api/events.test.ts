// The change feed (GET /v1/events) and its live stream (GET /v1/events/stream), over real HTTP, on
// every project (SQLite, PostgreSQL, through a proxy).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeEvent, Conversation, EventPage, FileObject } from '../../lib/schemas';
import { client, expectError } from '../helpers/api';
import { openSse } from '../helpers/sse';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;
let bob: ReturnType<typeof client>;

beforeAll(async () => {
  s = await startTarget({ env: { EVENTS_HEARTBEAT_MS: '50' } });
  alice = client(() => s.baseUrl, s.tokens.alice);
  bob = client(() => s.baseUrl, s.tokens.bob);
});
afterAll(() => s.stop());

/** Waits for a condition the server reaches on its own (a closed socket noticed), within the test timeout. */
async function waitFor(condition: () => boolean) {
  while (!condition()) await new Promise((r) => setTimeout(r, 20));
}

const head = async (c = alice) => {
  const r = await c.get('/v1/events?limit=0');
  expect(r.status).toBe(200);
  const page = EventPage.parse(r.body);
  expect(page).toEqual({ data: [], has_more: false, next: page.next });
  return page.next;
};

/** Every event after `after`, following `next` until has_more is false; also the requests made. */
async function follow(after: string, c = alice, limit = 1000) {
  const events: ChangeEvent[] = [];
  let requests = 0;
  for (let cursor = after; ; ) {
    const r = await c.get(`/v1/events?after=${cursor}&limit=${limit}`);
    requests++;
    expect(r.status, r.text).toBe(200);
    const page = EventPage.parse(r.body);
    events.push(...page.data);
    cursor = page.next;
    if (!page.has_more) return { events, requests, next: cursor };
  }
}

describe('GET /v1/events', () => {
  it('tells the head without a cursor, and the same with limit=0', async () => {
    const h = await head();
    const r = await alice.get('/v1/events');
    expect(r.body).toEqual({ data: [], has_more: false, next: h });
  });

  it('records every kind of change, oldest first, with the object as GET returns it', async () => {
    const start = await head();
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'feed-1' } })).body;
    const upload = (await alice.upload({ conversation_id: c.id }, { name: 'a.pdf', bytes: '%PDF-1.4 a', type: 'application/pdf' })).body;
    const { events: created } = await follow(start);
    // The upload raised last_active_at: the conversation is rendered as it is now.
    const now = Conversation.parse((await alice.get(`/v1/conversations/${c.id}`)).body);
    // Created, then raised by the upload: one object, one event (its last). The upload raises the
    // conversation first (that takes its row lock, see Conversations.touch), then adds the file.
    expect(created.map((e) => [e.type, e.object.id])).toEqual([
      ['conversation.updated', c.id],
      ['file.created', upload.id],
    ]);
    const byObject = new Map(created.map((e) => [e.object.id, e]));
    expect(byObject.get(c.id)!.object).toEqual(now);
    const fileEvent = byObject.get(upload.id)!;
    expect(fileEvent.type).toBe('file.created');
    expect(fileEvent.object).toEqual(FileObject.parse((await alice.get(`/v1/files/${upload.id}`)).body));
    expect((fileEvent as { conversation_id: string }).conversation_id).toBe(c.id);
    // Each event's id is a cursor: what follows it is the rest.
    expect(created[0]!.id).not.toBe(start);
    expect((await follow(created[0]!.id)).events).toEqual(created.slice(1));

    const mid = created.at(-1)!.id;
    await alice.put(`/v1/files/${upload.id}`, { json: { filename: 'b.pdf' } });
    await alice.del(`/v1/files/${upload.id}`);
    await alice.put(`/v1/conversations/${c.id}`, { json: { is_pinned: true } });
    await alice.del(`/v1/conversations/${c.id}`);
    const { events: later } = await follow(mid);
    // The rename collapses into the deletion (same object, same page); the pin into the deletion.
    expect(later.map((e) => [e.type, e.object])).toEqual([
      ['file.deleted', { id: upload.id }],
      ['conversation.deleted', { id: c.id }],
    ]);
    expect(later[0]).toMatchObject({ conversation_id: c.id });
  });

  it('pages with limit and has_more, each event once, and a quiet feed costs one request', async () => {
    const start = await head();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await alice.post('/v1/conversations', { json: { contact_id: `page-${i}` } })).body.id);
    const small = await follow(start, alice, 10);
    expect(small.requests).toBe(3);
    expect(small.events.map((e) => e.object.id)).toEqual(ids);
    // Cursors are opaque: distinct, and each one resumes right after its event.
    const cursors = small.events.map((e) => e.id);
    expect(new Set(cursors).size).toBe(cursors.length);
    for (const i of [0, 9, 17]) {
      expect((await follow(cursors[i]!)).events.map((e) => e.object.id)).toEqual(ids.slice(i + 1));
    }
    const quiet = await follow(small.next);
    expect(quiet).toEqual({ events: [], requests: 1, next: small.next });
  });

  it('sees only the caller’s own changes', async () => {
    const aliceStart = await head();
    const bobStart = await head(bob);
    await alice.post('/v1/conversations', { json: { contact_id: 'private-to-alice' } });
    const bobs = (await bob.post('/v1/conversations', { json: { contact_id: 'private-to-bob' } })).body;
    expect((await follow(bobStart, bob)).events.map((e) => e.object.id)).toEqual([bobs.id]);
    // Alice's cursor in bob's hands is not a cursor of his: relist (nothing of alice's shows).
    expectError(await bob.get(`/v1/events?after=${aliceStart}`), 410, 'events_expired', 'after');
    expectError(await bob.get(`/v1/events?after=${aliceStart}&limit=0`), 410, 'events_expired', 'after');
  });

  it('refuses bad cursors, limits and parameters in the contract’s shape', async () => {
    expectError(await alice.get('/v1/events?after=abc'), 400, 'parameter_invalid', 'after');
    const h = await head();
    expectError(await alice.get(`/v1/events?after=${h}&limit=1001`), 400, 'parameter_invalid', 'limit');
    expectError(await alice.get(`/v1/events?after=${h}&after=${h}`), 400, 'parameter_invalid', 'after');
    expectError(await alice.get('/v1/events?since=1'), 400, 'parameter_unknown', 'since');
    expectError(await alice.post('/v1/events', { json: {} }), 405, 'method_not_allowed');
    expectError(await alice.get('/v1/events', { token: null }), 401, 'unauthenticated');
    // A cursor this database never issued (a forged one, one from another database or from before
    // a reset): relist. So does a decimal cursor of earlier versions.
    for (const after of ['A'.repeat(22), 'Zm9yZ2VkLWN1cnNvci0xMg', '1', '123456']) {
      expectError(await alice.get(`/v1/events?after=${after}`), 410, 'events_expired', 'after');
      expectError(await alice.get(`/v1/events?after=${after}&limit=0`), 410, 'events_expired', 'after');
    }
    // Shaped like no cursor at all: a bad request.
    expectError(await alice.get(`/v1/events?after=${h}x`), 400, 'parameter_invalid', 'after');
  });

  it('answers 410 events_expired for a cursor older than the retention, and goes on from the head', async () => {
    const old = await head();
    await alice.post('/v1/conversations', { json: { contact_id: 'before-purge' } });
    // Age every event past the retention, then purge as the hourly job does.
    await s.service.db.updateTable('events').set({ created_at: 0 }).execute();
    await s.service.purgeExpired();
    expectError(await alice.get(`/v1/events?after=${old}`), 410, 'events_expired', 'after');
    expectError(await alice.get(`/v1/events?after=${old}&limit=0`), 410, 'events_expired', 'after');
    const fresh = await head();
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'after-purge' } })).body;
    expect((await follow(fresh)).events.map((e) => e.object.id)).toEqual([c.id]);
  });
});

describe('GET /v1/events/stream', () => {
  const auth = () => ({ authorization: `Bearer ${s.tokens.alice}` });

  it('streams each change as it commits, with heartbeats, and resumes from Last-Event-ID', async () => {
    const stream = await openSse(`${s.baseUrl}/v1/events/stream`, auth());
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      await stream.comment('heartbeat');
      const c = (await alice.post('/v1/conversations', { json: { contact_id: 'live-1' } })).body;
      const message = await stream.next((m) => m.data.includes(c.id));
      const event = ChangeEvent.parse(JSON.parse(message.data));
      expect(event).toMatchObject({ type: 'conversation.created', object: c });
      expect(message.id).toBe(event.id);

      const f = (await alice.upload({ conversation_id: c.id }, { name: 'live.txt', bytes: 'x' })).body;
      const fileMessage = await stream.next((m) => m.data.includes(f.id));
      const fileEvent = ChangeEvent.parse(JSON.parse(fileMessage.data));
      // Through a proxy, the file_url is on the proxy's own origin, as in every other answer.
      expect(fileEvent.object).toEqual(f);

      // A new connection with Last-Event-ID gets what came after it, nothing before.
      const resumed = await openSse(`${s.baseUrl}/v1/events/stream`, { ...auth(), 'last-event-id': message.id! });
      try {
        const first = await resumed.next((m) => m.id !== null);
        expect(first.id).not.toBe(message.id);
        // The upload's own changes: the conversation raised, then the file.
        expect(ChangeEvent.parse(JSON.parse(first.data))).toMatchObject({ type: 'conversation.updated', object: { id: c.id } });
        const second = ChangeEvent.parse(JSON.parse((await resumed.next((m) => m.id !== null)).data));
        expect(second).toMatchObject({ type: 'file.created', object: { id: f.id } });
      } finally {
        resumed.close();
      }
    } finally {
      stream.close();
    }
  });

  it('refuses an expired or malformed cursor before streaming, and other users’ changes never arrive', async () => {
    expectError(await alice.get('/v1/events/stream?after=zzz'), 400, 'parameter_invalid', 'after');
    expectError(await alice.get('/v1/events/stream?limit=5'), 400, 'parameter_unknown', 'limit');
    expectError(await alice.get('/v1/events/stream', { token: null }), 401, 'unauthenticated');
    const stream = await openSse(`${s.baseUrl}/v1/events/stream`, auth());
    try {
      const bobs = (await bob.post('/v1/conversations', { json: { contact_id: 'bob-live' } })).body;
      const mine = (await alice.post('/v1/conversations', { json: { contact_id: 'alice-live' } })).body;
      const next = await stream.next((m) => m.id !== null);
      expect(next.data).toContain(mine.id);
      expect(next.data).not.toContain(bobs.id);
    } finally {
      stream.close();
    }
  });

  it('lets go of every stream its client closed', async () => {
    const service = s.service;
    // The streams of the tests above were closed by their clients: the server lets go of them.
    await waitFor(() => service.hub.size === 0);
    const stream = await openSse(`${s.baseUrl}/v1/events/stream`, auth());
    await stream.comment('heartbeat');
    expect(service.hub.size).toBe(1);
    stream.close();
    await waitFor(() => service.hub.size === 0);
  });
});

describe('without the extension', () => {
  it('a server without the events extension answers the feed like an unknown route', async () => {
    const plain = await startTarget({ env: { PARLEY_EXTENSIONS: 'idempotency,me' } });
    try {
      const c = client(() => plain.baseUrl, plain.tokens.alice);
      expectError(await c.get('/v1/events?limit=0'), 404, 'resource_missing');
      expectError(await c.get('/v1/events/stream'), 404, 'resource_missing');
    } finally {
      await plain.stop();
    }
  });
});
