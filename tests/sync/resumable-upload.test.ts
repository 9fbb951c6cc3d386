// @vitest-environment node
// Resumable uploads (tus at /v1/uploads) from the outbox, against the real server: a transfer cut
// again and again arrives byte for byte without resending much; lost creation and completion
// answers still make exactly one file; a new engine on the same IndexedDB (a worker that died)
// resumes from the server's offset; a server without /v1/uploads gets POST /v1/files.
import { IDBFactory } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import type { UploadProgress } from '../../lib/sync/engine/upload-progress';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverFiles, type Device } from './harness';
import { pattern } from '../helpers/bytes';
import { Link } from './tus-link';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.stop());

const KiB = 1024;
const MiB = 1024 * KiB;


async function downloaded(fileUrl: string): Promise<Uint8Array> {
  const url = new URL(fileUrl);
  const response = await fetch(server.baseUrl + url.pathname + url.search);
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}

function deviceWith(link: (d: () => Device) => Link, options: Parameters<typeof makeDevice>[2] = {}) {
  let d!: Device;
  const l = link(() => d);
  d = makeDevice(server.baseUrl, server.tokens.alice, { ...options, engine: { fetch: l.fetch, resumable: resumableUploads, uploadPatchBytes: 256 * KiB, ...options.engine } });
  return { d, link: l };
}

/** Syncs until the outbox is empty, moving the clock past every backoff. */
async function syncUntilEmpty(d: Device, rounds = 60): Promise<number> {
  for (let round = 0; round < rounds; round++) {
    await d.engine.syncOnce();
    if ((await d.db.outbox.count()) === 0) return round + 1;
    d.clock.advance(10 * 60_000);
  }
  throw new Error(`not uploaded: ${JSON.stringify((await d.db.outbox.toArray()).map((o) => ({ state: o.state, error: o.error, tus: o.tus })))}`);
}

const seen = (d: Device, method: string, path: RegExp) => d.net.seen.filter((r) => r.method === method && path.test(r.path));

