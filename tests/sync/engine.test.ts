// @vitest-environment node
// The engine's triggers: start, debounced requests after local writes, retry at the backoff's
// time after a failure, periodic sync; and the status every tab reads.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations } from './harness';
import { TimerClock } from './timer-clock';

describe('engine triggers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('start syncs, local writes are debounced into one sync, failures retry at their time, then periodic', async () => {
    const clock = new TimerClock();
    const d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { clock, withLock: clock.withLock, periodMs: 30_000, debounceMs: 200 } });
    d.engine.start();
    await clock.idle();
    expect((await readSyncStatus(d.db)).lastSyncAt).toBe(clock.now());
    expect(clock.pending()).toEqual([30_000]); // periodic

    const conv = await d.client.createConversation({ contact_id: 'triggers' });
    await d.client.updateConversation(conv, { is_muted: true });
    d.net.inject({ status: 503, body: { type: 'api_error', code: 'internal', message: 'down' } }, 'POST');
    d.engine.requestSync();
    d.engine.requestSync(); // coalesced with the first
    const before = d.net.seen.length;
    await clock.advance(200);
    expect((await readSyncStatus(d.db)).nextRetryAt).toBe(clock.now() + 750);
    expect(d.net.seen.slice(before).filter((r) => r.method === 'POST')).toHaveLength(1);
    const status = await readSyncStatus(d.db);
    expect(status).toMatchObject({ pendingCount: 2, lastError: 'server', syncing: false });
    // The retry is scheduled at the backoff's time (750 ms with random() = 0.5), not the period.
    expect(clock.pending()).toEqual([750]);
    await clock.advance(750);
    expect((await readSyncStatus(d.db)).pendingCount).toBe(0);
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.contact_id === 'triggers')?.is_muted).toBe(true);
    expect(clock.pending()).toEqual([30_000]); // periodic again
    d.engine.stop();
    expect(clock.pending()).toEqual([]);
    d.close();
  });

  it('a lost IndexedDB connection is reopened and the sync tried again', async () => {
    const clock = new TimerClock();
    const d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { clock, withLock: clock.withLock, periodMs: 30_000 } });
    await d.client.createConversation({ contact_id: 'reopened' });
    // The browser drops the connection under the worker (Dexie 4 then refuses every operation
    // with DatabaseClosedError and does not open again by itself).
    d.db.close();
    d.engine.start();
    await clock.idle();
    // The failed run's recovery (reopen, then schedule) runs after the run itself has settled.
    await vi.waitFor(() => expect(clock.pending()).toEqual([1_000])); // tried again after the base backoff
    expect(d.db.isOpen()).toBe(true);
    await clock.advance(1_000);
    expect(await readSyncStatus(d.db)).toMatchObject({ pendingCount: 0, lastError: null });
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).map((c) => c.contact_id)).toContain('reopened');
    d.engine.stop();
    d.close();
  });

  it('going offline and online is reflected in the status and triggers a sync', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    await d.client.createConversation({ contact_id: 'flap' });
    d.net.offline = true;
    await d.engine.syncOnce();
    expect(await readSyncStatus(d.db)).toMatchObject({ online: false, pendingCount: 1, lastError: 'offline' });
    d.net.offline = false;
    d.clock.advance(10_000);
    await d.engine.syncOnce();
    expect(await readSyncStatus(d.db)).toMatchObject({ online: true, pendingCount: 0, lastError: null });
    d.close();
  });
});
