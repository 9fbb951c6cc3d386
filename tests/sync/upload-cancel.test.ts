// @vitest-environment node
// Cancelling an upload from its file's row (client.cancelUpload), against the real server: a
// queued one never reaches the server; a running tus upload is aborted and terminated (DELETE of
// the upload; the server keeps none of its bytes); one that completed — before the cancel, or
// racing it — has its file deleted; whatever waited on it (a pin of its message) goes with it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FetchLike } from '../../lib/sync/core/http';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverConversations, serverFiles, type Device } from './harness';
import { pattern } from '../helpers/bytes';

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


/**
 * Between the engine and the server: when `holdPatches` is set, a PATCH sends half of its body and
 * then hangs (a transfer in progress) until its request is aborted.
 */
class HoldingLink {
  holdPatches = false;
  held = 0;
  private heldWaiters: Array<() => void> = [];
  constructor(private readonly inner: () => FetchLike) {}

  /** Resolves once a PATCH is on the wire, half sent. */
  whenHeld(): Promise<void> {
    if (this.held > 0) return Promise.resolve();
    return new Promise((resolve) => this.heldWaiters.push(resolve));
  }

  readonly fetch: FetchLike = async (input, init) => {
    const body = init?.body;
    if (!this.holdPatches || init?.method !== 'PATCH' || !(body instanceof Blob)) return this.inner()(input, init);
    const bytes = new Uint8Array(await body.arrayBuffer());
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(bytes.slice(0, Math.floor(bytes.length / 2)));
        this.held++;
        for (const wake of this.heldWaiters.splice(0)) wake();
        // Never more: the request ends only when it is aborted.
      },
    });
    return this.inner()(input, { ...init, body: stream, duplex: 'half' } as RequestInit);
  };
}

function tusDevice(): { d: Device; link: HoldingLink } {
  let d!: Device;
  const link = new HoldingLink(() => d.net.fetch);
  d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { fetch: link.fetch, resumable: resumableUploads, uploadPatchBytes: 256 * KiB } });
  device = d;
  return { d, link };
}

const seen = (d: Device, method: string, path: RegExp) => d.net.seen.filter((r) => r.method === method && path.test(r.path));
const serverDb = () => server.service.db as any;
const uploadsOnServer = async () => (await serverDb().selectFrom('uploads').selectAll().execute()) as Array<{ id: string }>;
const uploadChunksOnServer = async () => (await serverDb().selectFrom('upload_chunks').selectAll().execute()) as unknown[];

/** Polls a condition the server reaches by itself (its cleanup), up to a bound; true once it holds. */
async function eventually(check: () => Promise<boolean>, withinMs = 5_000): Promise<boolean> {
  const until = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function conversation(d: Device, contact: string): Promise<string> {
  const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: contact });
  await d.settle();
  return conv.id;
}

