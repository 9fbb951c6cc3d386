// @vitest-environment node
// An idempotent server answers a retried request with the answer it stored the first time: the
// object as it was THEN. If the mirror already holds a newer copy (a pull ran between the lost
// response and the retry), that old object must not roll it back — the pull after the push
// would not correct it, because the change feed has nothing new to say. (Found by the property
// test: another device's mute vanished from the mirror for good.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';
import { byId, makeDevice, mirrorState, otherDevice, serverConversations, serverFiles } from './harness';

describe('a replayed answer never rolls the mirror back', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('conversation update: a newer change pulled meanwhile survives the replay', async () => {
    const token = server.tokens.bob;
    const d = makeDevice(server.baseUrl, token);
    const id = await d.client.resolveId(await d.client.createConversation({ contact_id: 'replay-update' }));
    await d.settle();
    const realId = await d.client.resolveId(id);

    await d.client.updateConversation(realId, { is_pinned: true });
    d.net.inject('lose-response', 'PUT');
    await d.engine.syncOnce(); // the server pinned it; the answer was lost
    await otherDevice(server.baseUrl, token).send('PUT', `/v1/conversations/${realId}`, undefined, { is_muted: true });
    await d.engine.syncOnce(); // the retry waits out its backoff; the pull brings the mute
    expect((await d.db.conversations.get(realId))?.is_muted).toBe(true);

    d.clock.advance(600_000);
    const report = await d.engine.syncOnce(); // the retry: the server replays its first answer (not muted)
    expect(report.push.kind).toBe('done');
    expect(d.net.seen.some((r) => r.method === 'PUT' && r.fault === null)).toBe(true);
    const onServer = (await serverConversations(server.baseUrl, token)).filter((c) => c.id === realId);
    expect((await mirrorState(d.db)).conversations.filter((c) => c.id === realId).sort(byId)).toEqual(onServer);
    expect(onServer[0]).toMatchObject({ is_pinned: true, is_muted: true });
    d.close();
  });

  it('file rename: a newer name pulled meanwhile survives the replay', async () => {
    const token = server.tokens.bob;
    const d = makeDevice(server.baseUrl, token);
    const conversation = await d.client.createConversation({ contact_id: 'replay-rename' });
    const file = await d.client.uploadFile({ conversationId: conversation }, { name: 'a.txt', type: 'text/plain', bytes: new Uint8Array(3) });
    await d.settle();
    const fileId = await d.client.resolveId(file);

    await d.client.renameFile(fileId, 'b.txt');
    d.net.inject('lose-response', 'PUT');
    await d.engine.syncOnce();
    await otherDevice(server.baseUrl, token).send('PUT', `/v1/files/${fileId}`, undefined, { filename: 'c.txt' });
    await d.engine.syncOnce();
    expect((await d.db.serverFiles.get(fileId))?.filename).toBe('c.txt'); // shown: still ours, b.txt, pending

    d.clock.advance(600_000);
    expect((await d.engine.syncOnce()).push.kind).toBe('done');
    const onServer = await serverFiles(server.baseUrl, token, await d.client.resolveId(conversation));
    expect(onServer.map((f) => f.filename)).toEqual(['c.txt']);
    expect((await d.db.files.get(fileId))?.filename).toBe('c.txt');
    d.close();
  });

  it('conversation create: one deleted elsewhere since is not brought back by the replay', async () => {
    const token = server.tokens.bob;
    const d = makeDevice(server.baseUrl, token);
    const handle = await d.client.createConversation({ contact_id: 'replay-gone' });
    d.net.inject('lose-response', 'POST');
    await d.engine.syncOnce(); // created; the answer lost
    await d.engine.syncOnce(); // the retry waits; the pull shows the server's copy
    const created = (await serverConversations(server.baseUrl, token)).find((c) => c.contact_id === 'replay-gone')!;
    expect(await d.db.conversations.get(created.id)).toBeDefined();
    await otherDevice(server.baseUrl, token).send('DELETE', `/v1/conversations/${created.id}`);
    await d.engine.syncOnce(); // the pull brings the deletion
    expect(await d.db.conversations.get(created.id)).toBeUndefined();

    d.clock.advance(600_000);
    expect((await d.engine.syncOnce()).push.kind).toBe('done'); // the retry: replayed 201 of a deleted conversation
    expect(await d.client.resolveId(handle)).toBe(created.id);
    expect((await mirrorState(d.db)).conversations.filter((c) => c.contact_id === 'replay-gone')).toEqual([]);
    d.close();
  });
});
