// @vitest-environment node
// The engine's triggers: start, debounced requests after local writes, retry at the backoff's
// time after a failure, periodic sync; and the status every tab reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/sync/engine';
import { readSyncStatus } from '../../lib/sync/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations } from './harness';

/** A clock whose timers fire when the test moves time forward. */
class TimerClock implements Clock {
  time = 1_700_000_000_000;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;
  now() {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number) {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown) {
    this.timers.delete(handle as number);
  }
  pending() {
    return [...this.timers.values()].map((t) => t.at - this.time).sort((a, b) => a - b);
  }
  /** Move time forward, firing due timers in order. */
  async advance(ms: number) {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].fn();
      await settleMicrotasks();
    }
    this.time = end;
  }
}

/** Let the engine's async work (real HTTP to the local server) finish. */
async function settleMicrotasks() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
}

async function until(check: () => Promise<boolean>) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not reached');
}

describe('engine triggers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('start syncs, local writes are debounced into one sync, failures retry at their time, then periodic', async () => {
    const clock = new TimerClock();
    const d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { clock, periodMs: 30_000, debounceMs: 200 } });
    d.engine.start();
    await until(async () => (await readSyncStatus(d.db)).lastSyncAt !== null);
    expect(clock.pending()).toEqual([30_000]); // periodic

    const conv = await d.client.createConversation({ contact_id: 'triggers' });
    await d.client.updateConversation(conv, { is_muted: true });
    d.net.inject({ status: 503, body: { type: 'api_error', code: 'internal', message: 'down' } }, 'POST');
    d.engine.requestSync();
    d.engine.requestSync(); // coalesced with the first
    const before = d.net.seen.length;
    await clock.advance(200);
    await until(async () => (await readSyncStatus(d.db)).nextRetryAt !== null);
    expect(d.net.seen.slice(before).filter((r) => r.method === 'POST')).toHaveLength(1);
    const status = await readSyncStatus(d.db);
    expect(status).toMatchObject({ pendingCount: 2, lastError: 'server', syncing: false });
    // The retry is scheduled at the backoff's time (750 ms with random() = 0.5), not the period.
    expect(clock.pending()).toEqual([750]);
    await clock.advance(750);
    await until(async () => (await readSyncStatus(d.db)).pendingCount === 0);
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.contact_id === 'triggers')?.is_muted).toBe(true);
    await until(async () => clock.pending().length === 1 && clock.pending()[0] === 30_000);
    d.engine.stop();
    expect(clock.pending()).toEqual([]);
    d.close();
  });

  it('going offline and online is reflected in the status and triggers a sync', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    await d.client.createConversation({ contact_id: 'flap' });
    d.net.offline = true;
    await d.engine.syncOnce();
    expect(await readSyncStatus(d.db)).toMatchObject({ online: false, pendingCount: 1, lastError: 'network' });
    d.net.offline = false;
    d.clock.advance(10_000);
    await d.engine.syncOnce();
    expect(await readSyncStatus(d.db)).toMatchObject({ online: true, pendingCount: 0, lastError: null });
    d.close();
  });
});
