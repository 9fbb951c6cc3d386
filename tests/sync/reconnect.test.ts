// @vitest-environment node
// Reconnecting at once: failures caused by being offline do not count toward an operation's
// backoff (a lost answer still does, and is still verified), and coming online, returning to the
// app and "Sync now" end every wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations, serverFiles } from './harness';
import { TimerClock } from './timer-clock';

const bytes = (text: string) => new TextEncoder().encode(text);
/** What a browser's fetch throws when it got no answer: no code, no cause; reached or not, nobody knows. */
const browserNetworkError = { before: async () => { throw new TypeError('Failed to fetch'); } };

describe('reconnect', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('150 s offline with many failed attempts: coming online sends the queued change at once', async () => {
    const clock = new TimerClock();
    const d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { clock, withLock: clock.withLock, debounceMs: 300 } });
    d.engine.start();
    await clock.idle();

    d.net.offline = true;
    await d.client.createConversation({ contact_id: 'reconnect-online' });
    d.engine.requestSync();
    const before = d.net.seen.length;
    await clock.advance(150_000);
    const attempts = d.net.seen.slice(before).filter((r) => r.method === 'POST').length;
    expect(attempts).toBeGreaterThanOrEqual(10); // probed all along, at the reconnect pace
    // Not the operation's fault: no backoff piled up on it, and the engine probes again within 5 s.
    const [op] = await d.db.outbox.toArray();
    expect(op).toMatchObject({ attempts: 0, state: 'queued' });
    expect(op!.nextAttemptAt).toBeLessThanOrEqual(clock.now());
    expect(clock.pending()[0]).toBeLessThanOrEqual(5_000);
    expect(await readSyncStatus(d.db)).toMatchObject({ online: false, pendingCount: 1 });

    d.net.offline = false;
    await d.engine.setOnline(true);
    await clock.advance(0); // nothing else: no time passes
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).filter((c) => c.contact_id === 'reconnect-online')).toHaveLength(1);
    expect(await readSyncStatus(d.db)).toMatchObject({ online: true, pendingCount: 0 });
    d.engine.stop();
    d.close();
  });

  it('a browser that says offline: failures without a cause do not back off either', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    await d.client.createConversation({ contact_id: 'reconnect-browser' });
    await d.engine.setOnline(false);
    for (let i = 0; i < 6; i++) {
      d.net.inject(browserNetworkError, 'POST');
      expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'offline' });
      d.clock.advance(25_000);
    }
    expect((await d.db.outbox.toArray())[0]).toMatchObject({ attempts: 0 });
    // Back (the network returned before the browser noticed): the very next sync sends it.
    expect((await d.engine.syncOnce()).push).toEqual({ kind: 'done' });
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).filter((c) => c.contact_id === 'reconnect-browser')).toHaveLength(1);
    d.close();
  });

  it('the same failure while the browser says online may be a lost answer: it backs off', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    await d.client.createConversation({ contact_id: 'reconnect-unknown' });
    d.net.inject(browserNetworkError, 'POST');
    expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'network' });
    const [op] = await d.db.outbox.toArray();
    expect(op).toMatchObject({ attempts: 1, outcomeUnknown: true });
    expect(op!.nextAttemptAt).toBeGreaterThan(d.clock.now());
    expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'backoff' });
    await d.settle();
    d.close();
  });

  it('unreachable after sending still leaves the outcome unknown: a lost upload is verified, not duplicated', async () => {
    const plain = await startTestServer({ env: { PARLEY_EXTENSIONS: 'none' } });
    try {
      const d = makeDevice(plain.baseUrl, plain.tokens.alice);
      const conv = await d.client.createConversation({ contact_id: 'reconnect-upload' });
      await d.settle();
      const id = await d.client.resolveId(conv);
      await d.client.uploadFile({ conversationId: id }, { name: 'once.txt', type: 'text/plain', bytes: bytes('exactly once') });
      // The upload reaches the server, which stores it; then the link drops and the browser says offline.
      await d.engine.setOnline(false);
      d.net.inject('lose-response', 'POST', /^\/v1\/files/);
      expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'offline' });
      expect((await d.db.outbox.toArray())[0]).toMatchObject({ outcomeUnknown: true, attempts: 0 });
      await d.engine.setOnline(true);
      await d.engine.syncNow();
      expect((await serverFiles(plain.baseUrl, plain.tokens.alice, id)).map((f) => f.filename)).toEqual(['once.txt']);
      expect(await d.db.outbox.count()).toBe(0);
      d.close();
    } finally {
      await plain.stop();
    }
  });

  it('"Sync now" right after a lost upload (server without keys) still gives it a moment before verifying', async () => {
    const plain = await startTestServer({ env: { PARLEY_EXTENSIONS: 'none' } });
    try {
      const d = makeDevice(plain.baseUrl, plain.tokens.alice);
      const conv = await d.client.createConversation({ contact_id: 'reconnect-verify' });
      await d.settle();
      const id = await d.client.resolveId(conv);
      await d.client.uploadFile({ conversationId: id }, { name: 'lost.txt', type: 'text/plain', bytes: bytes('lost answer') });
      d.net.inject('lose-response', 'POST', /^\/v1\/files/);
      expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'network' });
      const [op] = await d.db.outbox.toArray();
      expect(op).toMatchObject({ outcomeUnknown: true });
      const wait = op!.nextAttemptAt - d.clock.now();
      expect(wait).toBeGreaterThan(0);

      // At once: the verification (a listing that could miss a request still being processed) waits.
      expect((await d.engine.syncNow()).push).toMatchObject({ kind: 'waiting', reason: 'backoff' });
      expect(await d.db.outbox.toArray()).toMatchObject([{ id: op!.id, state: 'queued', outcomeUnknown: true }]); // not verified yet
      d.clock.advance(wait);
      expect((await d.engine.syncNow()).push).toEqual({ kind: 'done' });
      expect((await serverFiles(plain.baseUrl, plain.tokens.alice, id)).map((f) => f.filename)).toEqual(['lost.txt']);
      d.close();
    } finally {
      await plain.stop();
    }
  });

  it('"Sync now", returning to the app and coming online end every backoff and the retry timer', async () => {
    const clock = new TimerClock();
    const d = makeDevice(server.baseUrl, server.tokens.bob, { engine: { clock, withLock: clock.withLock, debounceMs: 300 } });
    d.engine.start();
    await clock.idle();
    const down = { status: 503, body: { type: 'api_error', code: 'internal', message: 'down' } };

    for (const [name, trigger] of [
      ['sync now', () => d.engine.syncNow()],
      ['visible', () => d.engine.wake()],
      ['online', () => d.engine.setOnline(true)],
    ] as const) {
      const contact = `reconnect-${name.replace(' ', '-')}`;
      await d.client.createConversation({ contact_id: contact });
      for (let i = 0; i < 6; i++) d.net.inject(down, 'POST');
      d.engine.requestSync();
      await clock.advance(300);
      // Five more failures at their backoff times (1 s, 2 s, 4 s, 8 s, 16 s with random() = 0.5 → ×0.75).
      for (let i = 0; i < 5; i++) await clock.advance(clock.pending()[0]!);
      expect(d.net.pendingFaults()).toBe(0);
      const [op] = await d.db.outbox.toArray();
      expect(op!.nextAttemptAt - clock.now()).toBeGreaterThan(20_000);
      expect(clock.pending()[0]).toBeGreaterThan(20_000);

      await trigger();
      await clock.advance(0);
      expect((await serverConversations(server.baseUrl, server.tokens.bob)).filter((c) => c.contact_id === contact), name).toHaveLength(1);
      expect(await d.db.outbox.count(), name).toBe(0);
    }
    d.engine.stop();
    d.close();
  });
});