describe('resumable uploads (tus)', () => {
  it('a transfer cut again and again arrives byte for byte, sending at most 1.2× the file', async () => {
    const { d, link } = deviceWith((d) => new Link(() => d().net.fetch), { engine: { uploadPatchBytes: 512 * KiB } });
    // The connection drops every 600 KiB of traffic: mid-PATCH, wherever that falls.
    link.dropEvery(600 * KiB);
    const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'tus-cuts' });
    await d.settle();
    const size = 3 * MiB + 12_345;
    const bytes = pattern(size, 7);
    const progress: UploadProgress[] = [];
    // Every write of the progress row (setMeta puts it whole).
    const put = d.db.meta.put.bind(d.db.meta);
    d.db.meta.put = ((row: { key: string; value: unknown }) => {
      if (row.key === 'uploadProgress') progress.push(row.value as UploadProgress);
      return put(row);
    }) as typeof d.db.meta.put;
    const fileId = await d.client.uploadFile({ conversationId: conv.id }, { name: 'cut.bin', type: 'application/octet-stream', bytes });
    await syncUntilEmpty(d);

    const cuts = link.drops;
    expect(cuts).toBeGreaterThanOrEqual(4);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(files).toHaveLength(1);
    expect(files[0]!.file_size).toBe(size);
    expect(sameBytes(await downloaded(files[0]!.file_url), bytes)).toBe(true);
    const ratio = link.bodyBytes / size;
    console.log(`[resumable] ${size} bytes, ${cuts} cuts, ${link.bodyBytes} bytes sent: ${ratio.toFixed(3)}× the file`);
    expect(ratio).toBeLessThanOrEqual(1.2);
    // Never a new upload after a cut: one creation, the rest resumed from HEAD.
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);
    expect(seen(d, 'HEAD', /^\/v1\/uploads\//).length).toBeGreaterThanOrEqual(cuts);
    expect(seen(d, 'POST', /^\/v1\/files/)).toHaveLength(0);
    // The mirror has the server's file in place of the temp id.
    expect(await d.db.files.get(fileId)).toBeUndefined();
    expect((await d.db.files.get(files[0]!.id))?.syncState).toBe('synced');
    // Progress after a resume starts at the server's offset and says so.
    expect(progress.some((p) => Object.values(p).some((e) => e.resumed === true && e.sent > 0 && e.total === size))).toBe(true);
    d.close();
  });

  it('a lost creation answer gives the same upload on a repeat: one file', async () => {
    const { d } = deviceWith((d) => new Link(() => d().net.fetch));
    const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'tus-lost-create' });
    await d.settle();
    const bytes = pattern(600 * KiB, 11);
    await d.client.uploadFile({ conversationId: conv.id }, { name: 'lost-create.bin', type: 'application/octet-stream', bytes });
    d.net.inject('lose-response', 'POST', /^\/v1\/uploads$/);
    await syncUntilEmpty(d);
    const creations = seen(d, 'POST', /^\/v1\/uploads$/);
    expect(creations).toHaveLength(2);
    expect(creations[0]!.headers['Idempotency-Key']).toBeTruthy();
    expect(creations[1]!.headers['Idempotency-Key']).toBe(creations[0]!.headers['Idempotency-Key']);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(files).toHaveLength(1);
    expect(sameBytes(await downloaded(files[0]!.file_url), bytes)).toBe(true);
    d.close();
  });

  it('a lost completion answer: the HEAD names the file; one file', async () => {
    const { d, link } = deviceWith((d) => new Link(() => d().net.fetch));
    const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'tus-lost-complete' });
    await d.settle();
    // More than one request's worth (a smaller file goes with its creation): two PATCHes, the second completes the upload.
    const bytes = pattern(300 * KiB, 13);
    await d.client.uploadFile({ conversationId: conv.id }, { name: 'lost-complete.bin', type: 'application/octet-stream', bytes });
    link.beforePatch = (index) => {
      if (index === 1) d.net.inject('lose-response', 'PATCH', /^\/v1\/uploads\//);
    };
    await syncUntilEmpty(d);
    expect(seen(d, 'PATCH', /^\/v1\/uploads\//)).toHaveLength(2); // the last not sent again
    expect(seen(d, 'HEAD', /^\/v1\/uploads\//)).toHaveLength(1);
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(files).toHaveLength(1);
    expect(sameBytes(await downloaded(files[0]!.file_url), bytes)).toBe(true);
    expect((await d.db.files.get(files[0]!.id))?.syncState).toBe('synced');
    d.close();
  });

  it('a worker that dies mid-transfer: a new engine on the same IndexedDB resumes from the server offset', async () => {
    const indexedDB = new IDBFactory();
    const name = 'tus-crash';
    const first = deviceWith((d) => new Link(() => d().net.fetch), { indexedDB, name });
    // The third PATCH never ends: half its bytes arrive, then the worker is gone.
    first.link.cutPatch = (index) => (index === 2 ? 'hold' : undefined);
    const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'tus-crash' });
    await first.d.settle();
    const size = 2 * MiB + 777;
    const bytes = pattern(size, 17);
    await first.d.client.uploadFile({ conversationId: conv.id }, { name: 'crash.bin', type: 'application/octet-stream', bytes });
    void first.d.engine.syncOnce().catch(() => {}); // never settles while its PATCH is held
    await expect.poll(() => first.link.held.length, { timeout: 10_000 }).toBe(1);
    const url = (await first.d.db.outbox.toArray())[0]!.tus!.url!;
    expect(url).toMatch(/\/v1\/uploads\/\w+$/);

    // The new worker: same database, new engine. The old request is still on the wire.
    const second = deviceWith((d) => new Link(() => d().net.fetch), { indexedDB, name });
    await syncUntilEmpty(second.d);
    first.link.held.forEach((cut) => cut());

    expect(seen(second.d, 'POST', /^\/v1\/uploads$/)).toHaveLength(0); // resumed, not made again
    expect(seen(second.d, 'HEAD', /^\/v1\/uploads\//).length).toBeGreaterThanOrEqual(1);
    const patches = seen(second.d, 'PATCH', /^\/v1\/uploads\//);
    const resumedAt = Math.max(...patches.map((p) => Number(p.headers['Upload-Offset'])));
    expect(Number(patches[0]!.headers['Upload-Offset'])).toBeGreaterThanOrEqual(2 * 256 * KiB); // the two PATCHes that arrived
    expect(resumedAt).toBeGreaterThan(0);
    expect(second.link.bodyBytes).toBeLessThanOrEqual(size - 2 * 256 * KiB);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(files).toHaveLength(1);
    expect(sameBytes(await downloaded(files[0]!.file_url), bytes)).toBe(true);
    second.d.close();
    first.d.close();
  });

  it('a transfer that stalls is abandoned (no fixed limit, no progress for the stall time) and resumes from HEAD', async () => {
    // No fixed request limit applies to it (requestTimeoutMs would be far longer); the stall time is short here.
    const { d, link } = deviceWith((d) => new Link(() => d().net.fetch), { engine: { uploadStallMs: 500, requestTimeoutMs: 600_000 } });
    link.cutPatch = (index) => (index === 1 ? 'hold' : undefined); // the second PATCH hangs halfway, forever
    const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'tus-stall' });
    await d.settle();
    const bytes = pattern(900 * KiB, 29);
    await d.client.uploadFile({ conversationId: conv.id }, { name: 'stall.bin', type: 'application/octet-stream', bytes });
    const first = await d.engine.syncOnce();
    expect(first.push).toMatchObject({ kind: 'waiting', reason: 'network' });
    expect((await d.db.outbox.toArray())[0]!.error?.message).toMatch(/stalled/);
    await syncUntilEmpty(d);
    link.held.forEach((cut) => cut());
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);
    const resumed = seen(d, 'PATCH', /^\/v1\/uploads\//).slice(2);
    expect(Number(resumed[0]!.headers['Upload-Offset'])).toBeGreaterThanOrEqual(256 * KiB);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(files).toHaveLength(1);
    expect(sameBytes(await downloaded(files[0]!.file_url), bytes)).toBe(true);
    d.close();
  });

  it('an upload the server no longer knows (expired) starts again from the queued bytes under a new key', async () => {
    const { d, link } = deviceWith((d) => new Link(() => d().net.fetch));
    link.cutPatch = (index, size) => (index === 0 ? Math.floor(size / 2) : undefined);
    const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'tus-expired' });
    await d.settle();
    const bytes = pattern(700 * KiB, 19);
    await d.client.uploadFile({ conversationId: conv.id }, { name: 'expired.bin', type: 'application/octet-stream', bytes });
    await d.engine.syncOnce(); // cut: the upload waits, half a PATCH on the server
    const op = (await d.db.outbox.toArray())[0]!;
    expect(op.tus?.url).toBeTruthy();
    // Once the server has recorded what arrived before the cut, its expiry pass removes the upload.
    const rows = () => (server.service.db as any).selectFrom('uploads').selectAll().where('id', '=', op.tus!.url!.split('/').pop()).execute();
    await expect.poll(async () => (await rows())[0]?.writer ?? 'recorded', { timeout: 10_000 }).toBe('recorded');
    expect((await rows())[0].upload_offset).toBeGreaterThan(0);
    await (server.service.db as any).updateTable('uploads').set({ expires_at: 1 }).execute();
    await server.service.uploads.expire();
    d.clock.advance(10 * 60_000);
    await syncUntilEmpty(d);
    const creations = seen(d, 'POST', /^\/v1\/uploads$/);
    expect(creations).toHaveLength(2);
    expect(creations[1]!.headers['Idempotency-Key']).not.toBe(creations[0]!.headers['Idempotency-Key']);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(files).toHaveLength(1);
    expect(sameBytes(await downloaded(files[0]!.file_url), bytes)).toBe(true);
    d.close();
  });

  it('a server without /v1/uploads (404 on OPTIONS): POST /v1/files, as before', async () => {
    // The contract alone: no /v1/uploads route at all.
    const plain = (d: () => Device) =>
      new Link(() => async (input, init) => {
        if (new URL(input).pathname.startsWith('/v1/uploads')) {
          d().net.seen.push({ method: init?.method ?? 'GET', path: new URL(input).pathname, headers: {}, body: null, fault: null });
          return new Response(JSON.stringify({ type: 'invalid_request', code: 'route_not_found', message: 'No such route' }), {
            status: 404,
            headers: { 'content-type': 'application/json' },
          });
        }
        return d().net.fetch(input, init);
      });
    const { d } = deviceWith(plain);
    const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'tus-plain' });
    await d.settle();
    const bytes = pattern(300 * KiB, 23);
    await d.client.uploadFile({ conversationId: conv.id }, { name: 'plain.bin', type: 'application/octet-stream', bytes });
    await syncUntilEmpty(d);
    expect(seen(d, 'OPTIONS', /^\/v1\/uploads$/)).toHaveLength(1);
    expect(seen(d, 'POST', /^\/v1\/files$/)).toHaveLength(1);
    expect(seen(d, 'PATCH', /^\/v1\/uploads/)).toHaveLength(0);
    const files = await serverFiles(server.baseUrl, server.tokens.alice, conv.id);
    expect(files).toHaveLength(1);
    expect(sameBytes(await downloaded(files[0]!.file_url), bytes)).toBe(true);
    // Remembered: the next upload does not ask again.
    await d.client.uploadFile({ conversationId: conv.id }, { name: 'plain2.bin', type: 'application/octet-stream', bytes: pattern(10, 1) });
    await syncUntilEmpty(d);
    expect(seen(d, 'OPTIONS', /^\/v1\/uploads$/)).toHaveLength(1);
    d.close();
  });
});