describe('cancelling an upload', () => {
  it('queued: its bytes, its operation and a pin of its message go at once; nothing ever reaches the server', async () => {
    const { d } = tusDevice();
    const conversationId = await conversation(d, 'cancel-queued');
    const fileId = await d.client.uploadFile({ conversationId }, { name: 'never.bin', type: 'application/octet-stream', bytes: pattern(300 * KiB, 1) });
    const message = (await d.db.files.get(fileId))!.message_id;
    await d.client.updateConversation(conversationId, { pinned_message_id: message });
    await d.client.renameFile(fileId, 'renamed.bin');

    expect(await d.client.cancelUpload(fileId)).toBe('dropped');
    expect(await d.db.files.get(fileId)).toBeUndefined();
    expect(await d.db.outbox.count()).toBe(0);
    expect(await d.db.uploadChunks.count()).toBe(0);
    expect((await d.db.conversations.get(conversationId))?.pinned_message_id).toBeNull();

    await d.settle();
    expect(seen(d, 'POST', /^\/v1\/uploads/)).toHaveLength(0);
    expect(seen(d, 'PATCH', /^\/v1\/uploads/)).toHaveLength(0);
    expect(seen(d, 'POST', /^\/v1\/files/)).toHaveLength(0);
    expect(seen(d, 'PUT', /^\/v1\/conversations/)).toHaveLength(0);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
  });

  it('running through tus: the transfer is aborted, the upload terminated (DELETE), no byte of it left on the server; a queued pin of its message is dropped', async () => {
    const { d, link } = tusDevice();
    const conversationId = await conversation(d, 'cancel-running');
    const storedBefore = await server.blobs.stored();
    const uploadsBefore = (await uploadsOnServer()).map((u) => u.id);
    const fileId = await d.client.uploadFile({ conversationId }, { name: 'running.bin', type: 'application/octet-stream', bytes: pattern(900 * KiB, 2) });
    const message = (await d.db.files.get(fileId))!.message_id;

    link.holdPatches = true;
    const syncing = d.engine.syncOnce();
    await link.whenHeld();
    // A pin of its message, queued while it runs: it waits on the upload, so it goes with it.
    await d.client.updateConversation(conversationId, { pinned_message_id: message });
    const created = seen(d, 'POST', /^\/v1\/uploads$/);
    expect(created).toHaveLength(1);

    expect(await d.client.cancelUpload(fileId)).toBe('cancelling');
    // At once, in one transaction: the row, the queued bytes and the pin are gone.
    expect(await d.db.files.get(fileId)).toBeUndefined();
    expect(await d.db.uploadChunks.count()).toBe(0);
    expect((await d.db.outbox.toArray()).map((op) => op.body.kind)).toEqual(['file.delete']);
    expect((await d.db.conversations.get(conversationId))?.pinned_message_id).toBeNull();

    await syncing; // the held PATCH is aborted by the worker, which then ends the upload
    link.holdPatches = false;
    await d.settle();

    expect(await d.db.outbox.count()).toBe(0);
    const deletes = seen(d, 'DELETE', /^\/v1\/uploads\//);
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.headers['Tus-Resumable']).toBe('1.0.0');
    // Nothing of it on the server: no upload record, no chunk, no blob, no file, no pin.
    expect((await uploadsOnServer()).map((u) => u.id)).toEqual(uploadsBefore);
    expect(await uploadChunksOnServer()).toHaveLength(0);
    // The aborted PATCH's partial chunk: the server drops it when it notices the dead request,
    // which can be a few milliseconds after the DELETE was answered (the server's own cleanup).
    expect(await eventually(async () => (await server.blobs.unfinished()).length === 0 && (await server.blobs.stored()).length === storedBefore.length)).toBe(true);
    expect(await server.blobs.unfinished()).toEqual([]);
    expect(await server.blobs.stored()).toEqual(storedBefore);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
    expect(seen(d, 'PUT', /^\/v1\/conversations/)).toHaveLength(0);
    expect((await serverConversations(server.baseUrl, server.tokens.alice)).find((c) => c.id === conversationId)?.pinned_message_id).toBeNull();
    // Never resumed after the cancel.
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);
  });

  it('completed already: cancel is a delete of the file it made', async () => {
    const { d } = tusDevice();
    const conversationId = await conversation(d, 'cancel-completed');
    const fileId = await d.client.uploadFile({ conversationId }, { name: 'done.bin', type: 'application/octet-stream', bytes: pattern(100 * KiB, 3) });
    await d.settle();
    const [file] = await serverFiles(server.baseUrl, server.tokens.alice, conversationId);
    expect(file).toBeDefined();

    // The row's temp id still works: it follows the alias to the server's file.
    expect(await d.client.cancelUpload(fileId)).toBe('deleted');
    expect(await d.db.files.get(file!.id)).toBeUndefined();
    await d.settle();
    expect(seen(d, 'DELETE', new RegExp(`^/v1/files/${file!.id}$`))).toHaveLength(1);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
  });

  it('a cancel that races the completion: the file the upload made is deleted, nothing of it left', async () => {
    const { d } = tusDevice();
    const conversationId = await conversation(d, 'cancel-race');
    const fileId = await d.client.uploadFile({ conversationId }, { name: 'race.bin', type: 'application/octet-stream', bytes: pattern(100 * KiB, 4) });
    const uploadsBefore = (await uploadsOnServer()).map((u) => u.id);
    // The user cancels just as the creation leaves with the whole file (it fits in one request);
    // it arrives and completes the upload.
    let outcome: string | null = null;
    d.net.inject({ before: async () => void (outcome = await d.client.cancelUpload(fileId)) }, 'POST', /^\/v1\/uploads$/);
    await d.settle();

    expect(outcome).toBe('cancelling');
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);
    expect(seen(d, 'PATCH', /^\/v1\/uploads\//)).toHaveLength(0);
    expect(await d.db.outbox.count()).toBe(0);
    expect(await d.db.files.count()).toBe(0);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
    expect((await uploadsOnServer()).map((u) => u.id)).toEqual(uploadsBefore);
  });

  // The race above, made certain: the running transfer looks for the cancel (every 2 ms here)
  // many times while its creation is out. Aborting that creation would lose the answer that names
  // the upload (and the file it made), so the cancellation would have to create it again to find it
  // (a second POST /v1/uploads), or, without the bytes, leave it on the server.
  it.each([
    ['with the whole file (it fits in one request)', 100 * KiB],
    ['without bytes (PATCHes would follow)', 900 * KiB],
  ])('a cancel seen while the creation is out, %s: the creation is not aborted; its answer names the upload, which is ended; one creation', async (_, size) => {
    let d!: Device;
    let cancelWithCreation: (() => Promise<void>) | null = null;
    let lookedAfterCancel: (() => void) | null = null;
    let aborted = false;
    const link: FetchLike = async (input, init) => {
      if (cancelWithCreation && init?.method === 'POST' && new URL(input).pathname === '/v1/uploads') {
        const cancel = cancelWithCreation;
        cancelWithCreation = null;
        await cancel();
        // Held until its signal is aborted (as the watcher did) or the watcher has looked at the
        // cancelled row a few times: a creation it would abort is aborted by then.
        await new Promise<void>((resolve) => {
          init.signal?.addEventListener('abort', () => resolve());
          lookedAfterCancel = resolve;
        });
        aborted = init.signal?.aborted === true;
      }
      return d.net.fetch(input, init);
    };
    d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { fetch: link, resumable: resumableUploads, uploadPatchBytes: 256 * KiB, uploadCancelPollMs: 2 } });
    device = d;
    const conversationId = await conversation(d, `cancel-creation-${size}`);
    const fileId = await d.client.uploadFile({ conversationId }, { name: 'creation.bin', type: 'application/octet-stream', bytes: pattern(size, 6) });
    const uploadsBefore = (await uploadsOnServer()).map((u) => u.id);
    // Reads of the cancelled row (the watcher's look for a cancel).
    let looks = 0;
    d.db.outbox.hook('reading', (row) => {
      if (row.cancelledUpload && ++looks >= 5) lookedAfterCancel?.();
      return row;
    });
    let outcome: string | null = null;
    cancelWithCreation = async () => void (outcome = await d.client.cancelUpload(fileId));
    await d.settle();

    expect(outcome).toBe('cancelling');
    expect(seen(d, 'POST', /^\/v1\/uploads$/)).toHaveLength(1);
    expect(seen(d, 'PATCH', /^\/v1\/uploads\//)).toHaveLength(0);
    expect(seen(d, 'DELETE', /^\/v1\/uploads\//)).toHaveLength(1);
    expect(await d.db.outbox.count()).toBe(0);
    expect(await d.db.files.count()).toBe(0);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
    expect((await uploadsOnServer()).map((u) => u.id)).toEqual(uploadsBefore);
    expect(aborted).toBe(false);
  });

  it('a POST /v1/files upload (no tus) cancelled while its request is out: the answer is not recorded; the file it made is deleted', async () => {
    device = makeDevice(server.baseUrl, server.tokens.alice); // no resumable uploads: POST /v1/files
    const d = device;
    const conversationId = await conversation(d, 'cancel-post');
    const fileId = await d.client.uploadFile({ conversationId }, { name: 'posted.bin', type: 'application/octet-stream', bytes: pattern(50 * KiB, 5) });
    let outcome: string | null = null;
    d.net.inject({ before: async () => void (outcome = await d.client.cancelUpload(fileId)) }, 'POST', /^\/v1\/files/);
    await d.settle();

    expect(outcome).toBe('cancelling');
    expect(seen(d, 'POST', /^\/v1\/files/)).toHaveLength(1);
    expect(seen(d, 'DELETE', /^\/v1\/files\//)).toHaveLength(1);
    expect(await serverFiles(server.baseUrl, server.tokens.alice, conversationId)).toHaveLength(0);
    expect(await d.db.outbox.count()).toBe(0);
    expect(await d.db.files.count()).toBe(0);
    expect(await d.db.idAliases.get(fileId)).toBeUndefined();
  });
});
