// @vitest-environment node
// Guards against the quadratic paths of the sync core, by counting work instead of timing it:
// the scan learns files' conversations with a constant number of whole-table reads, a pass over
// an unchanged mirror writes no server row and rebuilds no visible row, and a replay reads the
// whole outbox once rather than once per operation.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, PLAIN } from './harness';

const CONVERSATIONS = 30;

for (const kind of ['plain', 'feed'] as const) describe(`sync work does not grow with the square of the mirror (${kind} server)`, () => {
  let server: TestServer;
  const ids: string[] = [];
  beforeAll(async () => {
    server = await startTestServer({ env: kind === 'plain' ? PLAIN : {} });
    const other = otherDevice(server.baseUrl, server.tokens.alice);
    const created = await Promise.all(
      Array.from({ length: CONVERSATIONS }, (_, i) => other.createConversation({ contact_id: `scale-${i}` })),
    );
    ids.push(...created.map((c) => c.id));
    await Promise.all(created.map((c, i) => other.upload(c.id, `s${i}.txt`, new TextEncoder().encode(`file ${i}`))));
  });
  afterAll(async () => server.stop());

  it('scans with a constant number of whole-table reads, and an unchanged pass writes nothing', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    // The visible rows are the big table (server copies are kept only for rows with pending work).
    const files = d.db.files;
    const wholeReads = [vi.spyOn(files, 'filter'), vi.spyOn(files, 'toCollection'), vi.spyOn(files, 'toArray'), vi.spyOn(files, 'orderBy')];
    await d.settle();
    const scoped = d.net.seen.filter((r) => r.path.includes('conversation_id='));
    // Every conversation holds one file: each is listed — or, with the feed, placed from its history.
    expect(scoped.length).toBe(kind === 'plain' ? CONVERSATIONS : 0);
    expect(await d.db.files.where('conversationId').anyOf(ids).count()).toBe(CONVERSATIONS);
    // Unplaced files are found once per scan (and once for the files sweep), not per listing.
    const reads = wholeReads.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    expect(reads).toBeLessThanOrEqual(4);

    // Nothing changed on the server: a full pass rewrites no server row and no visible row.
    const writes = [
      d.db.serverConversations,
      d.db.serverFiles,
      d.db.conversations,
      d.db.files,
    ].flatMap((table) => [vi.spyOn(table, 'bulkPut'), vi.spyOn(table, 'put'), vi.spyOn(table, 'bulkDelete')]);
    d.net.seen.length = 0;
    const report = await d.engine.syncOnce();
    expect(report.pull?.kind).toBe('done');
    if (kind === 'plain') expect(d.net.seen.some((r) => r.path.startsWith('/v1/files?'))).toBe(true); // it did page through
    // With the feed: "anything after my cursor?" — one request.
    else expect(d.net.seen.map((r) => r.path.replace(/after=[^&]+/, 'after=N'))).toEqual(['/v1/events?after=N&limit=1000']);
    expect(writes.map((spy) => spy.mock.calls.filter((call) => (Array.isArray(call[0]) ? call[0].length > 0 : true)).length)).toEqual(
      writes.map(() => 0),
    );

    // One change on the server: exactly that row is written, and the sweep still works.
    const other = otherDevice(server.baseUrl, server.tokens.alice);
    expect((await other.send('PUT', `/v1/conversations/${ids[0]}`, undefined, { is_muted: true })).status).toBe(200);
    expect((await other.send('DELETE', `/v1/conversations/${ids[1]}`)).status).toBe(204);
    const put = vi.spyOn(d.db.conversations, 'bulkPut');
    put.mockClear();
    await d.settle();
    expect(put.mock.calls.flatMap((call) => call[0].map((row) => row.id))).toEqual([ids[0]]);
    expect(await d.db.conversations.get(ids[0]!)).toMatchObject({ is_muted: true, syncState: 'synced' });
    expect(await d.db.conversations.get(ids[1]!)).toBeUndefined();
    expect(await d.db.files.where('conversationId').equals(ids[1]!).count()).toBe(0);
    vi.restoreAllMocks();
    d.close();
  });

  it('replays a queue reading the whole outbox once, not once per operation', async () => {
    let reads = 0;
    const d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { replayProbe: { onRead: () => reads++ } } });
    await d.settle();
    const live = (await d.db.conversations.toArray()).map((c) => c.id);
    d.net.offline = true;
    for (let i = 0; i < 60; i++) await d.client.updateConversation(live[i % live.length]!, { is_pinned: i % 2 === 0, archived_at: i % 3 === 0 ? 1_700_000_000 + i : null });
    await d.engine.syncOnce();
    d.net.offline = false;
    d.clock.advance(10 * 60_000);
    const before = reads;
    await d.engine.syncOnce();
    expect(await d.db.outbox.count()).toBe(0);
    expect(d.net.seen.filter((r) => r.method === 'PUT').length).toBeGreaterThanOrEqual(live.length);
    // One push (plus, at most, the one after the pull): never one read per operation.
    expect(reads - before).toBeGreaterThanOrEqual(1); // the probe is told
    expect(reads - before).toBeLessThanOrEqual(2);
    d.close();
  });
});
