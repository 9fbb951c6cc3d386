// @vitest-environment node
// "Upload my copy again" (issue 32 item 3, outbox/intents/reupload-file.ts): a file renamed on this
// device and deleted on the server comes back as a failed rename; the device's copy becomes a new
// upload under the new name into the same conversation, in place of the failed change — once, on
// the server too, however often it is asked.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { byId, makeDevice, mirrorState, otherDevice, serverFiles, serverFilesWithConversation, type Device } from './harness';

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

const bytes = (text: string) => new TextEncoder().encode(text);

async function failedRenameOfDeletedFile(contact: string) {
  const other = otherDevice(server.baseUrl, server.tokens.alice);
  const conv = await other.createConversation({ contact_id: contact });
  const file = await other.upload(conv.id, 'ecg-lead-II-strip.png', bytes('the strip'));
  const d = (device = makeDevice(server.baseUrl, server.tokens.alice));
  await d.settle();
  d.net.offline = true;
  await d.client.renameFile(file.id, 'ecg-bed-3.png');
  expect((await other.send('DELETE', `/v1/files/${file.id}`)).status).toBe(204);
  d.net.offline = false;
  await d.settle();
  const [failed] = (await readSyncStatus(d.db)).failed;
  expect(failed).toMatchObject({ kind: 'file.rename', entityId: file.id, error: { status: 404 }, blocked: false });
  return { d, conv, file, opId: failed!.opId };
}

describe('upload my copy again', () => {
  it('replaces the failed rename with an upload of the copy: one file on the server, the new name, same conversation', async () => {
    const { d, conv, opId } = await failedRenameOfDeletedFile('reupload-1');
    const id = await d.client.reuploadFile(opId, { name: 'ecg-bed-3.png', type: 'image/png', bytes: bytes('the strip') });
    expect(id).toMatch(/^local_/);
    // At once: no failure left, the upload pending, the lost file's row gone.
    const status = await readSyncStatus(d.db);
    expect(status.failed).toEqual([]);
    expect(status.pendingCount).toBe(1);
    expect((await d.db.files.toArray()).map((f) => [f.filename, f.syncState])).toEqual([['ecg-bed-3.png', 'pending']]);
    // A second tap (or another tab) finds nothing to replace.
    expect(await d.client.reuploadFile(opId, { name: 'ecg-bed-3.png', bytes: bytes('the strip') })).toBeNull();
    expect(await d.db.outbox.count()).toBe(1);

    await d.settle();
    const onServer = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(onServer.map((f) => [f.filename, f.file_size])).toEqual([['ecg-bed-3.png', 9]]);
    const placed = await serverFilesWithConversation(server.baseUrl, server.tokens.alice);
    const mirror = await mirrorState(d.db);
    expect(mirror.files.sort(byId)).toEqual([...placed.values()].filter((p) => p.conversationId === conv.id).map(({ file }) => ({ ...file, conversationId: conv.id })).sort(byId));
  });

  it('a lost answer to the upload still makes one file (its key is the operation\'s)', async () => {
    const { d, conv, opId } = await failedRenameOfDeletedFile('reupload-lost');
    await d.client.reuploadFile(opId, { name: 'ecg-bed-3.png', bytes: bytes('the strip') });
    d.net.inject('lose-response', 'POST', /^\/v1\/files/);
    await d.settle();
    expect((await serverFiles(server.baseUrl, server.tokens.alice, conv.id)).map((f) => f.filename)).toEqual(['ecg-bed-3.png']);
  });

  it('only for a change on a file the server lost: any other failed change is left as it is', async () => {
    const other = otherDevice(server.baseUrl, server.tokens.alice);
    const conv = await other.createConversation({ contact_id: 'reupload-refused' });
    const file = await other.upload(conv.id, 'note.txt', bytes('note'));
    const d = (device = makeDevice(server.baseUrl, server.tokens.alice));
    await d.settle();
    d.net.inject({ status: 422, body: { type: 'invalid_request', code: 'parameter_invalid', message: 'no' } }, 'PUT', /^\/v1\/files\//);
    await d.client.renameFile(file.id, 'note2.txt');
    await d.settle();
    const [failed] = (await readSyncStatus(d.db)).failed;
    expect(await d.client.reuploadFile(failed!.opId, { name: 'note2.txt', bytes: bytes('note') })).toBeNull();
    expect((await d.db.outbox.toArray()).map((op) => op.body.kind)).toEqual(['file.rename']);
  });
});
