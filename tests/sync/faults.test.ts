// @vitest-environment node
// Network and server faults: lost responses (with and without server idempotency), a tab closed
// mid-replay, 5xx, 429, 401, a real 400, and adoption on 409 conversation_exists.
import { IDBFactory } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverSupportsIdempotency } from '../../lib/sync/outbox/replay';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, mirrorState, otherDevice, serverConversations, serverFiles, byId } from './harness';

const bytes = (text: string) => new TextEncoder().encode(text);

for (const idempotency of [true, false]) {
  describe(`a lost response does not duplicate (server idempotency ${idempotency ? 'on' : 'off'})`, () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ env: idempotency ? {} : { PARLEY_DISABLE_IDEMPOTENCY: '1' } });
    });
    afterAll(async () => server.stop());

    it('conversation create', async () => {
      const d = makeDevice(server.baseUrl, server.tokens.alice);
      const temp = await d.client.createConversation({ contact_id: 'lost-create' });
      d.net.inject('lose-response', 'POST', /^\/v1\/conversations/);
      const first = await d.engine.syncOnce();
      expect(first.push).toMatchObject({ kind: 'waiting', reason: 'network' });
      expect((await serverConversations(server.baseUrl, server.tokens.alice)).filter((c) => c.contact_id === 'lost-create')).toHaveLength(1);
      await d.settle();
      const onServer = (await serverConversations(server.baseUrl, server.tokens.alice)).filter((c) => c.contact_id === 'lost-create');
      expect(onServer).toHaveLength(1);
      expect(await d.client.resolveId(temp)).toBe(onServer[0]!.id);
      expect((await d.db.conversations.toArray()).filter((c) => c.contact_id === 'lost-create')).toHaveLength(1);
      d.close();
    });

    it('file upload, twice in a row with the same name and size', async () => {
      const d = makeDevice(server.baseUrl, server.tokens.alice);
      const conv = await d.client.createConversation({ contact_id: 'lost-upload' });
      await d.settle();
      const convId = await d.client.resolveId(conv);
      // The same bytes uploaded twice on purpose: two intentions, two files, never three.
      await d.client.uploadFile({ conversationId: convId }, { name: 'same.txt', bytes: bytes('same') });
      await d.client.uploadFile({ conversationId: convId }, { name: 'same.txt', bytes: bytes('same') });
      d.net.inject('lose-response', 'POST', /^\/v1\/files/);
      d.net.inject('lose-response', 'POST', /^\/v1\/files/);
      await d.engine.syncOnce();
      expect(await serverFiles(server.baseUrl, server.tokens.alice, convId)).toHaveLength(1);
      await d.settle();
      expect(d.net.pendingFaults()).toBe(0);
      const files = await serverFiles(server.baseUrl, server.tokens.alice, convId);
      expect(files).toHaveLength(2);
      expect((await d.db.files.where('conversationId').equals(convId).toArray()).map((f) => f.id).sort()).toEqual(files.map((f) => f.id).sort());
      d.close();
    });

    it('update, rename and deletes', async () => {
      const d = makeDevice(server.baseUrl, server.tokens.alice);
      const conv = await d.client.createConversation({ contact_id: 'lost-misc' });
      const doomed = await d.client.createConversation({ contact_id: 'lost-misc-doomed' });
      const file = await d.client.uploadFile({ conversationId: conv }, { name: 'r.txt', bytes: bytes('r') });
      const file2 = await d.client.uploadFile({ conversationId: conv }, { name: 's.txt', bytes: bytes('s') });
      await d.settle();
      const [convId, doomedId, fileId, file2Id] = await Promise.all([conv, doomed, file, file2].map((id) => d.client.resolveId(id)));
      await d.client.updateConversation(convId!, { is_muted: true });
      await d.client.renameFile(fileId!, 'renamed.txt');
      await d.client.deleteFile(file2Id!);
      await d.client.deleteConversation(doomedId!);
      for (const method of ['PUT', 'PUT', 'DELETE', 'DELETE']) d.net.inject('lose-response', method);
      await d.settle();
      expect(d.net.pendingFaults()).toBe(0);
      const conversations = await serverConversations(server.baseUrl, server.tokens.alice);
      expect(conversations.find((c) => c.id === convId)?.is_muted).toBe(true);
      expect(conversations.some((c) => c.id === doomedId)).toBe(false);
      expect((await serverFiles(server.baseUrl, server.tokens.alice, convId)).map((f) => f.filename)).toEqual(['renamed.txt']);
      expect(await d.db.outbox.count()).toBe(0);
      d.close();
    });

    if (idempotency) {
      it('once a replay has shown the server is idempotent, a lost upload is simply sent again with its key', async () => {
        const d = makeDevice(server.baseUrl, server.tokens.alice);
        const conv = await d.client.createConversation({ contact_id: 'learn-idem' });
        await d.settle();
        const convId = await d.client.resolveId(conv);
        await d.client.updateConversation(convId, { is_muted: true });
        d.net.inject('lose-response', 'PUT');
        await d.settle();
        expect(await serverSupportsIdempotency(d.db)).toBe(true);

        await d.client.uploadFile({ conversationId: convId }, { name: 'keyed.txt', bytes: bytes('k') });
        d.net.inject('lose-response', 'POST', /^\/v1\/files/);
        const before = d.net.seen.length;
        await d.settle();
        const requests = d.net.seen.slice(before);
        // No snapshot/verification listing: two POSTs with one key, the second answered from the store.
        expect(requests.filter((r) => r.path.startsWith('/v1/files?conversation_id'))).toHaveLength(0);
        const posts = requests.filter((r) => r.method === 'POST');
        expect(posts).toHaveLength(2);
        expect(posts[0]!.headers['Idempotency-Key']).toBe(posts[1]!.headers['Idempotency-Key']);
        expect((await serverFiles(server.baseUrl, server.tokens.alice, convId)).map((f) => f.filename)).toEqual(['keyed.txt']);
        d.close();
      });
    }

    it('the tab is closed while a request is in flight; the next tab verifies instead of duplicating', async () => {
      const indexedDB = new IDBFactory();
      const tab1 = makeDevice(server.baseUrl, server.tokens.alice, { indexedDB, name: 'shared' });
      const conv = await tab1.client.createConversation({ contact_id: 'closed-tab' });
      await tab1.settle();
      const convId = await tab1.client.resolveId(conv);
      await tab1.client.uploadFile({ conversationId: convId }, { name: 'inflight.bin', bytes: bytes('0123456789') });
      // The request reaches the server, which stores the file; the tab dies before the answer.
      let reached!: () => void;
      const arrived = new Promise<void>((resolve) => (reached = resolve));
      const dying = makeDevice(server.baseUrl, server.tokens.alice, {
        indexedDB,
        name: 'shared',
        engine: {
          fetch: async (input, init) => {
            if (init?.method === 'POST') {
              const response = await fetch(input, init);
              await response.arrayBuffer();
              reached();
              return new Promise<Response>(() => {}); // never answers: the tab is gone
            }
            return fetch(input, init);
          },
          requestTimeoutMs: undefined,
        },
      });
      void dying.engine.syncOnce();
      await arrived;
      expect((await tab1.db.outbox.toArray())[0]?.state).toBe('inflight');
      dying.close();
      tab1.close();

      const tab2 = makeDevice(server.baseUrl, server.tokens.alice, { indexedDB, name: 'shared' });
      await tab2.settle();
      const files = await serverFiles(server.baseUrl, server.tokens.alice, convId);
      expect(files.map((f) => f.filename)).toEqual(['inflight.bin']);
      expect((await tab2.db.files.where('conversationId').equals(convId).toArray()).map((f) => f.id)).toEqual([files[0]!.id]);
      tab2.close();
    });
  });
}

