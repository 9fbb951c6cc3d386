// @vitest-environment node
// Pull: paging, sweeping server-deleted rows (but not those with pending work), rebasing
// pending edits on top of pulled state, learning each file's conversation once, resuming, and
// restarting a list whose resume point was deleted — against a plain server (the contract only:
// every pull lists everything) and, where the outcome must be the same, one with the change feed
// (tests/sync/feed.test.ts covers the feed itself).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FileObject } from '../../lib/schemas';
import { PULL_KEY } from '../../lib/sync/pull/state';
import { getMeta } from '../../lib/sync/mirror/meta';
import { readFirstSyncProgress } from '../../lib/sync/pull/pull';
import { startTestServer, type TestServer } from '../helpers/server';
import { byId, makeDevice, mirrorState, otherDevice, PLAIN, serverConversations } from './harness';

const bytes = (text: string) => new TextEncoder().encode(text);

for (const kind of ['plain', 'feed'] as const) describe(`pull (${kind} server)`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: kind === 'plain' ? PLAIN : {} });
  });
  afterAll(async () => server.stop());

  it('removes rows the server no longer has, keeps rows with pending work, rebases pending edits', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    const gone = await other.createConversation({ contact_id: 'sweep-gone' });
    const busy = await other.createConversation({ contact_id: 'sweep-busy' });
    const edited = await other.createConversation({ contact_id: 'sweep-edited' });
    const goneFile = await other.upload(edited.id, 'gone.txt', bytes('g'));
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    expect(await d.db.conversations.get(gone.id)).toBeDefined();
    expect(await d.db.files.get(goneFile.id)).toMatchObject({ conversationId: edited.id });

    // The user edits two conversations, whose first send fails (503: a backoff follows; being
    // offline would not count toward it); meanwhile another device deletes two of them and
    // changes a different field of the third. (Both edits go out together: both get the 503.)
    d.net.inject({ status: 503 }, 'PUT');
    d.net.inject({ status: 503 }, 'PUT');
    await d.client.updateConversation(busy.id, { is_pinned: true });
    await d.client.updateConversation(edited.id, { is_pinned: true });
    await d.engine.syncOnce();
    expect((await other.send('DELETE', `/v1/conversations/${gone.id}`)).status).toBe(204);
    expect((await other.send('DELETE', `/v1/conversations/${busy.id}`)).status).toBe(204);
    expect((await other.send('DELETE', `/v1/files/${goneFile.id}`)).status).toBe(204);
    expect((await other.send('PUT', `/v1/conversations/${edited.id}`, undefined, { is_muted: true })).status).toBe(200);

    // The failed push is still in its backoff: this sync only pulls.
    const report = await d.engine.syncOnce();
    expect(report.push).toMatchObject({ kind: 'waiting', reason: 'backoff' });
    expect(report.pull?.kind).toBe('done');

    expect(await d.db.conversations.get(gone.id)).toBeUndefined();
    expect(await d.db.files.get(goneFile.id)).toBeUndefined();
    // Pending work still needs it: kept, showing the user's edit.
    expect(await d.db.conversations.get(busy.id)).toMatchObject({ is_pinned: true, syncState: 'pending' });
    // Rebased: the other device's change and ours together.
    expect(await d.db.conversations.get(edited.id)).toMatchObject({ is_pinned: true, is_muted: true, syncState: 'pending' });

    // Healthy again: the edit of the deleted conversation fails with the server's 404…
    d.clock.advance(60_000);
    await d.engine.syncOnce();
    const failed = await d.db.outbox.where('state').equals('failed').toArray();
    expect(failed.map((op) => [op.entityId, op.error?.code])).toEqual([[busy.id, 'resource_missing']]);
    // …and discarding it lets the row go, like the server's.
    await d.client.discardOperation(failed[0]!.id);
    await d.settle();
    expect(await d.db.conversations.get(busy.id)).toBeUndefined();
    const mirror = await mirrorState(d.db);
    expect(mirror.conversations.sort(byId)).toEqual((await serverConversations(server.baseUrl, token)).sort(byId));
    d.close();
  });

  it('pages through more than 100 files, and places them all (listing the conversation page by page, or from the feed)', async () => {
    const token = server.tokens.bob;
    const other = otherDevice(server.baseUrl, token);
    const conv = await other.createConversation({ group_id: 'many-files' });
    for (let i = 0; i < 150; i += 25) {
      await Promise.all(Array.from({ length: 25 }, (_, j) => other.upload(conv.id, `m${i + j}.txt`, bytes(`file ${i + j}`))));
    }
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    expect(await d.db.files.where('conversationId').equals(conv.id).count()).toBe(150);
    const listings = d.net.seen.filter((r) => r.path.startsWith(`/v1/files?conversation_id=${conv.id}`));
    // With the feed, its history names each file's conversation: nothing to list per conversation.
    expect(listings).toHaveLength(kind === 'plain' ? 2 : 0);
    d.close();
  });

  it('resumes an interrupted pass from its cursor, not from the start', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    for (let i = 0; i < 250; i += 25) {
      await Promise.all(Array.from({ length: 25 }, (_, j) => other.createConversation({ group_id: `resume-${i + j}` })));
    }
    const d = makeDevice(server.baseUrl, token);
    // Page 1 arrives; the next two attempts at page 2 do not.
    d.net.inject('offline', 'GET', /^\/v1\/conversations\?.*starting_after=.*/);
    d.net.inject('offline', 'GET', /^\/v1\/conversations\?.*starting_after=.*/);
    let calls = 0;
    const first = await d.engine.syncOnce();
    expect(first.pull?.kind).toBe('network');
    const stored = await d.db.conversations.count();
    expect(stored).toBe(100);
    // A first sync says how far it got (what the progress line shows), kept across the interruption.
    expect(await readFirstSyncProgress(d.db)).toEqual({ phase: 'conversations', conversations: 100, files: 0 });
    const before = d.net.seen.length;
    await d.settle();
    expect(await readFirstSyncProgress(d.db)).toBeNull(); // the first pass is complete
    const listing = d.net.seen.slice(before).filter((r) => r.path.startsWith('/v1/conversations'));
    // The first request after the fault continues after page 1's last item.
    expect(listing[0]!.path).toContain('starting_after=');
    calls = listing.length;
    expect(calls).toBeGreaterThan(0);
    const all = await serverConversations(server.baseUrl, token);
    expect(await d.db.conversations.count()).toBe(all.length);
    d.close();
  });
});

