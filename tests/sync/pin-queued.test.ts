// @vitest-environment node
// Pinning the message of a file whose upload is still queued: the pin waits in the outbox for the
// upload (which creates the message) and lands on the real message id, against the real server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SyncInputError } from '../../lib/sync/outbox/client';
import { isTempId } from '../../lib/sync/outbox/operations';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations, serverFiles, type Device } from './harness';

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

async function syncedConversation(contact: string): Promise<string> {
  const id = await device.client.createConversation({ contact_id: contact });
  await device.settle();
  return device.client.resolveId(id);
}

describe('pinning the message of a queued upload', () => {
  it('is accepted at once and lands on the real message id once the upload is replayed', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice);
    const conversationId = await syncedConversation('pin-queued-1');
    device.net.offline = true;
    const fileId = await device.client.uploadFile({ conversationId }, { name: 'scan.txt', type: 'text/plain', bytes: bytes('scan') });
    const localMessage = (await device.db.files.get(fileId))!.message_id;
    expect(isTempId(localMessage)).toBe(true);

    await device.client.updateConversation(conversationId, { pinned_message_id: localMessage });
    await device.client.updateConversation(conversationId, { is_muted: true });
    // On screen at once.
    expect(await device.db.conversations.get(conversationId)).toMatchObject({ pinned_message_id: localMessage, is_muted: true, syncState: 'pending' });

    device.net.offline = false;
    await device.settle();
    const [file] = await serverFiles(server.baseUrl, server.tokens.alice, conversationId);
    expect(file).toBeDefined();
    const onServer = (await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === conversationId);
    expect(onServer).toMatchObject({ pinned_message_id: file!.message_id, is_muted: true });
    expect(isTempId(file!.message_id)).toBe(false);
    expect(await device.db.conversations.get(conversationId)).toMatchObject({ pinned_message_id: file!.message_id, syncState: 'synced' });
    expect(await device.db.outbox.count()).toBe(0);
  });

  it('refuses a temp message id that nothing in the outbox is going to create', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice);
    const conversationId = await syncedConversation('pin-queued-2');
    await expect(device.client.updateConversation(conversationId, { pinned_message_id: 'local_nothing-creates-this' })).rejects.toBeInstanceOf(SyncInputError);
    expect(await device.db.outbox.count()).toBe(0);
  });

  it('waits while the upload is refused, and goes with it when the user discards the upload', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice);
    const conversationId = await syncedConversation('pin-queued-3');
    const fileId = await device.client.uploadFile({ conversationId }, { name: 'refused.txt', type: 'text/plain', bytes: bytes('x') });
    const localMessage = (await device.db.files.get(fileId))!.message_id;
    await device.client.updateConversation(conversationId, { pinned_message_id: localMessage });
    device.net.inject({ status: 422, body: { error: { type: 'invalid_request_error', message: 'refused for the test' } } }, 'POST', /^\/v1\/files/);
    await device.settle();

    // The pin was never sent: it waits for a message that does not exist.
    expect(device.net.seen.filter((r) => r.method === 'PATCH')).toHaveLength(0);
    const ops = await device.db.outbox.orderBy('seq').toArray();
    expect(ops.map((op) => [op.body.kind, op.state])).toEqual([
      ['file.upload', 'failed'],
      ['conversation.update', 'queued'],
    ]);

    await device.client.discardOperation(ops[0]!.id);
    expect(await device.db.outbox.count()).toBe(0);
    expect(await device.db.conversations.get(conversationId)).toMatchObject({ pinned_message_id: null, syncState: 'synced' });
  });
});
