// @vitest-environment node
// Pull through the change feed (GET /v1/events), against the real server: one full listing, then
// only what changed — paged, tombstones applied, files placed by the event's conversation_id, an
// expired cursor relisted, the head taken before the listing — and plain paging where the server
// has no feed. Requests are counted at the fake network in front of the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_KEY, RECHECK_PLAIN_MS, type FeedState } from '../../lib/sync/pull/feed';
import { startTestServer, type TestServer } from '../helpers/server';
import { byId, makeDevice, mirrorState, otherDevice, PLAIN, serverConversations, serverFilesWithConversation, type Device } from './harness';

const bytes = (text: string) => new TextEncoder().encode(text);
/** The requests a device made since `from`, ids and cursors blanked. */
const requests = (d: Device, from = 0) =>
  d.net.seen.slice(from).map((r) => `${r.method} ${r.path.replace(/after=[^&]+/, 'after=N').replace(/=[A-Za-z0-9]{16}/g, '=ID')}`);

async function expectMirrorEqualsServer(d: Device, server: TestServer, token: string) {
  const mirror = await mirrorState(d.db);
  expect(mirror.conversations.sort(byId)).toEqual((await serverConversations(server.baseUrl, token)).sort(byId));
  const files = [...(await serverFilesWithConversation(server.baseUrl, token)).values()];
  expect(mirror.files.sort(byId)).toEqual(files.map(({ file, conversationId }) => ({ ...file, conversationId })).sort(byId));
}

