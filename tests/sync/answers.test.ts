// @vitest-environment node
// One reading of an answer (lib/sync/core/classify.ts) on every path that meets one, against the
// real server with synthetic answers injected: a plain request (http.ts `call`), a tus PATCH
// (resumable-upload.ts) and the plain tus requests that end a cancelled upload (tus-requests.ts:
// HEAD, DELETE of the upload). Where the three used to disagree, the contract's meaning: a 409 is
// "in progress" only for idempotency_in_progress and upload_in_progress; 401 device_wiped is told
// apart from any other 401 (as a 401 for now, the stop says `wiped`); 408 is retried like a 5xx.
// The table of classify itself is tests/unit/classify.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { pattern } from '../helpers/bytes';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverConversations, serverFiles, type Device } from './harness';

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

const KiB = 1024;
const body = (code: string, message: string) => ({ type: 'invalid_request', code, message });
const wipedAnswer = { status: 401, body: body('device_wiped', 'this device was wiped') };
const seen = (d: Device, method: string, path: RegExp) => d.net.seen.filter((r) => r.method === method && path.test(r.path));

function tusDevice(): Device {
  device = makeDevice(server.baseUrl, server.tokens.alice, { engine: { resumable: resumableUploads, uploadPatchBytes: 64 * KiB } });
  return device;
}

async function conversation(d: Device, contact: string): Promise<string> {
  const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: contact });
  await d.settle();
  return conv.id;
}

/**
 * A tus upload created on the server (its URL kept in the operation), its first PATCH answered
 * 503, then cancelled by the user: the operation is now the upload's termination (HEAD, DELETE).
 */
async function cancelledMidUpload(d: Device, contact: string) {
  const conversationId = await conversation(d, contact);
  const fileId = await d.client.uploadFile({ conversationId }, { name: `${contact}.bin`, type: 'application/octet-stream', bytes: pattern(300 * KiB, 9) });
  d.net.inject({ status: 503, body: { type: 'api_error', code: 'service_unavailable', message: 'busy' } }, 'PATCH', /^\/v1\/uploads\//);
  expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'server' });
  const [op] = await d.db.outbox.toArray();
  expect(op!.tus?.url).toMatch(/\/v1\/uploads\//);
  expect(await d.client.cancelUpload(fileId)).toBe('cancelling');
  d.clock.advance(10 * 60_000);
  return { conversationId, fileId };
}