describe('retryable, sign-in and refused answers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('5xx: retried with exponential backoff, not before its time', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    await d.client.createConversation({ contact_id: 'five-hundred' });
    d.net.inject({ status: 503, body: { type: 'api_error', code: 'internal', message: 'try later' } }, 'POST');
    d.net.inject({ status: 500, body: { type: 'api_error', code: 'internal', message: 'boom' } }, 'POST');
    const first = await d.engine.syncOnce();
    expect(first.push).toEqual({ kind: 'waiting', until: d.clock.now() + 750, reason: 'server' });
    expect((await readSyncStatus(d.db)).nextRetryAt).toBe(d.clock.now() + 750);
    const sent = d.net.seen.length;
    const early = await d.engine.syncOnce();
    expect(early.push.kind).toBe('waiting');
    expect(d.net.seen.slice(sent).filter((r) => r.method === 'POST')).toHaveLength(0);
    d.clock.advance(750);
    const second = await d.engine.syncOnce();
    // Second attempt: the delay doubles (equal jitter with random()=0.5 → 0.75 × 2 s).
    expect(second.push).toEqual({ kind: 'waiting', until: d.clock.now() + 1500, reason: 'server' });
    d.clock.advance(1500);
    await d.settle();
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).filter((c) => c.contact_id === 'five-hundred')).toHaveLength(1);
    const status = await readSyncStatus(d.db);
    expect(status).toMatchObject({ pendingCount: 0, failed: [], online: true, needsSignIn: false, lastError: null });
    expect(status.lastSyncAt).toBe(d.clock.now());
    d.close();
  });

  it('429 honours Retry-After', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    await d.client.createConversation({ contact_id: 'rate-limited' });
    d.net.inject({ status: 429, headers: { 'retry-after': '7' }, body: { type: 'invalid_request', code: 'rate_limited', message: 'slow down' } }, 'POST');
    const first = await d.engine.syncOnce();
    expect(first.push).toEqual({ kind: 'waiting', until: d.clock.now() + 7000, reason: 'rate_limited' });
    d.clock.advance(6999);
    await d.engine.syncOnce();
    expect(await d.db.outbox.count()).toBe(1);
    d.clock.advance(1);
    await d.engine.syncOnce();
    expect(await d.db.outbox.count()).toBe(0);
    d.close();
  });

  it('409 idempotency_in_progress: retried after Retry-After with the same key, never a dead letter', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    const temp = await d.client.createConversation({ contact_id: 'in-progress' });
    await d.settle();
    const id = await d.client.resolveId(temp);
    await d.client.updateConversation(id, { is_pinned: true });
    // The first PUT reaches the server and acts, its answer is lost; the retry finds it "still running".
    d.net.inject('lose-response', 'PUT');
    d.net.inject(
      { status: 409, headers: { 'retry-after': '5' }, body: { type: 'invalid_request', code: 'idempotency_in_progress', message: 'a request with this key is still running' } },
      'PUT',
    );
    expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'network' });
    d.clock.advance(10 * 60_000);
    const busy = await d.engine.syncOnce();
    expect(busy.push).toEqual({ kind: 'waiting', until: d.clock.now() + 5000, reason: 'in_progress' });
    const [op] = await d.db.outbox.toArray();
    expect(op).toMatchObject({ state: 'queued', outcomeUnknown: true });
    expect(op!.keyVersion).toBeUndefined();
    expect((await readSyncStatus(d.db)).failed).toEqual([]);
    expect(await serverSupportsIdempotency(d.db)).toBe(true);

    const puts = () => d.net.seen.filter((r) => r.method === 'PUT');
    d.clock.advance(4999);
    await d.engine.syncOnce();
    expect(puts()).toHaveLength(2); // not before Retry-After
    d.clock.advance(1);
    await d.engine.syncOnce();
    expect(await d.db.outbox.count()).toBe(0);
    expect(puts()).toHaveLength(3);
    expect(new Set(puts().map((r) => r.headers['Idempotency-Key'])).size).toBe(1);
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === id)?.is_pinned).toBe(true);
    expect((await d.db.conversations.get(id))?.syncState).toBe('synced');
    d.close();
  });

  it('507 insufficient_storage is retried like any 5xx; the upload lands once', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    const temp = await d.client.createConversation({ contact_id: 'disk-full' });
    await d.settle();
    const id = await d.client.resolveId(temp);
    await d.client.uploadFile({ conversationId: id }, { name: 'scan.txt', bytes: bytes('scan') });
    d.net.inject({ status: 507, body: { type: 'api_error', code: 'insufficient_storage', message: 'disk full' } }, 'POST', /^\/v1\/files/);
    const first = await d.engine.syncOnce();
    expect(first.push).toMatchObject({ kind: 'waiting', reason: 'server' });
    expect((await readSyncStatus(d.db)).failed).toEqual([]);
    expect(await d.db.uploadChunks.count()).toBe(1);
    await d.settle();
    const files = await serverFiles(server.baseUrl, server.tokens.alice, id);
    expect(files.map((f) => f.filename)).toEqual(['scan.txt']);
    expect(await d.db.uploadChunks.count()).toBe(0);
    d.close();
  });

  it('401 pauses sync and asks to sign in again; nothing is lost', async () => {
    const d = makeDevice(server.baseUrl, 'revoked-token');
    await d.client.createConversation({ contact_id: 'unauth' });
    const first = await d.engine.syncOnce();
    expect(first.push.kind).toBe('unauthenticated');
    expect(await readSyncStatus(d.db)).toMatchObject({ needsSignIn: true, pendingCount: 1, failed: [] });
    const sent = d.net.seen.length;
    await d.engine.syncOnce();
    expect(d.net.seen.length).toBe(sent); // paused: does not hammer the server

    d.setToken(server.tokens.alice);
    await d.engine.signedIn();
    await d.settle();
    expect(await readSyncStatus(d.db)).toMatchObject({ needsSignIn: false, pendingCount: 0 });
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).some((c) => c.contact_id === 'unauth')).toBe(true);
    d.close();
  });

  it('a real 400 fails only that operation and what depends on it; retry and discard', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    const a = await d.client.createConversation({ contact_id: 'refused-a' });
    const b = await d.client.createConversation({ contact_id: 'refused-b' });
    await d.settle();
    const [aId, bId] = await Promise.all([a, b].map((id) => d.client.resolveId(id)));
    await d.client.updateConversation(aId!, { pinned_message_id: 'AAAAAAAAAAAAAAAA' }); // no such message → 400
    await d.engine.syncOnce();
    await d.client.updateConversation(aId!, { is_muted: true }); // same conversation: must wait
    await d.client.updateConversation(bId!, { is_pinned: true }); // unrelated: must go through
    await d.engine.syncOnce();

    const status = await readSyncStatus(d.db);
    expect(status.failed).toHaveLength(2);
    expect(status.failed[0]).toMatchObject({ kind: 'conversation.update', entityId: aId, blocked: false, error: { status: 400, code: 'parameter_invalid' } });
    expect(status.failed[0]!.error!.message).toMatch(/pinned_message_id/);
    expect(status.failed[1]).toMatchObject({ entityId: aId, blocked: true });
    const conversations = await serverConversations(server.baseUrl, server.tokens.bob);
    expect(conversations.find((c) => c.id === bId)?.is_pinned).toBe(true);
    expect(conversations.find((c) => c.id === aId)?.is_muted).toBe(false);
    expect((await d.db.conversations.get(aId!))?.syncState).toBe('failed');

    // Retry: the server still refuses (and not from a stored answer: a new key is used).
    await d.client.retryOperation(status.failed[0]!.opId);
    await d.engine.syncOnce();
    const keys = d.net.seen.filter((r) => r.method === 'PUT' && r.path.includes(aId!)).map((r) => r.headers['Idempotency-Key']);
    expect(new Set(keys).size).toBe(2);
    expect((await readSyncStatus(d.db)).failed).toHaveLength(2);

    // Discard: the mirror falls back to the server's state and the blocked update goes out.
    await d.client.discardOperation(status.failed[0]!.opId);
    expect((await d.db.conversations.get(aId!))?.pinned_message_id).toBeNull();
    await d.settle();
    expect((await serverConversations(server.baseUrl, server.tokens.bob)).find((c) => c.id === aId)?.is_muted).toBe(true);
    const mirror = await mirrorState(d.db);
    expect(mirror.conversations.sort(byId)).toEqual((await serverConversations(server.baseUrl, server.tokens.bob)).sort(byId));
    d.close();
  });

  it('a server without the last_opened_at extension: the rest of the update goes, opens stop being reported', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    const conv = await d.client.createConversation({ contact_id: 'brief-only' });
    await d.settle();
    const id = await d.client.resolveId(conv);
    await d.client.updateConversation(id, { is_pinned: true });
    await d.client.markOpened(id, 1_700_000_999);
    // What a server with only the brief's interface answers (ours has the extension, so synthetic).
    d.net.inject({ status: 400, body: { type: 'invalid_request', code: 'parameter_unknown', message: 'Unknown parameter: last_opened_at', param: 'last_opened_at' } }, 'PUT');
    await d.settle();
    expect(await readSyncStatus(d.db)).toMatchObject({ pendingCount: 0, failed: [] });
    const onServer = (await serverConversations(server.baseUrl, server.tokens.bob)).find((c) => c.id === id);
    expect(onServer).toMatchObject({ is_pinned: true, last_opened_at: null });
    await d.client.markOpened(id, 1_700_001_000);
    expect(await d.db.outbox.count()).toBe(0);
    d.close();
  });

  it('409 conversation_exists adopts the existing conversation, with later work applied to it', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    d.net.offline = true;
    const temp = await d.client.createConversation({ group_id: 'adopt-me' });
    await d.client.updateConversation(temp, { is_pinned: true });
    const existing = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ group_id: 'adopt-me' });
    d.net.offline = false;
    await d.settle();
    expect(await d.client.resolveId(temp)).toBe(existing.id);
    const onServer = (await serverConversations(server.baseUrl, server.tokens.alice)).filter((c) => c.group_id === 'adopt-me');
    expect(onServer).toEqual([{ ...existing, is_pinned: true }]);
    expect(await d.db.conversations.get(existing.id)).toMatchObject({ is_pinned: true, syncState: 'synced' });
    d.close();
  });
});