describe('pull through the change feed', () => {
  let server: TestServer;
  let users = 0;
  /** A fresh user per test (tokens are static: alice and bob, so each test cleans up after itself). */
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  async function freshAccount() {
    const token = users++ % 2 === 0 ? server.tokens.alice : server.tokens.bob;
    const other = otherDevice(server.baseUrl, token);
    for (const c of await serverConversations(server.baseUrl, token)) await other.send('DELETE', `/v1/conversations/${c.id}`);
    return { token, other };
  }

  it('lists once, then a pass with nothing changed is one request and writes nothing', async () => {
    const { token, other } = await freshAccount();
    const c = await other.createConversation({ contact_id: 'steady' });
    await other.upload(c.id, 'a.txt', bytes('a'));
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    // The head first, then the listing (files placed by the feed's history, read meanwhile).
    expect(requests(d)[0]).toBe('GET /v1/events?limit=0');
    expect(requests(d).slice(1, 4).sort()).toEqual(['GET /v1/conversations?limit=100', 'GET /v1/events?after=N&limit=1000', 'GET /v1/files?limit=100']);
    const feed = (await d.db.meta.get(FEED_KEY))!.value as FeedState;
    expect(feed).toMatchObject({ server: 'feed', cursor: expect.any(String) });

    const from = d.net.seen.length;
    const before = JSON.stringify(await d.db.meta.get(FEED_KEY));
    const report = await d.engine.syncOnce();
    expect(report.pull).toEqual({ kind: 'done', feed: true });
    expect(requests(d, from)).toEqual(['GET /v1/events?after=N&limit=1000']);
    expect(JSON.stringify(await d.db.meta.get(FEED_KEY))).toBe(before);
    d.close();
  });

  it("a first sync places listed files by the feed's history; where the history is gone (410), by listing per conversation", async () => {
    const { token, other } = await freshAccount();
    const c1 = await other.createConversation({ contact_id: 'history-1' });
    const c2 = await other.createConversation({ contact_id: 'history-2' });
    const f1 = await other.upload(c1.id, 'h1.txt', bytes('1'));
    const f2 = await other.upload(c2.id, 'h2.txt', bytes('2'));
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    // The history is read (and the files listing fetched ahead) while the conversations are
    // listed; the files are written once the history has placed them.
    expect(requests(d)[0]).toBe('GET /v1/events?limit=0');
    expect(requests(d).slice(1, 4).sort()).toEqual(['GET /v1/conversations?limit=100', 'GET /v1/events?after=N&limit=1000', 'GET /v1/files?limit=100']);
    expect(requests(d).filter((r) => r.includes('conversation_id='))).toEqual([]);
    expect(await d.db.files.get(f1.id)).toMatchObject({ conversationId: c1.id });
    expect(await d.db.files.get(f2.id)).toMatchObject({ conversationId: c2.id });
    d.close();

    // The server has since purged its old events: a cursor of 0 is expired. The scan places them.
    await server.service.db.updateTable('events').set({ created_at: 0 }).execute();
    await server.service.purgeExpired();
    const fresh = makeDevice(server.baseUrl, token);
    await fresh.settle();
    expect(requests(fresh).filter((r) => r.includes('conversation_id=')).sort()).toEqual(['GET /v1/files?conversation_id=ID&limit=100', 'GET /v1/files?conversation_id=ID&limit=100']);
    expect(await fresh.db.files.get(f1.id)).toMatchObject({ conversationId: c1.id });
    expect(await fresh.db.files.get(f2.id)).toMatchObject({ conversationId: c2.id });
    await expectMirrorEqualsServer(fresh, server, token);
    fresh.close();
  });

  it('a files page fetched ahead whose answer was lost is asked again in the same pass', async () => {
    const { token, other } = await freshAccount();
    const c = await other.createConversation({ contact_id: 'ahead' });
    const files = [];
    for (let i = 0; i < 3; i++) files.push(await other.upload(c.id, `ahead-${i}.txt`, bytes(String(i))));
    const d = makeDevice(server.baseUrl, token);
    // The first files request is the one fetched ahead, while the conversations are listed.
    d.net.inject('lose-response', 'GET', /^\/v1\/files\?limit=100$/);
    const report = await d.engine.syncOnce();
    expect(report.pull).toEqual({ kind: 'done', feed: true });
    expect(requests(d).filter((r) => r === 'GET /v1/files?limit=100')).toHaveLength(2);
    for (const f of files) expect(await d.db.files.get(f.id)).toMatchObject({ conversationId: c.id, syncState: 'synced' });
    await expectMirrorEqualsServer(d, server, token);
    d.close();
  });

  it('pages through the feed, each page applied with its cursor', async () => {
    const { token, other } = await freshAccount();
    const d = makeDevice(server.baseUrl, token, { engine: { pullOptions: { feedPageLimit: 10 } } });
    await d.settle();
    const created = [];
    for (let i = 0; i < 25; i++) created.push(await other.createConversation({ contact_id: `paged-${i}` }));
    const from = d.net.seen.length;
    await d.engine.syncOnce();
    expect(requests(d, from)).toEqual(['GET /v1/events?after=N&limit=10', 'GET /v1/events?after=N&limit=10', 'GET /v1/events?after=N&limit=10']);
    // Each page after the one before (cursors are opaque: three different ones).
    const cursors = d.net.seen.slice(from).map((r) => new URL(r.path, 'http://x').searchParams.get('after'));
    expect(new Set(cursors).size).toBe(3);
    expect(await d.db.conversations.count()).toBe(25);
    await expectMirrorEqualsServer(d, server, token);
    d.close();
  });

  it('an interrupted feed keeps the pages it applied, and resumes after the last one', async () => {
    const { token, other } = await freshAccount();
    const d = makeDevice(server.baseUrl, token, { engine: { pullOptions: { feedPageLimit: 10 } } });
    await d.settle();
    for (let i = 0; i < 15; i++) await other.createConversation({ contact_id: `resume-${i}` });
    const from = d.net.seen.length;
    const startCursor = ((await d.db.meta.get(FEED_KEY))!.value as FeedState).cursor!;
    // Page 1 arrives; page 2 does not.
    let seenFirst = false;
    d.net.inject({
      before: async () => {
        seenFirst = true;
      },
    }, 'GET', /^\/v1\/events\?after=/);
    d.net.inject('offline', 'GET', /^\/v1\/events\?after=/);
    const report = await d.engine.syncOnce();
    expect(seenFirst).toBe(true);
    expect(report.pull?.kind).toBe('network');
    expect(await d.db.conversations.count()).toBe(10);
    const cursor = ((await d.db.meta.get(FEED_KEY))!.value as FeedState).cursor!;
    expect(cursor).not.toBe(startCursor); // it moved past the applied page (cursors are opaque)
    d.clock.advance(60_000);
    await d.settle();
    const after = d.net.seen.slice(from).map((r) => new URL(r.path, 'http://x').searchParams.get('after'));
    expect(after[2]).toBe(cursor); // the retry continues after the applied page
    expect(await d.db.conversations.count()).toBe(15);
    await expectMirrorEqualsServer(d, server, token);
    d.close();
  });

  it('applies tombstones: deleted conversations (with their files) and files disappear without a listing', async () => {
    const { token, other } = await freshAccount();
    const keep = await other.createConversation({ contact_id: 'tomb-keep' });
    const gone = await other.createConversation({ contact_id: 'tomb-gone' });
    const goneFile = await other.upload(gone.id, 'in-gone.txt', bytes('g'));
    const deletedFile = await other.upload(keep.id, 'deleted.txt', bytes('d'));
    const keptFile = await other.upload(keep.id, 'kept.txt', bytes('k'));
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    expect(await d.db.files.get(goneFile.id)).toMatchObject({ conversationId: gone.id });

    expect((await other.send('DELETE', `/v1/conversations/${gone.id}`)).status).toBe(204);
    expect((await other.send('DELETE', `/v1/files/${deletedFile.id}`)).status).toBe(204);
    const from = d.net.seen.length;
    await d.settle();
    expect(requests(d, from)).toEqual(['GET /v1/events?after=N&limit=1000']);
    expect(await d.db.conversations.get(gone.id)).toBeUndefined();
    expect(await d.db.serverConversations.get(gone.id)).toBeUndefined();
    expect(await d.db.files.get(goneFile.id)).toBeUndefined();
    expect(await d.db.serverFiles.get(goneFile.id)).toBeUndefined();
    expect(await d.db.files.get(deletedFile.id)).toBeUndefined();
    expect(await d.db.files.get(keptFile.id)).toMatchObject({ conversationId: keep.id, syncState: 'synced' });
    await expectMirrorEqualsServer(d, server, token);
    d.close();
  });

  it("places new files by the event's conversation_id: no per-conversation listing", async () => {
    const { token, other } = await freshAccount();
    const c1 = await other.createConversation({ contact_id: 'place-1' });
    const c2 = await other.createConversation({ contact_id: 'place-2' });
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    const from = d.net.seen.length;
    const f1 = await other.upload(c1.id, 'one.txt', bytes('1'));
    const f2 = await other.upload(c2.id, 'two.txt', bytes('2'));
    expect((await other.send('PUT', `/v1/files/${f2.id}`, undefined, { filename: 'two-renamed.txt' })).status).toBe(200);
    await d.settle();
    expect(requests(d, from)).toEqual(['GET /v1/events?after=N&limit=1000']);
    expect(await d.db.files.get(f1.id)).toMatchObject({ conversationId: c1.id, filename: 'one.txt', syncState: 'synced' });
    expect(await d.db.files.get(f2.id)).toMatchObject({ conversationId: c2.id, filename: 'two-renamed.txt' });
    // The uploads raised the conversations' last_active_at: those came too.
    expect((await d.db.conversations.get(c1.id))?.last_active_at).not.toBeNull();
    await expectMirrorEqualsServer(d, server, token);
    d.close();
  });

  it('an expired cursor (410) lists everything again, sweeps, and follows a fresh head', async () => {
    const { token, other } = await freshAccount();
    const stays = await other.createConversation({ contact_id: 'expiry-stays' });
    const goes = await other.createConversation({ contact_id: 'expiry-goes' });
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    const oldCursor = ((await d.db.meta.get(FEED_KEY))!.value as FeedState).cursor;

    // Changes, then the server forgets their events (as its retention job does after 30 days).
    expect((await other.send('DELETE', `/v1/conversations/${goes.id}`)).status).toBe(204);
    const added = await other.createConversation({ contact_id: 'expiry-added' });
    await server.service.db.updateTable('events').set({ created_at: 0 }).execute();
    await server.service.purgeExpired();

    const from = d.net.seen.length;
    const report = await d.engine.syncOnce();
    expect(report.pull).toEqual({ kind: 'done', feed: true });
    const seen = requests(d, from);
    expect(seen.slice(0, 2)).toEqual(['GET /v1/events?after=N&limit=1000', 'GET /v1/events?limit=0']);
    expect(seen).toContain('GET /v1/conversations?limit=100');
    expect(d.net.seen[from]!.path).toContain(`after=${oldCursor}`);
    expect(await d.db.conversations.get(goes.id)).toBeUndefined(); // swept: its tombstone was purged
    expect(await d.db.conversations.get(added.id)).toBeDefined();
    expect(await d.db.conversations.get(stays.id)).toBeDefined();
    const cursor = ((await d.db.meta.get(FEED_KEY))!.value as FeedState).cursor;
    expect(cursor).not.toBe(oldCursor);
    // Following again from the fresh head: one request.
    const again = d.net.seen.length;
    await d.engine.syncOnce();
    expect(requests(d, again)).toEqual(['GET /v1/events?after=N&limit=1000']);
    await expectMirrorEqualsServer(d, server, token);
    d.close();
  });

  it('takes the head BEFORE listing: a change made while the listing runs is not lost', async () => {
    const { token, other } = await freshAccount();
    const listedEarly = await other.createConversation({ contact_id: 'during-early' });
    const toRename = await other.upload(listedEarly.id, 'before.txt', bytes('b'));
    const doomed = await other.createConversation({ contact_id: 'during-doomed' });
    const d = makeDevice(server.baseUrl, token);
    let created: { id: string } | null = null;
    let uploaded: { id: string } | null = null;
    // The conversations are listed; then, just before the files are, another device acts.
    d.net.inject(
      {
        before: async () => {
          created = await other.createConversation({ contact_id: 'during-created' });
          uploaded = await other.upload(listedEarly.id, 'during.txt', bytes('u'));
          expect((await other.send('DELETE', `/v1/conversations/${doomed.id}`)).status).toBe(204);
          expect((await other.send('PUT', `/v1/files/${toRename.id}`, undefined, { filename: 'after.txt' })).status).toBe(200);
        },
      },
      'GET',
      /^\/v1\/files\?limit=100$/,
    );
    const report = await d.engine.syncOnce(); // ONE pass
    expect(report.pull).toEqual({ kind: 'done', feed: true });
    expect(created).not.toBeNull();
    expect(await d.db.conversations.get(created!.id)).toBeDefined();
    expect(await d.db.conversations.get(doomed.id)).toBeUndefined();
    expect(await d.db.files.get(uploaded!.id)).toMatchObject({ conversationId: listedEarly.id });
    expect(await d.db.files.get(toRename.id)).toMatchObject({ filename: 'after.txt', conversationId: listedEarly.id });
    await expectMirrorEqualsServer(d, server, token);
    d.close();
  });

  it('keeps a remotely deleted row while local work still mentions it, and lets it go once that work is settled', async () => {
    const { token, other } = await freshAccount();
    const c = await other.createConversation({ contact_id: 'held' });
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    // A 503 puts the update in a backoff (being offline would not: it is retried as soon as the network is back).
    d.net.inject({ status: 503 }, 'PUT');
    await d.client.updateConversation(c.id, { is_muted: true });
    await d.engine.syncOnce();
    expect((await other.send('DELETE', `/v1/conversations/${c.id}`)).status).toBe(204);
    const report = await d.engine.syncOnce(); // in backoff: pull only
    expect(report.pull?.kind).toBe('done');
    expect(await d.db.conversations.get(c.id)).toMatchObject({ is_muted: true, syncState: 'pending' });
    d.clock.advance(60_000);
    await d.engine.syncOnce();
    const [failed] = await d.db.outbox.where('state').equals('failed').toArray();
    expect(failed?.error?.code).toBe('resource_missing');
    await d.client.discardOperation(failed!.id);
    await d.settle();
    expect(await d.db.conversations.get(c.id)).toBeUndefined();
    expect(await d.db.serverConversations.get(c.id)).toBeUndefined();
    d.close();
  });
});