// Only a server without the feed needs the scan: the feed says each file's conversation.
describe('scan (plain server)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: PLAIN });
  });
  afterAll(async () => server.stop());

  it("learns each file's conversation by listing per conversation, and never asks twice", async () => {
    const token = server.tokens.bob;
    const other = otherDevice(server.baseUrl, token);
    const c1 = await other.createConversation({ contact_id: 'files-1' });
    const c2 = await other.createConversation({ contact_id: 'files-2' });
    await other.createConversation({ contact_id: 'files-empty' });
    const f1 = await other.upload(c1.id, 'one.txt', bytes('1'));
    const f2 = await other.upload(c2.id, 'two.txt', bytes('2'));
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    expect(await d.db.files.get(f1.id)).toMatchObject({ conversationId: c1.id, filename: 'one.txt' });
    expect(await d.db.files.get(f2.id)).toMatchObject({ conversationId: c2.id });
    const scoped = () => d.net.seen.filter((r) => r.path.includes('conversation_id=')).map((r) => new URL(r.path, 'http://x').searchParams.get('conversation_id'));
    expect(scoped().length).toBeLessThanOrEqual(3);

    const before = scoped().length;
    await d.settle();
    expect(scoped().length).toBe(before); // all placed: no per-conversation listing at all

    // A new file in c2: only conversations whose last_active_at moved are listed. (A second
    // later on the server's clock, moved by hand: last_active_at has second resolution, and a
    // change within the same second falls back to listing every conversation.)
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1_000 });
    let f3: FileObject;
    try {
      f3 = await other.upload(c2.id, 'three.txt', bytes('3'));
      await d.settle();
    } finally {
      vi.useRealTimers();
    }
    expect(scoped().slice(before)).toEqual([c2.id]);
    expect(await d.db.files.get(f3!.id)).toMatchObject({ conversationId: c2.id });
    d.close();
  });


  it('a first sync lists the active conversations before the files (each file written once), and resumes that after a failure', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    for (const c of await serverConversations(server.baseUrl, token)) await other.send('DELETE', `/v1/conversations/${c.id}`);
    const convs = [];
    for (let i = 0; i < 3; i++) {
      const c = await other.createConversation({ contact_id: `first-${i}` });
      await other.upload(c.id, `first-${i}.txt`, bytes(`${i}`));
      convs.push(c);
    }
    await other.createConversation({ contact_id: 'first-idle' }); // no activity: never listed
    const d = makeDevice(server.baseUrl, token, { engine: { pullOptions: { scanConcurrency: 1 } } });
    const puts = vi.spyOn(d.db.files, 'bulkPut');
    // The first listing goes through, the second does not.
    let scoped = 0;
    d.net.inject({ before: async () => void scoped++ }, 'GET', /conversation_id=/);
    d.net.inject('offline', 'GET', /conversation_id=/);
    const first = await d.engine.syncOnce();
    expect(first.pull?.kind).toBe('network');
    expect(scoped).toBe(1);
    expect(d.net.seen.some((r) => r.path.startsWith('/v1/files?limit='))).toBe(false); // files listing not reached yet
    await d.settle();
    const listings = d.net.seen.filter((r) => r.path.includes('conversation_id=')).map((r) => new URL(r.path, 'http://x').searchParams.get('conversation_id'));
    // Three active conversations: the one listed before the failure is not listed again.
    expect(listings).toHaveLength(4);
    expect(new Set(listings)).toEqual(new Set(convs.map((c) => c.id)));
    for (const c of convs) expect(await d.db.files.where('conversationId').equals(c.id).count()).toBe(1);
    // Every file written once: by the scan, placed; the files listing found them unchanged.
    expect(puts.mock.calls.flatMap((call) => call[0]).length).toBe(3);
    d.close();
  });
});

