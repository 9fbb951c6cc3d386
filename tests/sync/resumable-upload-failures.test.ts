// @vitest-environment node
// A resumable (tus) upload from the outbox that the server refuses for good, or whose token stops
// working, mid-upload, against the real server:
// - its conversation is deleted on the server between two PATCHes (which ends the upload there):
//   the upload becomes a failed operation (dead letter) with the server's 404, exactly as the same
//   upload sent as POST /v1/files becomes; no byte is sent twice, no file is made;
// - its token is revoked between two PATCHes: the 401 stops sync as any 401 does (sign in again;
//   nothing failed, nothing dropped); with a new token of the same user the upload resumes from
//   the server's offset (HEAD), never from zero, and the file arrives once, byte for byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, revokeToken } from '../../lib/api/domain/tokens';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { pattern } from '../helpers/bytes';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverFiles, type Device } from './harness';
import { Link } from './tus-link';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.stop());

const KiB = 1024;
const PATCH_BYTES = 256 * KiB;

function deviceWith(token: string, options: { tus: boolean }) {
  let d!: Device;
  const link = new Link(() => d.net.fetch);
  d = makeDevice(server.baseUrl, token, {
    engine: { fetch: link.fetch, uploadPatchBytes: PATCH_BYTES, ...(options.tus ? { resumable: resumableUploads } : {}) },
  });
  return { d, link };
}

const seen = (d: Device, method: string, path: RegExp, from = 0) => d.net.seen.slice(from).filter((r) => r.method === method && path.test(r.path));

async function downloaded(fileUrl: string): Promise<Buffer> {
  const url = new URL(fileUrl);
  const response = await fetch(server.baseUrl + url.pathname + url.search);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** Syncs until nothing is left to send (failed operations wait for the user), past every backoff. */
async function syncUntilQuiet(d: Device, rounds = 30): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    await d.engine.syncOnce();
    if ((await readSyncStatus(d.db)).pendingCount === 0) return;
    d.clock.advance(10 * 60_000);
  }
  throw new Error(`still pending: ${JSON.stringify((await d.db.outbox.toArray()).map((o) => ({ state: o.state, error: o.error, tus: o.tus })))}`);
}

