// @vitest-environment node
// What an upload costs in requests, and what happens when they fail, against the real server:
// - a file that fits in one request goes with its creation (tus creation-with-upload) and the
//   answer carries the file (Prefer: return=representation): one request, no PATCH, HEAD or GET;
//   a lost answer is asked for again under the same key without the bytes (sent once); a cancel
//   after a lost answer still finds the file it made and deletes it; a server that ignores
//   Idempotency-Key never gets bytes with a creation (a repeat would make a second upload);
// - the POST /v1/files path has no fixed time limit either: a connection that stalls (a proxy that
//   stops forwarding) is abandoned after the stall time and sent again with the same key, and a
//   slow upload that keeps moving is never cut, however long it takes.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OutboxOp } from '../../lib/sync/outbox/lifecycle';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import { pattern } from '../helpers/bytes';
import { startTestServer, type TestServer } from '../helpers/server';
import { TcpGate } from '../helpers/tcp-gate';
import { makeDevice, otherDevice, serverFiles, type Device } from './harness';
import { streamUpload } from './stream-upload';
import { Link } from './tus-link';

const KiB = 1024;
let server: TestServer;
beforeAll(async () => {
  // 127.0.0.1 on any port: the stall test reaches it through a proxy of its own.
  server = await startTestServer({ env: { ALLOWED_HOSTS: '127.0.0.1' } });
});
afterAll(async () => server.stop());

const seen = (d: Device, method: string, path: RegExp) => d.net.seen.filter((r) => r.method === method && path.test(r.path));

