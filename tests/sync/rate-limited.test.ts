// @vitest-environment node
// A device whose token is over the server's rate limit (a REAL server with a tiny limit, not a
// synthetic 429) backs off for Retry-After and resumes BY ITSELF: the engine runs on its own
// timers (a real clock, start()), nobody calls syncOnce or advances time, and every queued change
// arrives exactly once. The server's RateLimit fields are taken out on the way: this is the way of a
// server without them (tests/sync/paced.test.ts has a sync told them, which is not refused).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/sync/core/clock';
import type { FetchLike } from '../../lib/sync/core/http';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, TEST_TOKENS, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations } from './harness';

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A second token of alice's, with a bucket of its own: the test's look at the server is not limited. */
const READER = 'alice-reader-token-4242424242';
const CHANGES = 12;

describe('rate limited by a real server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        PARLEY_TOKENS: `alice:${TEST_TOKENS.alice},alice:${READER},bob:${TEST_TOKENS.bob}`,
        // 4 requests a second (1 every 250 ms), no reserve: a queue of 12 changes (and the pull) cannot go at once.
        RATE_LIMIT_PER_SECOND: '4',
        RATE_LIMIT_BURST: '0',
      },
    });
  });
  afterAll(() => server.stop());

  it('the engine waits for Retry-After and resumes by itself until the queue is empty', async () => {
    const statuses: Array<{ status: number; retryAfter: string | null }> = [];
    const recording = (inner: FetchLike): FetchLike => async (input, init) => {
      const response = await inner(input, init);
      statuses.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
      const headers = new Headers(response.headers);
      headers.delete('ratelimit');
      headers.delete('ratelimit-policy');
      return new Response(await response.arrayBuffer(), { status: response.status, statusText: response.statusText, headers });
    };
    // The harness's network, without faults; only its answers are noted.
    const probe = makeDevice(server.baseUrl, TEST_TOKENS.alice);
    probe.close();
    const d = makeDevice(server.baseUrl, TEST_TOKENS.alice, {
      engine: { clock: realClock, fetch: recording(probe.net.fetch), debounceMs: 10, periodMs: 60_000 },
    });
    for (let i = 0; i < CHANGES; i++) await d.client.createConversation({ contact_id: `limited-${i}` });

    d.engine.start();
    try {
      // Waiting for what is promised (the queue empties), not for a time: no syncOnce, no clock moved.
      const deadline = Date.now() + 45_000;
      while ((await readSyncStatus(d.db)).pendingCount > 0) {
        if (Date.now() > deadline) throw new Error(`queue not empty: ${JSON.stringify(statuses)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      d.engine.stop();
    }

    // The server did refuse it, with the contract's Retry-After ...
    const refused = statuses.filter((s) => s.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const s of refused) expect(s.retryAfter).toMatch(/^[1-9]\d*$/);
    // ... and every change arrived, once.
    const onServer = (await serverConversations(server.baseUrl, READER)).filter((c) => c.contact_id?.startsWith('limited-'));
    expect(onServer.map((c) => c.contact_id).sort()).toEqual(Array.from({ length: CHANGES }, (_, i) => `limited-${i}`).sort());
    expect(await d.db.outbox.count()).toBe(0);
    d.close();
  });
});
