// @vitest-environment node
// Opening a conversation is the app's bookkeeping, not the user's change (issue 32 item 5,
// lib/sync/mirror/bookkeeping.ts): the last_opened_at report goes quietly — no unsynced mark, not
// pending, never a failure — and reaches the server once it can.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverConversations, type Device } from './harness';

let server: TestServer;
let device: Device | null = null;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.stop());
afterEach(() => {
  device?.close();
  device = null;
});

async function withConversation(contact: string): Promise<{ d: Device; id: string }> {
  const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: contact });
  const d = (device = makeDevice(server.baseUrl, server.tokens.alice));
  await d.settle();
  return { d, id: conv.id };
}

describe('opening a conversation goes quietly', () => {
  it('offline: nothing pending, no mark on the row; online: the server has it', async () => {
    const { d, id } = await withConversation('opened-offline');
    d.net.offline = true;
    await d.client.markOpened(id, 1_700_000_500);
    expect(await d.db.outbox.count()).toBe(1); // queued, to be sent
    expect(await d.db.conversations.get(id)).toMatchObject({ last_opened_at: 1_700_000_500, syncState: 'reporting' });
    const status = await readSyncStatus(d.db);
    expect(status.pendingCount).toBe(0);
    expect(status.failed).toEqual([]);

    d.net.offline = false;
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === id)?.last_opened_at).toBe(1_700_000_500);
    expect(await d.db.conversations.get(id)).toMatchObject({ last_opened_at: 1_700_000_500, syncState: 'synced' });
  });

  it('a user change made after it is the user\'s change again (merged into one request), and counts', async () => {
    const { d, id } = await withConversation('opened-then-pinned');
    d.net.offline = true;
    await d.client.markOpened(id, 1_700_000_600);
    await d.client.updateConversation(id, { is_pinned: true });
    expect(await d.db.outbox.count()).toBe(1);
    expect((await readSyncStatus(d.db)).pendingCount).toBe(1);
    expect(await d.db.conversations.get(id)).toMatchObject({ is_pinned: true, syncState: 'pending' });
    d.net.offline = false;
    await d.settle();
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === id)).toMatchObject({ is_pinned: true, last_opened_at: 1_700_000_600 });
  });

  it('refused (the conversation deleted elsewhere): dropped quietly, never a failure, nothing held up', async () => {
    const { d, id } = await withConversation('opened-deleted');
    d.net.offline = true;
    await d.client.markOpened(id, 1_700_000_700);
    expect((await otherDevice(server.baseUrl, server.tokens.alice).send('DELETE', `/v1/conversations/${id}`)).status).toBe(204);
    d.net.offline = false;
    await d.settle();
    expect(await d.db.outbox.toArray()).toEqual([]);
    expect((await readSyncStatus(d.db)).failed).toEqual([]);
    expect(await d.db.conversations.get(id)).toBeUndefined();
  });

  it('refused with a 4xx while a later user change waits behind it: the report goes, the change is sent', async () => {
    const { d, id } = await withConversation('opened-refused');
    // The report is refused once (a rule the server may have); the user's pin, queued after it
    // while it was out, must not be held up by it.
    d.net.offline = true;
    await d.client.markOpened(id, 1_700_000_800);
    const [report] = await d.db.outbox.toArray();
    await d.db.outbox.update(report!.seq, { firstSentAt: 1 }); // sent once: the pin is not merged into it
    await d.client.updateConversation(id, { is_muted: true });
    expect(await d.db.outbox.count()).toBe(2);
    expect((await readSyncStatus(d.db)).pendingCount).toBe(1);
    d.net.offline = false;
    d.net.inject({ status: 422, body: { type: 'invalid_request', code: 'rule', message: 'not now' } }, 'PUT', new RegExp(id));
    await d.settle();
    expect(await d.db.outbox.toArray()).toEqual([]);
    expect((await readSyncStatus(d.db)).failed).toEqual([]);
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === id)).toMatchObject({ is_muted: true });
  });

  it('behind a failed change of the user: not listed as waiting on it, not pending', async () => {
    const { d, id } = await withConversation('opened-behind-failure');
    d.net.inject({ status: 422, body: { type: 'invalid_request', code: 'rule', message: 'not now' } }, 'PUT', new RegExp(id));
    await d.client.updateConversation(id, { is_pinned: true });
    await d.settle();
    await d.client.markOpened(id, 1_700_000_900);
    const status = await readSyncStatus(d.db);
    expect(status.failed.map((f) => [f.kind, f.blocked])).toEqual([['conversation.update', false]]);
    expect(status.pendingCount).toBe(0);
    expect(await d.db.outbox.count()).toBe(2);
  });
});
