// @vitest-environment node
// Every operation made offline, then replayed against the real embedded server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';
import {
  byId,
  makeDevice,
  mirrorState,
  serverConversations,
  serverFiles,
  serverFilesWithConversation,
  type Device,
} from './harness';

let server: TestServer;
let device: Device;
const bytes = (text: string) => new TextEncoder().encode(text);

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});
afterEach(() => device?.close());

async function expectMirrorEqualsServer(d: Device, token: string) {
  const mirror = await mirrorState(d.db);
  const conversations = await serverConversations(server.baseUrl, token);
  const files = await serverFilesWithConversation(server.baseUrl, token);
  expect(mirror.conversations.sort(byId)).toEqual(conversations.sort(byId));
  expect(mirror.files.sort(byId)).toEqual(
    [...files.values()].map(({ file, conversationId }) => ({ ...file, conversationId })).sort(byId),
  );
}

describe('offline operations, replayed later', () => {
  it('create, upload into it, update, mark opened, rename: all offline, then one sync', async () => {
    // Fresh user per test: bob's data is separate from alice's; use a unique contact.
    device = makeDevice(server.baseUrl, server.tokens.alice);
    device.net.offline = true;
    const convId = await device.client.createConversation({ contact_id: 'offline-1' });
    expect(convId.startsWith('local_')).toBe(true);
    const fileId = await device.client.uploadFile({ conversationId: convId }, { name: 'notes.txt', type: 'text/plain', bytes: bytes('hello world') });
    await device.client.updateConversation(convId, { is_pinned: true, is_muted: 'true' });
    await device.client.markOpened(convId, 1_700_000_123);
    await device.client.renameFile(fileId, 'renamed.txt');

    // Visible at once, before any sync.
    const shown = await device.db.conversations.get(convId);
    expect(shown).toMatchObject({ contact_id: 'offline-1', is_pinned: true, is_muted: true, last_opened_at: 1_700_000_123, syncState: 'pending' });
    expect(await device.db.files.get(fileId)).toMatchObject({ filename: 'renamed.txt', conversationId: convId, file_size: 11 });

    const offline = await device.engine.syncOnce();
    expect(offline.push.kind).toBe('waiting');
    expect(await device.db.conversations.get(convId)).toBeDefined();

    device.net.offline = false;
    await device.settle();

    const realId = await device.client.resolveId(convId);
    expect(realId).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(await device.db.conversations.get(convId)).toBeUndefined();
    const onServer = (await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === realId);
    expect(onServer).toMatchObject({ contact_id: 'offline-1', is_pinned: true, is_muted: true, last_opened_at: 1_700_000_123 });
    const files = await serverFiles(server.baseUrl, server.tokens.alice, realId);
    expect(files.map((f) => [f.filename, f.file_size])).toEqual([['renamed.txt', 11]]);
    const realFileId = await device.client.resolveId(fileId);
    expect(realFileId).toBe(files[0]!.id);
    expect(await device.db.files.get(realFileId)).toMatchObject({ conversationId: realId, syncState: 'synced' });
    expect(await device.db.outbox.count()).toBe(0);
    expect(await device.db.uploadChunks.count()).toBe(0);
    await expectMirrorEqualsServer(device, server.tokens.alice);
  });
});

describe('attaching to a message', () => {
  it('a second file attached offline to the message a first offline upload creates', async () => {
    device = makeDevice(server.baseUrl, server.tokens.bob, { engine: {} });
    device.net.offline = true;
    const conv = await device.client.createConversation({ contact_id: 'attach-1' });
    const first = await device.client.uploadFile({ conversationId: conv }, { name: 'first.txt', bytes: bytes('first') });
    const tempMessage = (await device.db.files.get(first))!.message_id;
    expect(tempMessage.startsWith('local_')).toBe(true);
    const second = await device.client.uploadFile({ conversationId: conv, messageId: tempMessage }, { name: 'second.txt', bytes: bytes('second!') });
    expect((await device.db.files.get(second))!.message_id).toBe(tempMessage);
    device.net.offline = false;
    device.net.inject('lose-response', 'POST', /^\/v1\/files/);
    device.net.inject('lose-response', 'POST', /^\/v1\/files/);
    await device.settle();
    const convId = await device.client.resolveId(conv);
    const files = await serverFiles(server.baseUrl, server.tokens.bob, convId);
    expect(files.map((f) => f.filename).sort()).toEqual(['first.txt', 'second.txt']);
    expect(files[0]!.message_id).toBe(files[1]!.message_id);
    expect(await device.client.resolveId(tempMessage)).toBe(files[0]!.message_id);
    await expectMirrorEqualsServer(device, server.tokens.bob);
  });
});