for (const extensions of [PLAIN.PARLEY_EXTENSIONS, 'none']) {
  describe(`a server without the feed (PARLEY_EXTENSIONS=${extensions})`, () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ env: { PARLEY_EXTENSIONS: extensions } });
    });
    afterAll(async () => server.stop());

    it('falls back to listing everything, remembers that, and asks again only after a while', async () => {
      const token = server.tokens.alice;
      const other = otherDevice(server.baseUrl, token);
      const c = await other.createConversation({ contact_id: 'plain-1' });
      const d = makeDevice(server.baseUrl, token);
      await d.settle();
      expect(requests(d)[0]).toBe('GET /v1/events?limit=0');
      expect(((await d.db.meta.get(FEED_KEY))!.value as FeedState).server).toBe('plain');

      // Changes are found by listing; the feed is not asked about again.
      expect((await other.send('PUT', `/v1/conversations/${c.id}`, undefined, { is_pinned: true })).status).toBe(200);
      const upload = await other.upload(c.id, 'plain.txt', bytes('p'));
      let from = d.net.seen.length;
      const report = await d.engine.syncOnce();
      expect(report.pull).toEqual({ kind: 'done', feed: false });
      expect(requests(d, from)).toEqual([
        'GET /v1/conversations?limit=100',
        'GET /v1/files?limit=100',
        'GET /v1/files?conversation_id=ID&limit=100',
      ]);
      expect(await d.db.conversations.get(c.id)).toMatchObject({ is_pinned: true });
      expect(await d.db.files.get(upload.id)).toMatchObject({ conversationId: c.id });

      // An hour later, it checks whether the server has gained the feed.
      d.clock.advance(RECHECK_PLAIN_MS);
      from = d.net.seen.length;
      await d.engine.syncOnce();
      expect(requests(d, from)[0]).toBe('GET /v1/events?limit=0');
      await expectMirrorEqualsServer(d, server, token);
      d.close();
    });
  });
}
