// @vitest-environment node
// A refusal answers only the request it refuses. When an earlier attempt's answer was lost, that
// attempt may have acted: the operation stays "outcome unknown" even as a dead letter, so deleting
// what it created is a real delete (not a cancel that leaves the server's copy behind), and the
// user's Retry keeps the key, so the server replays the first success instead of acting twice.
// (Found by the property test, seed 297273907.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, serverFiles } from './harness';

const REFUSAL = { status: 400, body: { type: 'invalid_request', code: 'parameter_invalid', message: 'injected refusal' } };

describe('an upload refused after its first answer was lost', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.stop());

  it('deleting the file deletes it on the server; nothing is uploaded twice', async () => {
    const token = server.tokens.bob;
    const d = makeDevice(server.baseUrl, token);
    const conversation = await d.client.createConversation({ contact_id: 'refused-retry' });
    await d.settle();
    const conversationId = await d.client.resolveId(conversation);

    const file = await d.client.uploadFile({ conversationId }, { name: 'scan.pdf', type: 'application/pdf', bytes: new Uint8Array(5) });
    d.net.inject('lose-response', 'POST', /^\/v1\/files/);
    await d.engine.syncOnce(); // stored on the server; the answer lost
    expect(await serverFiles(server.baseUrl, token, conversationId)).toHaveLength(1);
    d.clock.advance(600_000);
    d.net.inject(REFUSAL, 'POST', /^\/v1\/files/);
    await d.engine.syncOnce(); // the retry is refused: a dead letter, yet the first attempt acted
    expect((await readSyncStatus(d.db)).failed).toHaveLength(1);

    await d.client.deleteFile(file); // the user gives up on the file
    const upload = (await readSyncStatus(d.db)).failed[0]!;
    await d.client.retryOperation(upload.opId); // the delete waits for it: Retry lets both go
    await d.settle();

    expect(await serverFiles(server.baseUrl, token, conversationId)).toEqual([]);
    expect(await d.db.files.count()).toBe(0);
    expect(await d.db.outbox.count()).toBe(0);
    d.close();
  });
});