describe('a resumable upload the server refuses for good', () => {
  /**
   * The same scenario through tus and as POST /v1/files: the conversation is deleted on the
   * server (by another device) once the upload is under way — for tus after its first PATCH. What
   * the device is left with.
   */
  async function conversationDeletedMidUpload(tus: boolean, contact: string) {
    const { token } = await createToken(server.service.db, `gone-${contact}`, 'phone');
    const { d, link } = deviceWith(token, { tus });
    const other = otherDevice(server.baseUrl, token);
    const conversation = await other.createConversation({ contact_id: contact });
    await d.settle();
    const deleteIt = async () => expect((await other.send('DELETE', `/v1/conversations/${conversation.id}`)).status).toBe(204);
    if (tus) link.beforePatch = (index) => (index === 1 ? deleteIt() : undefined);
    else d.net.inject({ before: deleteIt }, 'POST', /^\/v1\/files/);
    const size = 4 * PATCH_BYTES + 321;
    const tempId = await d.client.uploadFile({ conversationId: conversation.id }, { name: 'gone.bin', type: 'application/octet-stream', bytes: pattern(size, 37) });
    await syncUntilQuiet(d);
    return { d, link, size, tempId, token, conversation };
  }

  it('its conversation deleted mid-upload: a failed operation with the 404, as the same upload by POST gets; no byte sent twice', async () => {
    const plain = await conversationDeletedMidUpload(false, 'tus-gone-plain');
    const resumable = await conversationDeletedMidUpload(true, 'tus-gone-tus');
    const { d, link, tempId, token } = resumable;

    // Through tus: the upload ended with its conversation (its bytes removed on the server), so the
    // PATCH after the deletion is 404; the client begins a new upload, whose creation is refused
    // before any byte (404, conversation_id), which is final. No byte went twice.
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(2);
    const offsets = seen(d, 'PATCH', /^\/v1\/uploads\//).map((r) => Number(r.headers['Upload-Offset']));
    expect(offsets).toEqual([0, PATCH_BYTES]);
    expect(link.bodyBytes).toBe(2 * PATCH_BYTES);
    expect(seen(d, 'POST', /^\/v1\/files/)).toHaveLength(0);
    expect(await serverFiles(server.baseUrl, token)).toEqual([]);

    // The dead letter: the operation failed with the server's answer, as the POST's did; it stays
    // (Retry / Discard are the user's), and nothing else is waiting.
    const failed = (await readSyncStatus(d.db)).failed;
    const plainFailed = (await readSyncStatus(plain.d.db)).failed;
    expect(plainFailed).toEqual([expect.objectContaining({ kind: 'file.upload', blocked: false, error: expect.objectContaining({ status: 404, code: 'resource_missing' }) })]);
    expect(failed).toEqual([expect.objectContaining({ kind: 'file.upload', entityId: tempId, blocked: false, error: expect.objectContaining({ status: 404, code: 'resource_missing' }) })]);
    expect(failed[0]!.error).toEqual({ ...plainFailed[0]!.error });
    expect((await readSyncStatus(d.db)).pendingCount).toBe(0);

    // Settled: syncing again sends nothing of the upload.
    const before = d.net.seen.length;
    d.clock.advance(60 * 60_000);
    await d.engine.syncOnce();
    expect(seen(d, 'PATCH', /^\/v1\/uploads\//, before)).toEqual([]);
    expect(seen(d, 'POST', /^\/v1\/(uploads|files)/, before)).toEqual([]);
    plain.d.close();
    d.close();
  });
});

describe('a token revoked mid-upload', () => {
  it('stops sync as any 401 does, loses nothing; signed in again (same user), it resumes from the server offset', async () => {
    const user = 'tus-revoked-user';
    const { token: first } = await createToken(server.service.db, user, 'phone');
    const { d, link } = deviceWith(first, { tus: true });
    const conversation = await otherDevice(server.baseUrl, first).createConversation({ contact_id: 'tus-revoked' });
    await d.settle();
    // Revoked just before the second PATCH leaves; the server's cache of tokens is re-read at
    // once (as a live stream's recheck does) rather than within its 10 s.
    link.beforePatch = async (index) => {
      if (index !== 1) return;
      expect(await revokeToken(server.service.db, first)).toBe(1);
      await (server.service as unknown as { auth: { recheck(tokens: string[]): Promise<unknown> } }).auth.recheck([first]);
    };
    const size = 4 * PATCH_BYTES + 4321;
    const bytes = pattern(size, 41);
    await d.client.uploadFile({ conversationId: conversation.id }, { name: 'revoked.bin', type: 'application/octet-stream', bytes });

    const report = await d.engine.syncOnce();
    expect(report.push.kind).toBe('unauthenticated');
    expect(await readSyncStatus(d.db)).toMatchObject({ needsSignIn: true, pendingCount: 1, failed: [] });
    const [op] = await d.db.outbox.toArray();
    expect(op!.state).toBe('queued');
    expect(op!.tus?.url).toMatch(/\/v1\/uploads\/\w+$/); // kept: the upload is resumed, never made again
    expect(await d.db.uploadChunks.where('opId').equals(op!.id).count()).toBe(op!.body.kind === 'file.upload' ? op!.body.chunkCount : -1);
    // Paused: nothing is sent until the user signs in again.
    const paused = d.net.seen.length;
    d.clock.advance(10 * 60_000);
    expect((await d.engine.syncOnce()).push.kind).toBe('unauthenticated');
    expect(d.net.seen.length).toBe(paused);

    // A new token of the same user: the upload goes on where the server has it.
    const { token: second } = await createToken(server.service.db, user, 'phone, again');
    const uploadId = op!.tus!.url!.split('/').pop()!;
    const head = await fetch(`${server.baseUrl}/v1/uploads/${uploadId}`, { method: 'HEAD', headers: { authorization: `Bearer ${second}`, 'tus-resumable': '1.0.0' } });
    expect(head.status).toBe(200);
    const serverOffset = Number(head.headers.get('upload-offset'));
    expect(serverOffset).toBe(PATCH_BYTES); // the first PATCH; the refused one stored nothing
    const sentBefore = link.bodyBytes;
    d.setToken(second);
    await d.engine.signedIn();
    await d.settle();

    const after = d.net.seen.slice(paused);
    expect(after.filter((r) => r.method === 'POST' && /^\/v1\/(uploads|files)/.test(r.path))).toEqual([]); // not made again
    const uploadRequests = after.filter((r) => r.path.startsWith('/v1/uploads/'));
    expect(uploadRequests[0]!.method).toBe('HEAD');
    const resumedAt = uploadRequests.filter((r) => r.method === 'PATCH').map((r) => Number(r.headers['Upload-Offset']));
    expect(resumedAt[0]).toBe(serverOffset);
    expect(Math.min(...resumedAt)).toBe(serverOffset);
    expect(link.bodyBytes - sentBefore).toBe(size - serverOffset); // each remaining byte once
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);

    const files = await serverFiles(server.baseUrl, second, conversation.id);
    expect(files).toHaveLength(1);
    expect((await downloaded(files[0]!.file_url)).equals(Buffer.from(bytes))).toBe(true);
    expect(await readSyncStatus(d.db)).toMatchObject({ needsSignIn: false, pendingCount: 0, failed: [] });
    d.close();
  });
});
