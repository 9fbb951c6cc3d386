// @vitest-environment node
// Pull: paging, sweeping server-deleted rows (but not those with pending work), rebasing
// pending edits on top of pulled state, learning each file's conversation once, resuming.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';
import { byId, makeDevice, mirrorState, otherDevice, serverConversations } from './harness';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('pull', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
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

    // Offline, the user edits two conversations; meanwhile another device deletes two of them
    // and changes a different field of the third.
    d.net.offline = true;
    await d.client.updateConversation(busy.id, { is_pinned: true });
    await d.client.updateConversation(edited.id, { is_pinned: true });
    await d.engine.syncOnce();
    expect((await other.send('DELETE', `/v1/conversations/${gone.id}`)).status).toBe(204);
    expect((await other.send('DELETE', `/v1/conversations/${busy.id}`)).status).toBe(204);
    expect((await other.send('DELETE', `/v1/files/${goneFile.id}`)).status).toBe(204);
    expect((await other.send('PUT', `/v1/conversations/${edited.id}`, undefined, { is_muted: true })).status).toBe(200);

    // Back online, but the failed push is still in its backoff: this sync only pulls.
    d.net.offline = false;
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
    // later: last_active_at has second resolution, and a change within the same second falls
    // back to listing every conversation.)
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const f3 = await other.upload(c2.id, 'three.txt', bytes('3'));
    await d.settle();
    expect(scoped().slice(before)).toEqual([c2.id]);
    expect(await d.db.files.get(f3.id)).toMatchObject({ conversationId: c2.id });
    d.close();
  });

  it('pages through more than 100 files, and places them all by paging the conversation listing', async () => {
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
    expect(listings).toHaveLength(2);
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
    const before = d.net.seen.length;
    await d.settle();
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

describe('paging through 1,000 conversations', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('pulls all of them, 100 per page, and mirrors them exactly', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => other.createConversation({ contact_id: `bulk-${i + j}` })));
    }
    const d = makeDevice(server.baseUrl, token);
    const started = performance.now();
    await d.settle();
    const elapsed = performance.now() - started;
    const pages = d.net.seen.filter((r) => r.path.startsWith('/v1/conversations'));
    expect(pages).toHaveLength(10);
    expect(pages.every((r) => r.path.includes('limit=100'))).toBe(true);
    const mirror = await mirrorState(d.db);
    expect(mirror.conversations).toHaveLength(1000);
    expect(mirror.conversations.sort(byId)).toEqual((await serverConversations(server.baseUrl, token)).sort(byId));
    expect(elapsed).toBeLessThan(20_000);
    d.close();
  });
});