describe('paging through 1,000 conversations', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: PLAIN });
  });
  afterAll(async () => server.stop());

  it('pulls all of them, 100 per page, and mirrors them exactly', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => other.createConversation({ contact_id: `bulk-${i + j}` })));
    }
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    const pages = d.net.seen.filter((r) => r.path.startsWith('/v1/conversations'));
    expect(pages).toHaveLength(10);
    expect(pages.every((r) => r.path.includes('limit=100'))).toBe(true);
    const mirror = await mirrorState(d.db);
    expect(mirror.conversations).toHaveLength(1000);
    expect(mirror.conversations.sort(byId)).toEqual((await serverConversations(server.baseUrl, token)).sort(byId));
    d.close();
  });
});

describe('a resume point deleted on the server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('restarts the list from its first page (the server answers 400 for the cursor), and still sweeps', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    for (let i = 0; i < 150; i += 25) {
      await Promise.all(Array.from({ length: 25 }, (_, j) => other.createConversation({ group_id: `cursor-${i + j}` })));
    }
    const d = makeDevice(server.baseUrl, token);
    // Page 1 arrives; page 2 does not: the pass is interrupted with a cursor.
    d.net.inject('offline', 'GET', /^\/v1\/conversations\?.*starting_after=/);
    expect((await d.engine.syncOnce()).pull?.kind).toBe('network');
    expect(await d.db.conversations.count()).toBe(100);
    const cursor = await getMeta(d.db, PULL_KEY);
    expect(cursor).toMatchObject({ phase: 'conversations', startingAfter: expect.any(String) });
    const resumeAfter = cursor!.startingAfter!;

    // Meanwhile another device deletes the item the pass would resume after, and one more of page 1.
    const alsoGone = (await d.db.conversations.toCollection().primaryKeys()).find((id) => id !== resumeAfter)!;
    expect((await other.send('DELETE', `/v1/conversations/${resumeAfter}`)).status).toBe(204);
    expect((await other.send('DELETE', `/v1/conversations/${alsoGone}`)).status).toBe(204);

    d.clock.advance(600_000);
    const before = d.net.seen.length;
    await d.settle();
    const listing = d.net.seen.slice(before).filter((r) => r.path.startsWith('/v1/conversations'));
    expect(listing[0]!.path).toContain(`starting_after=${resumeAfter}`); // refused: no longer in the list
    expect(listing[1]!.path).not.toContain('starting_after'); // the list starts over
    // A complete listing again: the deleted rows are swept, the mirror is the server's list.
    expect(await d.db.conversations.get(resumeAfter)).toBeUndefined();
    expect(await d.db.conversations.get(alsoGone)).toBeUndefined();
    const mirror = await mirrorState(d.db);
    expect(mirror.conversations.sort(byId)).toEqual((await serverConversations(server.baseUrl, token)).sort(byId));
    expect(mirror.conversations).toHaveLength(148);
    d.close();
  });
});
