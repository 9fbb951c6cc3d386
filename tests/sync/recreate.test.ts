// @vitest-environment node
// Deleting a conversation and creating one with the same contact again, while the delete has not
// reached the server yet: the new conversation must survive the old one's delete. (Found by the
// property test: the create's 409 conversation_exists adopted the conversation whose delete was
// still queued, and the delete then took the new one with it.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations } from './harness';

describe('re-creating a conversation whose delete is still queued', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('the delete is held up behind a refused change; the new conversation outlives it', async () => {
    const token = server.tokens.alice;
    const d = makeDevice(server.baseUrl, token);
    const first = await d.client.createConversation({ contact_id: 'again' });
    await d.settle();
    const oldId = await d.client.resolveId(first);
    // A change the server refuses (no such message), so later work on the conversation waits…
    await d.client.updateConversation(oldId, { pinned_message_id: 'AAAAAAAAAAAAAAAA' });
    await d.engine.syncOnce();
    expect((await readSyncStatus(d.db)).failed).toHaveLength(1);
    // …including its delete. Then the user starts a new conversation with the same contact.
    await d.client.deleteConversation(oldId);
    const second = await d.client.createConversation({ contact_id: 'again' });
    expect(second).not.toBe(oldId);
    d.clock.advance(600_000);
    await d.settle();
    // The user gives up the refused change: the old conversation's delete goes through.
    for (const f of (await readSyncStatus(d.db)).failed.filter((x) => !x.blocked)) await d.client.discardOperation(f.opId);
    await d.settle();

    const onServer = (await serverConversations(server.baseUrl, token)).filter((c) => c.contact_id === 'again');
    expect(onServer.map((c) => c.id)).not.toContain(oldId);
    expect(onServer).toHaveLength(1);
    expect(await d.client.resolveId(second)).toBe(onServer[0]!.id);
    d.close();
  });

  it('a conversation shown from the server that is really our own doomed create is not reused', async () => {
    const token = server.tokens.bob;
    const d = makeDevice(server.baseUrl, token);
    const first = await d.client.createConversation({ contact_id: 'twice' });
    d.net.inject('lose-response', 'POST');
    await d.engine.syncOnce(); // created on the server, the answer lost: the outcome is unknown
    await d.engine.syncOnce(); // the retry waits; the pull shows the server's copy under its real id
    const shown = (await d.db.conversations.where('contact_id').equals('twice').toArray()).map((c) => c.id);
    expect(shown).toContain(first);
    expect(shown.length).toBe(2);
    await d.client.deleteConversation(first); // the user deletes the one they made…
    const second = await d.client.createConversation({ contact_id: 'twice' }); // …and starts again
    const serverCopy = shown.find((id) => id !== first)!;
    expect(second).not.toBe(serverCopy); // that copy IS the one being deleted
    await d.settle();

    const onServer = (await serverConversations(server.baseUrl, token)).filter((c) => c.contact_id === 'twice');
    expect(onServer).toHaveLength(1);
    expect(onServer[0]!.id).not.toBe(serverCopy);
    expect(await d.client.resolveId(second)).toBe(onServer[0]!.id);
    d.close();
  });

  it('starting the same contact again opens the new conversation already started, not a second one', async () => {
    const token = server.tokens.alice;
    const d = makeDevice(server.baseUrl, token);
    const first = await d.client.createConversation({ contact_id: 'thrice' });
    await d.settle();
    await d.client.deleteConversation(await d.client.resolveId(first));
    const second = await d.client.createConversation({ contact_id: 'thrice' });
    // The old one's delete is still queued; the new one was started after it: it is the one.
    expect(await d.client.createConversation({ contact_id: 'thrice' })).toBe(second);
    expect(await d.db.conversations.where('contact_id').equals('thrice').count()).toBe(1);
    expect((await d.db.outbox.toArray()).filter((op) => op.body.kind === 'conversation.create')).toHaveLength(1);
    await d.settle();
    const onServer = (await serverConversations(server.baseUrl, token)).filter((c) => c.contact_id === 'thrice');
    expect(onServer.map((c) => c.id)).toEqual([await d.client.resolveId(second)]);
    d.close();
  });
});
