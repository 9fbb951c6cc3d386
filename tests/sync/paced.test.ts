// @vitest-environment node
// A first sync paces itself under the server's rate limit (lib/sync/core/pace.ts) where the server
// says where the token stands (RateLimit-Policy and RateLimit): against a REAL server with a small
// limit (20 a second, 40 in reserve) and no change feed, a first sync of 400 records (about 110
// requests: every active conversation's files are listed one by one) completes in one pass
// without a single 429 — where a sync that ignores the fields meets the limit within a second.
// Against the same server with the fields taken out (a plain server), it still completes: refused
// in part, it waits out Retry-After and goes on, as before (bob's smaller mirror: that way is slow).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../lib/sync/core/clock';
import type { FetchLike } from '../../lib/sync/core/http';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, PLAIN } from './harness';

const CONVERSATIONS = 300;
/** Conversations with a file each: each is one listing of the scan. */
const ACTIVE = 100;
/**
 * bob's, for the sync without the fields: a smaller mirror (each request past the limit costs it a
 * refusal and a second), still more requests than the limit lets through however fast they go.
 */
const BOB_CONVERSATIONS = 80;
const LIMITED = {
  // No change feed (every active conversation listed), and the rate limit fields.
  PARLEY_EXTENSIONS: `${PLAIN.PARLEY_EXTENSIONS},ratelimit`,
  RATE_LIMIT_PER_SECOND: '20',
  RATE_LIMIT_BURST: '40',
  RATE_LIMIT_BURST_SECONDS: '60',
};

/** Every answer's status, and (optionally) the RateLimit fields taken out, as a server without them would answer. */
function recording(inner: FetchLike, options: { strip: boolean }) {
  const statuses: number[] = [];
  const fetch: FetchLike = async (input, init) => {
    const response = await inner(input, init);
    statuses.push(response.status);
    if (!options.strip) return response;
    const headers = new Headers(response.headers);
    headers.delete('ratelimit');
    headers.delete('ratelimit-policy');
    return new Response(await response.arrayBuffer(), { status: response.status, statusText: response.statusText, headers });
  };
  return { fetch, statuses };
}

describe('a first sync under a small rate limit (plain server: every active conversation listed)', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Seeded without limits, then served with them from the same data.
    const seeding = await startTestServer({ env: PLAIN });
    const other = otherDevice(seeding.baseUrl, seeding.tokens.alice);
    const conversations = [];
    for (let i = 0; i < CONVERSATIONS; i += 50) {
      conversations.push(...(await Promise.all(Array.from({ length: Math.min(50, CONVERSATIONS - i) }, (_, j) => other.createConversation({ contact_id: `paced-${i + j}` })))));
    }
    for (let i = 0; i < ACTIVE; i += 25) {
      await Promise.all(conversations.slice(i, Math.min(ACTIVE, i + 25)).map((c, j) => other.upload(c.id, `p${i + j}.txt`, new TextEncoder().encode(`file ${i + j}`))));
    }
    const bob = otherDevice(seeding.baseUrl, seeding.tokens.bob);
    const bobs = await Promise.all(Array.from({ length: BOB_CONVERSATIONS }, (_, i) => bob.createConversation({ contact_id: `plain-${i}` })));
    await Promise.all(bobs.map((c, i) => bob.upload(c.id, `b${i}.txt`, new TextEncoder().encode(`file ${i}`))));
    await seeding.stop();
    server = await startTestServer({ dataDir: seeding.dataDir, env: LIMITED });
  });
  afterAll(() => server.stop());

  it('told the limit, it spreads its requests under it: one pass, complete, no 429', async () => {
    const probe = makeDevice(server.baseUrl, server.tokens.alice);
    probe.close();
    const net = recording(probe.net.fetch, { strip: false });
    const d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { clock: realClock, fetch: net.fetch, requestTimeoutMs: 30_000 } });
    const report = await d.engine.syncOnce();
    expect(report.pull).toEqual({ kind: 'done', feed: false });
    expect(net.statuses.filter((s) => s === 429)).toEqual([]);
    // More requests than the limit lets through at once: the pacing is what kept them inside it.
    expect(net.statuses.length).toBeGreaterThan(40 + 20);
    expect(await d.db.conversations.count()).toBe(CONVERSATIONS);
    expect(await d.db.files.where('conversationId').above('').count()).toBe(ACTIVE);
    d.close();
  });

  it('not told (the fields taken out), it is refused in part and still completes, waiting out Retry-After', async () => {
    const probe = makeDevice(server.baseUrl, server.tokens.bob);
    probe.close();
    const net = recording(probe.net.fetch, { strip: true });
    const d = makeDevice(server.baseUrl, server.tokens.bob, { engine: { clock: realClock, fetch: net.fetch, requestTimeoutMs: 30_000 } });
    let report = await d.engine.syncOnce();
    for (let rounds = 0; report.pull?.kind === 'rate_limited' && rounds < 60; rounds++) {
      await new Promise((resolve) => setTimeout(resolve, Number(report.pull?.kind === 'rate_limited' ? report.pull.retryAfter : 1) * 1000));
      report = await d.engine.syncOnce();
    }
    expect(report.pull).toEqual({ kind: 'done', feed: false });
    expect(net.statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(await d.db.conversations.count()).toBe(BOB_CONVERSATIONS);
    expect(await d.db.files.where('conversationId').above('').count()).toBe(BOB_CONVERSATIONS);
    d.close();
  });
});