describe('ending a cancelled upload (tus-requests.ts)', () => {
  it('DELETE of the upload answered 409 upload_in_progress: retried after Retry-After, then ended', async () => {
    const d = tusDevice();
    await cancelledMidUpload(d, 'answers-busy');
    d.net.inject({ status: 409, headers: { 'retry-after': '3' }, body: body('upload_in_progress', 'another writer') }, 'DELETE', /^\/v1\/uploads\//);
    const busy = await d.engine.syncOnce();
    expect(busy.push).toEqual({ kind: 'waiting', until: d.clock.now() + 3000, reason: 'in_progress' });
    expect((await readSyncStatus(d.db)).failed).toEqual([]);
    d.clock.advance(3000);
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    expect(seen(d, 'DELETE', /^\/v1\/uploads\//)).toHaveLength(2);
  });

  it('DELETE of the upload answered 409 idempotency_conflict: a refusal (failed, with its code), not "in progress"', async () => {
    const d = tusDevice();
    await cancelledMidUpload(d, 'answers-conflict');
    d.net.inject({ status: 409, body: body('idempotency_conflict', 'this key was used for another request') }, 'DELETE', /^\/v1\/uploads\//);
    const report = await d.engine.syncOnce();
    expect(report.push.kind).not.toBe('waiting');
    const [op] = await d.db.outbox.toArray();
    expect(op).toMatchObject({ state: 'failed', error: { status: 409, code: 'idempotency_conflict', message: 'this key was used for another request' } });
  });

  it('HEAD of the upload answered 410: gone already, no DELETE of it; the operation is done', async () => {
    const d = tusDevice();
    const { conversationId } = await cancelledMidUpload(d, 'answers-gone');
    d.net.inject({ status: 410, body: body('upload_expired', 'expired') }, 'HEAD', /^\/v1\/uploads\//);
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    expect(seen(d, 'DELETE', /^\/v1\/uploads\//)).toHaveLength(0);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
  });

  it("the completed upload's file answered 410 to its DELETE: gone (classify.ts), done; the upload is still ended", async () => {
    const d = tusDevice();
    await cancelledMidUpload(d, 'answers-file-gone');
    d.net.inject({ status: 200, headers: { 'upload-file-id': 'f_madeelsewhere' } }, 'HEAD', /^\/v1\/uploads\//);
    d.net.inject({ status: 410, body: body('file_gone', 'no longer here') }, 'DELETE', /^\/v1\/files\/f_madeelsewhere$/);
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    expect((await readSyncStatus(d.db)).failed).toEqual([]);
    expect(seen(d, 'DELETE', /^\/v1\/files\/f_madeelsewhere$/)).toHaveLength(1);
    expect(seen(d, 'DELETE', /^\/v1\/uploads\//)).toHaveLength(1);
  });

  it('HEAD of the upload answered 401 device_wiped: sync stops as for any 401, and says wiped', async () => {
    const d = tusDevice();
    await cancelledMidUpload(d, 'answers-wiped-head');
    d.net.inject(wipedAnswer, 'HEAD', /^\/v1\/uploads\//);
    const report = await d.engine.syncOnce();
    expect(report.push).toEqual({ kind: 'unauthenticated', message: 'this device was wiped', wiped: true });
    expect((await readSyncStatus(d.db)).needsSignIn).toBe(true);
    expect((await d.db.outbox.toArray()).map((op) => op.state)).toEqual(['queued']);
  });
});

describe('a tus upload (resumable-upload.ts)', () => {
  it('a PATCH answered 401 device_wiped: sync stops as for any 401, and says wiped; the upload keeps its URL', async () => {
    const d = tusDevice();
    const conversationId = await conversation(d, 'answers-wiped-patch');
    await d.client.uploadFile({ conversationId }, { name: 'w.bin', type: 'application/octet-stream', bytes: pattern(200 * KiB, 4) });
    d.net.inject(wipedAnswer, 'PATCH', /^\/v1\/uploads\//);
    const report = await d.engine.syncOnce();
    expect(report.push).toEqual({ kind: 'unauthenticated', message: 'this device was wiped', wiped: true });
    const [op] = await d.db.outbox.toArray();
    expect(op).toMatchObject({ state: 'queued' });
    expect(op!.tus?.url).toMatch(/\/v1\/uploads\//);
  });
});

describe('a plain request (http.ts call)', () => {
  async function pinned(d: Device, contact: string): Promise<string> {
    const id = await conversation(d, contact);
    await d.client.updateConversation(id, { is_pinned: true });
    return id;
  }

  it('401 device_wiped: sync stops as for any 401, and says wiped; the operation waits as it was', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    device = d;
    await pinned(d, 'answers-wiped-put');
    d.net.inject(wipedAnswer, 'PUT');
    const report = await d.engine.syncOnce();
    expect(report.push).toEqual({ kind: 'unauthenticated', message: 'this device was wiped', wiped: true });
    expect(await d.db.outbox.toArray()).toMatchObject([{ state: 'queued', attempts: 0 }]);
  });

  it('401 unauthenticated: the stop does not say wiped', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    device = d;
    await pinned(d, 'answers-401');
    d.net.inject({ status: 401, body: body('unauthenticated', 'token expired') }, 'PUT');
    expect((await d.engine.syncOnce()).push).toEqual({ kind: 'unauthenticated', message: 'token expired' });
  });

  it('a refusal whose body is JSON outside the contract\'s shape: failed with its code and message, not "HTTP <status>"', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    device = d;
    await pinned(d, 'answers-loose');
    d.net.inject({ status: 422, body: { code: 'rule_changed', message: 'pinning is closed here', request_id: 'r1' } }, 'PUT');
    await d.engine.syncOnce();
    expect(await d.db.outbox.toArray()).toMatchObject([{ state: 'failed', error: { status: 422, code: 'rule_changed', message: 'pinning is closed here' } }]);
  });

  it('408: retried after a backoff like a 5xx (never a dead letter), then lands', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.alice);
    device = d;
    const id = await pinned(d, 'answers-408');
    d.net.inject({ status: 408 }, 'PUT');
    expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'server' });
    expect((await readSyncStatus(d.db)).failed).toEqual([]);
    expect(await d.db.outbox.toArray()).toMatchObject([{ state: 'queued', error: { status: 408, code: 'server' } }]);
    await d.settle();
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === id)?.is_pinned).toBe(true);
  });
});