async function downloaded(s: TestServer, fileUrl: string): Promise<Uint8Array> {
  const url = new URL(fileUrl);
  const response = await fetch(s.baseUrl + url.pathname + url.search);
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

/** A device uploading through tus (256 KiB per request), behind a Link that counts body bytes. */
function tusDevice(s: TestServer = server) {
  let d!: Device;
  const link = new Link(() => d.net.fetch);
  d = makeDevice(s.baseUrl, s.tokens.alice, { engine: { fetch: link.fetch, resumable: resumableUploads, uploadPatchBytes: 256 * KiB } });
  return { d, link };
}

async function conversation(s: TestServer, d: Device, contact: string): Promise<string> {
  const conv = await otherDevice(s.baseUrl, s.tokens.alice).createConversation({ contact_id: contact });
  await d.settle(); // mirrored, and the server's idempotency learned
  return conv.id;
}

describe('requests per upload (tus)', () => {
  it('a file that fits in one request is one POST: its bytes with the creation, the file in the answer', async () => {
    const { d, link } = tusDevice();
    const conversationId = await conversation(server, d, 'one-request');
    const requests = async () => {
      const before = d.net.seen.length;
      const pushed = await d.engine.flushOnce();
      expect(pushed.kind).toBe('done');
      return d.net.seen.slice(before);
    };
    const named = (sent: Device['net']['seen']) => sent.map((r) => `${r.method} ${r.path.replace(/\/[A-Za-z0-9]{16}$/, '/:id')}`);
    // The first upload asks once whether the server has /v1/uploads; that is remembered.
    await d.client.uploadFile({ conversationId }, { name: 'first.bin', type: 'application/octet-stream', bytes: pattern(10 * KiB, 40) });
    expect(named(await requests())).toEqual(['OPTIONS /v1/uploads', 'POST /v1/uploads']);
    link.bodyBytes = 0;

    const bytes = pattern(200 * KiB, 41);
    const tempId = await d.client.uploadFile({ conversationId }, { name: 'one.bin', type: 'application/octet-stream', bytes });
    const sent = await requests();
    expect(named(sent)).toEqual(['POST /v1/uploads']);
    expect(sent[0]!.headers.Prefer).toBe('return=representation');
    expect(link.bodyBytes).toBe(bytes.length);
    const file = (await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).find((f) => f.filename === 'one.bin');
    expect(file).toBeDefined();
    expect(same(await downloaded(server, file!.file_url), bytes)).toBe(true);
    // The mirror holds the server's file, from the creation's answer.
    expect(await d.db.files.get(tempId)).toBeUndefined();
    const mirrored = await d.db.files.get(file!.id);
    expect(mirrored).toMatchObject({ ...file, syncState: 'synced' });
    d.close();
  });

  it('the creation key is noted by the claim: an upload makes no outbox write of its own before its creation', async () => {
    const { d } = tusDevice();
    const conversationId = await conversation(server, d, 'key-at-claim');
    // The first upload learns that the server has /v1/uploads (remembered): the claim knows it from then on.
    await d.client.uploadFile({ conversationId }, { name: 'learn.bin', type: 'application/octet-stream', bytes: pattern(4 * KiB, 50) });
    await d.settle();
    for (let i = 0; i < 3; i++) await d.client.uploadFile({ conversationId }, { name: `claimed-${i}.bin`, type: 'application/octet-stream', bytes: pattern(20 * KiB, 51 + i) });
    let claimedWithKey = 0;
    const put = d.db.outbox.bulkPut.bind(d.db.outbox);
    const bulkPut = vi.spyOn(d.db.outbox, 'bulkPut').mockImplementation(((rows: OutboxOp[]) => {
      claimedWithKey += rows.filter((op) => op.state === 'inflight' && op.tus?.bytesKey === op.id).length;
      return put(rows);
    }) as never);
    const update = vi.spyOn(d.db.outbox, 'update');
    const pushed = await d.engine.flushOnce();
    expect(pushed.kind).toBe('done');
    // One write per upload (each a wait for the disk) before: the key written just before its creation.
    expect(update).not.toHaveBeenCalled();
    expect(claimedWithKey).toBe(3);
    bulkPut.mockRestore();
    update.mockRestore();
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(4);
    expect(seen(d, 'PATCH', /^\/v1\/uploads\//)).toHaveLength(0);
    const files = (await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).filter((f) => f.filename.startsWith('claimed-'));
    expect(files).toHaveLength(3);
    d.close();
  });

  it('a replay of uploads records their answers without holding their bytes (dropped together once the last is answered), and asks for /v1/uploads once', async () => {
    let d!: Device;
    let answered = 0;
    const fetchCounting = async (...args: Parameters<Device['net']['fetch']>) => {
      const response = await d.net.fetch(...args);
      if ((args[1]?.method ?? 'GET') === 'POST') answered++;
      return response;
    };
    d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { fetch: fetchCounting, resumable: resumableUploads, uploadPatchBytes: 256 * KiB } });
    const conversationId = await conversation(server, d, 'bytes-apart');
    const uploads = 8;
    for (let i = 0; i < uploads; i++) await d.client.uploadFile({ conversationId }, { name: `apart-${i}.bin`, type: 'application/octet-stream', bytes: pattern(8 * KiB, 70 + i) });
    // Every read-write transaction over the queued bytes, with how many uploads were answered then.
    const overBytes: number[] = [];
    const transaction = d.db.transaction.bind(d.db) as (...args: unknown[]) => unknown;
    const spy = vi.spyOn(d.db, 'transaction').mockImplementation(((...args: unknown[]) => {
      const tables = args.slice(1, -1).flat() as Array<{ name: string } | string>;
      if (String(args[0]).startsWith('rw') && tables.some((t) => (typeof t === 'string' ? t : t.name) === 'uploadChunks')) overBytes.push(answered);
      return transaction(...args);
    }) as never);
    const pushed = await d.engine.flushOnce();
    spy.mockRestore();
    expect(pushed.kind).toBe('done');
    // The next uploads' reads of their bytes would wait for each one (one per batch of answers
    // before): the bytes of the answered ones go together once the last is answered.
    expect(overBytes).toEqual([uploads]);
    expect(await d.db.uploadChunks.count()).toBe(0);
    // Asked once per replay for all (the browser's timeline showed one per request slot before, all
    // asked before the first was answered; here the old code asked once too).
    expect(seen(d, 'OPTIONS', /^\/v1\/uploads$/)).toHaveLength(1);
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(uploads);
    expect((await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).filter((f) => f.filename.startsWith('apart-'))).toHaveLength(uploads);
    d.close();
  });

  it('bytes left behind by a replay that recorded its answers and stopped before dropping them go with the next replay; queued ones stay', async () => {
    const { d } = tusDevice();
    const conversationId = await conversation(server, d, 'orphan-bytes');
    // A replay cut between its last recording and the drop leaves bytes whose operation has gone.
    await d.db.transaction('rw', d.db.uploadChunks, () => d.db.uploadChunks.add({ opId: 'answered-before-a-crash', index: 0, bytes: new ArrayBuffer(16) }));
    const queued = pattern(4 * KiB, 80);
    await d.client.uploadFile({ conversationId }, { name: 'still-queued.bin', type: 'application/octet-stream', bytes: queued });
    d.net.inject('offline', 'OPTIONS');
    d.net.inject('offline', 'POST');
    await d.engine.flushOnce();
    expect(await d.db.uploadChunks.where('opId').equals('answered-before-a-crash').count()).toBe(0);
    expect(await d.db.uploadChunks.count()).toBe(1); // the queued upload's, untouched
    d.net.clear();
    await d.settle();
    expect(await d.db.uploadChunks.count()).toBe(0);
    expect((await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).filter((f) => f.filename === 'still-queued.bin')).toHaveLength(1);
    d.close();
  });

  it('a failure to drop the answered uploads\' bytes at the end does not fail the replay (its answers stand): the next replay drops them', async () => {
    const { d } = tusDevice();
    const conversationId = await conversation(server, d, 'drop-fails');
    await d.client.uploadFile({ conversationId }, { name: 'kept-bytes.bin', type: 'application/octet-stream', bytes: pattern(4 * KiB, 90) });
    const transaction = d.db.transaction.bind(d.db) as (...args: unknown[]) => unknown;
    let refused = 0;
    const spy = vi.spyOn(d.db, 'transaction').mockImplementation(((...args: unknown[]) => {
      // The drop: a read-write transaction over the bytes alone. IndexedDB refuses it (a full disk, say).
      const tables = args.slice(1, -1).flat() as Array<{ name: string }>;
      if (String(args[0]) === 'rw' && tables.length === 1 && tables[0]!.name === 'uploadChunks') {
        refused++;
        return Promise.reject(new Error('QuotaExceededError'));
      }
      return transaction(...args);
    }) as never);
    expect((await d.engine.flushOnce()).kind).toBe('done');
    spy.mockRestore();
    expect(refused).toBe(1);
    expect(await d.db.outbox.count()).toBe(0);
    expect(await d.db.uploadChunks.count()).toBe(1);
    await d.engine.flushOnce();
    expect(await d.db.uploadChunks.count()).toBe(0);
    d.close();
  });

  it('a creation never sent after its claim noted the key (the request failed before reaching the server): a new upload without bytes in the creation, then its bytes; one file', async () => {
    const { d, link } = tusDevice();
    const conversationId = await conversation(server, d, 'claimed-unsent');
    await d.client.uploadFile({ conversationId }, { name: 'learn.bin', type: 'application/octet-stream', bytes: pattern(4 * KiB, 60) });
    await d.settle();
    const bytes = pattern(100 * KiB, 61);
    await d.client.uploadFile({ conversationId }, { name: 'unsent.bin', type: 'application/octet-stream', bytes });
    d.net.inject('offline', 'POST', /^\/v1\/uploads$/);
    await d.engine.flushOnce();
    // The key stays noted: whether a creation with bytes went out cannot be told from here.
    expect((await d.db.outbox.toArray())[0]!.tus).toMatchObject({ url: null, bytesKey: expect.any(String) });
    link.bodyBytes = 0;
    await d.settle();
    const files = (await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).filter((f) => f.filename === 'unsent.bin');
    expect(files).toHaveLength(1);
    expect(same(await downloaded(server, files[0]!.file_url), bytes)).toBe(true);
    expect(link.bodyBytes).toBe(bytes.length);
    expect(await d.db.outbox.count()).toBe(0);
    d.close();
  });

  it('a lost answer to a creation with bytes: asked again under the same key without them; one file, each byte sent once', async () => {
    const { d, link } = tusDevice();
    const conversationId = await conversation(server, d, 'lost-creation-bytes');
    const bytes = pattern(150 * KiB, 43);
    await d.client.uploadFile({ conversationId }, { name: 'lost.bin', type: 'application/octet-stream', bytes });
    d.net.inject('lose-response', 'POST', /^\/v1\/uploads$/);
    const first = await d.engine.flushOnce();
    expect(first).toMatchObject({ kind: 'waiting', reason: 'network' });
    expect((await d.db.outbox.toArray())[0]!.tus).toMatchObject({ url: null, bytesKey: expect.any(String) });
    await d.settle();

    const creations = seen(d, 'POST', /^\/v1\/uploads$/);
    expect(creations).toHaveLength(2);
    expect(creations[1]!.headers['Idempotency-Key']).toBe(creations[0]!.headers['Idempotency-Key']);
    expect(link.bodyBytes).toBe(bytes.length); // the second creation carried none
    expect(seen(d, 'PATCH', /^\/v1\/uploads\//)).toHaveLength(0);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conversationId);
    expect(files).toHaveLength(1);
    expect(same(await downloaded(server, files[0]!.file_url), bytes)).toBe(true);
    expect((await d.db.files.get(files[0]!.id))?.syncState).toBe('synced');
    d.close();
  });

  it('cancelled after a lost answer to a creation with bytes: the file it made is found and deleted, the upload ended', async () => {
    const { d } = tusDevice();
    const conversationId = await conversation(server, d, 'cancel-lost-creation');
    const fileId = await d.client.uploadFile({ conversationId }, { name: 'made.bin', type: 'application/octet-stream', bytes: pattern(120 * KiB, 47) });
    d.net.inject('lose-response', 'POST', /^\/v1\/uploads$/);
    await d.engine.flushOnce();
    // The server made the file; the device does not know it (nor the upload's URL).
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(1);
    const key = seen(d, 'POST', /^\/v1\/uploads$/)[0]!.headers['Idempotency-Key'];

    expect(await d.client.cancelUpload(fileId)).toBe('cancelling');
    await d.settle();
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
    // Found by the same creation again (same key), then ended: nothing of it left on the server.
    expect(seen(d, 'POST', /^\/v1\/uploads$/).map((r) => r.headers['Idempotency-Key'])).toEqual([key, key]);
    const uploads = await (server.service.db as any).selectFrom('uploads').select('id').where('filename', '=', 'made.bin').execute();
    expect(uploads).toEqual([]);
    expect(await d.db.outbox.count()).toBe(0);
    expect((await d.db.files.toArray()).filter((f) => f.filename === 'made.bin')).toEqual([]);
    d.close();
  });

  it('a server that ignores Idempotency-Key: a creation never carries bytes (a repeat would be a second upload)', async () => {
    const plain = await startTestServer({ env: { PARLEY_EXTENSIONS: 'me,events,uploads' } });
    try {
      const { d, link } = tusDevice(plain);
      const conversationId = await conversation(plain, d, 'no-keys');
      const bytes = pattern(100 * KiB, 53);
      await d.client.uploadFile({ conversationId }, { name: 'nokeys.bin', type: 'application/octet-stream', bytes });
      await d.settle();
      expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);
      expect(seen(d, 'PATCH', /^\/v1\/uploads\//)).toHaveLength(1);
      expect(link.patches).toBe(1);
      expect(link.bodyBytes).toBe(bytes.length);
      const files = await serverFiles(plain.baseUrl, plain.tokens.alice, conversationId);
      expect(files).toHaveLength(1);
      expect(same(await downloaded(plain, files[0]!.file_url), bytes)).toBe(true);
      d.close();
    } finally {
      await plain.stop();
    }
  });
});

describe('POST /v1/files: a stall timeout, not a fixed one', () => {
  it('a connection that stops forwarding mid-upload is abandoned after the stall time and sent again with its key: one file', { timeout: 30_000 }, async () => {
    const gate = await new TcpGate(server.port).start();
    // No tus here (POST /v1/files); the fixed request limit is far longer than the test may run.
    const d: Device = makeDevice(gate.url, server.tokens.alice, { engine: { upload: streamUpload(() => d.net.fetch), uploadStallMs: 500, requestTimeoutMs: 600_000 } });
    try {
      const conversationId = await conversation(server, d, 'post-stall');
      const bytes = pattern(1024 * KiB, 59);
      await d.client.uploadFile({ conversationId }, { name: 'stalled.bin', type: 'application/octet-stream', bytes });
      gate.stallAfter(64 * KiB); // mid-body
      const first = await d.engine.flushOnce();
      expect(gate.stalls).toBe(1);
      expect(first).toMatchObject({ kind: 'waiting', reason: 'network' });
      const op = (await d.db.outbox.toArray())[0]!;
      expect(op.error?.message).toMatch(/stalled/);
      expect(op.outcomeUnknown).toBe(true);

      await d.settle();
      const posts = seen(d, 'POST', /^\/v1\/files$/);
      expect(posts.length).toBeGreaterThanOrEqual(2);
      expect(new Set(posts.map((p) => p.headers['Idempotency-Key'])).size).toBe(1);
      const files = await serverFiles(server.baseUrl, server.tokens.alice, conversationId);
      expect(files).toHaveLength(1);
      expect(same(await downloaded(server, files[0]!.file_url), bytes)).toBe(true);
    } finally {
      d.close();
      await gate.stop();
    }
  });

  it('a slow upload that keeps moving is not cut, though it lasts longer than the fixed request limit', async () => {
    const requestTimeoutMs = 500;
    // 1 MiB at 16 KiB per 25 ms: ~1.6 s, more than three times the fixed limit; never 1 s without a byte.
    const d: Device = makeDevice(server.baseUrl, server.tokens.alice, {
      engine: { upload: streamUpload(() => d.net.fetch, { chunkBytes: 16 * KiB, delayMs: 25 }), uploadStallMs: 1_000, requestTimeoutMs },
    });
    try {
      const conversationId = await conversation(server, d, 'post-slow');
      const bytes = pattern(1024 * KiB, 61);
      await d.client.uploadFile({ conversationId }, { name: 'slow.bin', type: 'application/octet-stream', bytes });
      const started = Date.now();
      const pushed = await d.engine.flushOnce();
      const took = Date.now() - started;
      expect(pushed.kind).toBe('done');
      expect(took).toBeGreaterThan(requestTimeoutMs); // the premise: longer than the fixed limit
      expect(seen(d, 'POST', /^\/v1\/files$/)).toHaveLength(1);
      const files = await serverFiles(server.baseUrl, server.tokens.alice, conversationId);
      expect(files).toHaveLength(1);
      expect(same(await downloaded(server, files[0]!.file_url), bytes)).toBe(true);
    } finally {
      d.close();
    }
  });
});
