// @vitest-environment node
// Server copies are sparse (rebase.ts): a row with no pending work is shown exactly as the server
// has it and stored once, as its visible row. A copy of the server's word is taken when pending
// work first changes or hides a row, kept up to date by pulls while the work is pending, and
// dropped once the row is settled. These tests pin each step against a real server, for both a
// feed server and a plain one (whose pulls list and sweep).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, PLAIN } from './harness';

const bytes = (text: string) => new TextEncoder().encode(text);

describe.each([
  ['feed', {}],
  ['plain', PLAIN],
] as const)('server copies, %s server', (_kind, env) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env });
  });
  afterAll(async () => server.stop());

  it('a synced mirror stores each record once: no copies', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    const c = await other.createConversation({ contact_id: 'once' });
    const f = await other.upload(c.id, 'once.txt', bytes('once'));
    const d = makeDevice(server.baseUrl, token);
    await d.settle();
    expect(await d.db.conversations.get(c.id)).toMatchObject({ contact_id: 'once', syncState: 'synced' });
    expect(await d.db.files.get(f.id)).toMatchObject({ filename: 'once.txt', conversationId: c.id, syncState: 'synced' });
    expect(await d.db.serverConversations.count()).toBe(0);
    expect(await d.db.serverFiles.count()).toBe(0);
    d.close();
  });

  it('pending work takes a copy, pulls keep it current under the pending change, settling drops it', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    const c = await other.createConversation({ contact_id: 'copy-rename' });
    const f = await other.upload(c.id, 'a.txt', bytes('a'));
    const d = makeDevice(server.baseUrl, token);
    await d.settle();

    // A 503 puts the change in a backoff: the pulls that follow run while it is pending.
    d.net.inject({ status: 503 }, 'PUT');
    await d.client.renameFile(f.id, 'mine.txt');
    await d.engine.syncOnce();
    expect(await d.db.serverFiles.get(f.id)).toMatchObject({ filename: 'a.txt', conversationId: c.id });
    expect(await d.db.files.get(f.id)).toMatchObject({ filename: 'mine.txt', syncState: 'pending' });

    // Another device changes the file meanwhile: the pull updates the copy, the user's name stays shown.
    expect((await other.send('PUT', `/v1/files/${f.id}`, undefined, { filename: 'theirs.txt' })).status).toBe(200);
    await d.engine.syncOnce();
    expect(await d.db.serverFiles.get(f.id)).toMatchObject({ filename: 'theirs.txt' });
    expect(await d.db.files.get(f.id)).toMatchObject({ filename: 'mine.txt', syncState: 'pending' });

    await d.settle(); // the rename goes through
    expect(await d.db.files.get(f.id)).toMatchObject({ filename: 'mine.txt', syncState: 'synced' });
    expect(await d.db.serverFiles.get(f.id)).toBeUndefined();
    d.close();
  });

  it('a discarded change shows the server state it was taken over, including changes pulled since', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    const c = await other.createConversation({ contact_id: 'copy-discard' });
    const d = makeDevice(server.baseUrl, token);
    await d.settle();

    d.net.inject({ status: 503 }, 'PUT');
    await d.client.updateConversation(c.id, { is_pinned: true });
    await d.engine.syncOnce();
    expect(await d.db.serverConversations.get(c.id)).toMatchObject({ is_pinned: false, is_muted: false });
    expect((await other.send('PUT', `/v1/conversations/${c.id}`, undefined, { is_muted: true })).status).toBe(200);
    await d.engine.syncOnce();
    expect(await d.db.conversations.get(c.id)).toMatchObject({ is_pinned: true, is_muted: true, syncState: 'pending' });

    const [op] = await d.db.outbox.toArray();
    await d.client.discardOperation(op!.id);
    expect(await d.db.conversations.get(c.id)).toMatchObject({ is_pinned: false, is_muted: true, syncState: 'synced' });
    expect(await d.db.serverConversations.count()).toBe(0);
    d.close();
  });

  it("a queued conversation delete keeps its hidden files' server word: discarding it shows them again", async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    const c = await other.createConversation({ contact_id: 'copy-delete' });
    const files = [await other.upload(c.id, 'x.txt', bytes('x')), await other.upload(c.id, 'y.txt', bytes('y'))];
    const d = makeDevice(server.baseUrl, token);
    await d.settle();

    d.net.inject({ status: 503 }, 'DELETE');
    await d.client.deleteConversation(c.id);
    await d.engine.syncOnce();
    expect(await d.db.conversations.get(c.id)).toBeUndefined();
    expect(await d.db.files.where('conversationId').equals(c.id).count()).toBe(0);
    expect((await d.db.serverFiles.where('conversationId').equals(c.id).primaryKeys()).sort()).toEqual(files.map((f) => f.id).sort());

    // A pull while the delete waits: the hidden files stay hidden.
    await d.engine.syncOnce();
    expect(await d.db.files.where('conversationId').equals(c.id).count()).toBe(0);

    const [op] = await d.db.outbox.toArray();
    await d.client.discardOperation(op!.id);
    expect(await d.db.conversations.get(c.id)).toMatchObject({ contact_id: 'copy-delete', syncState: 'synced' });
    expect((await d.db.files.where('conversationId').equals(c.id).toArray()).map((f) => f.filename).sort()).toEqual(['x.txt', 'y.txt']);
    expect(await d.db.serverConversations.count()).toBe(0);
    expect(await d.db.serverFiles.count()).toBe(0);
    d.close();
  });

  it('a row the server no longer has goes, copy or not; one with pending work waits for it', async () => {
    const token = server.tokens.alice;
    const other = otherDevice(server.baseUrl, token);
    const plain = await other.createConversation({ contact_id: 'gone-plain' });
    const busy = await other.createConversation({ contact_id: 'gone-busy' });
    const d = makeDevice(server.baseUrl, token);
    await d.settle();

    d.net.inject({ status: 503 }, 'PUT');
    await d.client.updateConversation(busy.id, { is_muted: true });
    await d.engine.syncOnce();
    expect((await other.send('DELETE', `/v1/conversations/${plain.id}`)).status).toBe(204);
    expect((await other.send('DELETE', `/v1/conversations/${busy.id}`)).status).toBe(204);
    await d.engine.syncOnce();
    expect(await d.db.conversations.get(plain.id)).toBeUndefined();
    // The user's change stays visible until the server answers it.
    expect(await d.db.conversations.get(busy.id)).toMatchObject({ is_muted: true, syncState: 'pending' });

    await d.settle(); // 404: the update is refused, and Discard shows the server's word: gone
    const [failed] = await d.db.outbox.where('state').equals('failed').toArray();
    expect(failed?.error?.code).toBe('resource_missing');
    await d.client.discardOperation(failed!.id);
    await d.settle();
    expect(await d.db.conversations.get(busy.id)).toBeUndefined();
    expect(await d.db.serverConversations.count()).toBe(0);
    d.close();
  });
});