describe('deletes and cancellation', () => {
  it('deleting a synced conversation and a synced file offline, replayed later', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice);
    const keep = await device.client.createConversation({ contact_id: 'del-keep' });
    const gone = await device.client.createConversation({ group_id: 'del-gone' });
    const f1 = await device.client.uploadFile({ conversationId: keep }, { name: 'a.txt', bytes: bytes('aaa') });
    const f2 = await device.client.uploadFile({ conversationId: gone }, { name: 'b.txt', bytes: bytes('bbb') });
    await device.settle();
    const [keepId, goneId, f1Id, f2Id] = await Promise.all([keep, gone, f1, f2].map((id) => device.client.resolveId(id)));

    device.net.offline = true;
    await device.client.deleteFile(f1Id!);
    await device.client.deleteConversation(goneId!);
    expect(await device.db.files.get(f1Id!)).toBeUndefined();
    expect(await device.db.files.get(f2Id!)).toBeUndefined(); // hidden with its conversation
    expect(await device.db.conversations.get(goneId!)).toBeUndefined();
    await device.engine.syncOnce();
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).some((c) => c.id === goneId)).toBe(true);

    device.net.offline = false;
    await device.settle();
    const conversations = await serverConversations(server.baseUrl, server.tokens.alice);
    expect(conversations.some((c) => c.id === goneId)).toBe(false);
    expect(conversations.some((c) => c.id === keepId)).toBe(true);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, keepId)).toEqual([]);
    await expectMirrorEqualsServer(device, server.tokens.alice);
  });

  it('create then delete of something never synced cancels out: nothing is sent', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice);
    device.net.offline = true;
    const conv = await device.client.createConversation({ contact_id: 'cancel-1' });
    const file = await device.client.uploadFile({ conversationId: conv }, { name: 'x.txt', bytes: bytes('x') });
    await device.client.renameFile(file, 'y.txt');
    await device.client.updateConversation(conv, { is_muted: true });
    const otherConv = await device.client.createConversation({ contact_id: 'cancel-2' });
    const lonely = await device.client.uploadFile({ conversationId: otherConv }, { name: 'z.txt', bytes: bytes('z') });
    await device.client.deleteFile(lonely);
    await device.client.deleteConversation(conv);

    // Left: only the create of cancel-2.
    const ops = await device.db.outbox.toArray();
    expect(ops.map((op) => op.body.kind)).toEqual(['conversation.create']);
    expect(await device.db.uploadChunks.count()).toBe(0);
    expect(await device.db.files.count()).toBe(0);
    expect((await device.db.conversations.toArray()).map((c) => c.contact_id)).toEqual(['cancel-2']);

    device.net.offline = false;
    await device.settle();
    const posts = device.net.seen.filter((r) => r.method !== 'GET' && r.fault === null);
    expect(posts.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/conversations']);
    const contacts = (await serverConversations(server.baseUrl, server.tokens.alice)).map((c) => c.contact_id);
    expect(contacts).toContain('cancel-2');
    expect(contacts).not.toContain('cancel-1');
  });

  it('consecutive unsent updates are merged into one request; archive and restore', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice);
    const conv = await device.client.createConversation({ contact_id: 'merge-1' });
    await device.settle();
    const id = await device.client.resolveId(conv);
    await device.client.updateConversation(id, { archived_at: 1_700_000_500 });
    await device.client.updateConversation(id, { is_pinned: true });
    await device.client.updateConversation(id, { archived_at: null });
    expect(await device.db.outbox.count()).toBe(1);
    const before = device.net.seen.length;
    await device.settle();
    const puts = device.net.seen.slice(before).filter((r) => r.method === 'PUT');
    expect(puts).toHaveLength(1);
    const onServer = (await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === id);
    expect(onServer).toMatchObject({ is_pinned: true, archived_at: null });
    await expectMirrorEqualsServer(device, server.tokens.alice);
  });

  it('rejects invalid input before queueing anything', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice);
    await expect(device.client.createConversation({})).rejects.toThrow(/exactly one/);
    await expect(device.client.createConversation({ contact_id: 'a', group_id: 'b' })).rejects.toThrow(/exactly one/);
    await expect(device.client.createConversation({ contact_id: 'bad id!' })).rejects.toThrow();
    const conv = await device.client.createConversation({ contact_id: 'valid-1' });
    await expect(device.client.updateConversation(conv, { is_pinned: 'maybe' })).rejects.toThrow();
    await expect(device.client.updateConversation(conv, { color: 'red' })).rejects.toThrow();
    await expect(device.client.uploadFile({ conversationId: conv }, { name: 'a/b', bytes: bytes('x') })).rejects.toThrow(/filename/);
    await expect(device.client.uploadFile({ conversationId: 'nope' }, { name: 'ok', bytes: bytes('x') })).rejects.toThrow(/no conversation/);
    expect(await device.db.outbox.count()).toBe(1);
  });
});
