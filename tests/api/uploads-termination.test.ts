// tus termination (DELETE /v1/uploads/:id) of an upload whose PATCH is still receiving bytes: the
// PATCH's body is ended, its chunk can no longer be recorded and its blob is removed — and the
// 204 waits for that, so that once it is answered no byte of the upload is left in the blob store
// (disk, or the bucket in the s3 project). Its bytes are held in the store, durable but not yet
// recorded, for as long as the test says: a DELETE that answered meanwhile would leave them there.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../lib/config';
import type { BlobStore, BlobWrite } from '../../lib/api/storage/blob-store';
import { DiskBlobStore } from '../../lib/api/storage/disk-blob-store';
import { S3BlobStore } from '../../lib/api/storage/s3-blob-store';
import { client } from '../helpers/api';
import type { TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';
import type { TwoInstances } from '../helpers/two-instances';

const OFFSET_STREAM = 'application/offset+octet-stream';
const TUS = { 'tus-resumable': '1.0.0' };
const viaProxy = process.env.PARLEY_TEST_VIA_PROXY === '1';
const twoInstances = process.env.PARLEY_TEST_TWO_INSTANCES === '1';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The server's own store (disk, or S3 when configured), with a hold: while `holding`, a write's
 * `finish()` makes the bytes durable and readable under their key, then waits for `release` —
 * between the store and the row that would record them, where an aborted PATCH's chunk is.
 */
class HoldingStore implements BlobStore {
  holding = false;
  /** The held write has received its first bytes. */
  receiving = deferred();
  /** The held write is durable and waiting. */
  held = deferred();
  release = deferred();

  constructor(readonly inner: BlobStore) {}

  begin(): BlobWrite {
    const write = this.inner.begin();
    if (!this.holding) return write;
    const sink = write.sink;
    const writeBytes = sink.write.bind(sink) as (...args: unknown[]) => boolean;
    sink.write = ((...args: unknown[]) => {
      this.receiving.resolve();
      return writeBytes(...args);
    }) as typeof sink.write;
    return {
      key: write.key,
      sink,
      abort: () => write.abort(),
      finish: async () => {
        await write.finish();
        this.held.resolve();
        await this.release.promise;
      },
    };
  }
  open: BlobStore['open'] = (key, range) => this.inner.open(key, range);
  remove: BlobStore['remove'] = (key) => this.inner.remove(key);
  list: BlobStore['list'] = () => this.inner.list();
  removeUnfinished: BlobStore['removeUnfinished'] = (olderThanMs) => this.inner.removeUnfinished(olderThanMs);
  check: BlobStore['check'] = () => this.inner.check();
  close(): void {
    if (this.inner instanceof S3BlobStore) this.inner.close();
  }
}

function storeFor(dataDir: string, config: Config): BlobStore {
  return config.s3 ? S3BlobStore.fromConfig(config.s3, { maxUploadBytes: config.maxUploadBytes }) : new DiskBlobStore(dataDir);
}

// Through the proxy the chunks are staged in the proxy's own store, not the upstream's (the same
// TusUploads code; this file holds the server's store).
describe.skipIf(viaProxy)('terminating an upload while a PATCH is receiving its bytes', () => {
  let s: TestServer;
  let store: HoldingStore;
  /** Where both requests go: with two instances, one of them (the wait is within one process). */
  let baseUrl: string;

  beforeAll(async () => {
    s = await startTarget({ store: (dataDir, config) => (store = new HoldingStore(storeFor(dataDir, config))) });
    baseUrl = twoInstances ? (s as TwoInstances).instances[0].baseUrl : s.baseUrl;
  });
  afterAll(async () => {
    await s?.stop();
    store?.close();
  });

  it('answers 204 only once the aborted chunk is removed: nothing of the upload is left in the store', async () => {
    const alice = client(() => baseUrl, s.tokens.alice);
    const conversation = await alice.post('/v1/conversations', { json: { contact_id: 'tus-terminate-mid-patch' } });
    expect(conversation.status).toBe(201);
    const before = await s.blobs.stored();
    const length = 256 * 1024;
    const created = await alice.post('/v1/uploads', {
      headers: {
        ...TUS,
        'upload-length': String(length),
        'upload-metadata': `filename ${Buffer.from('held.bin').toString('base64')},conversation_id ${Buffer.from(conversation.body.id).toString('base64')}`,
      },
    });
    expect(created.status, created.text).toBe(201);
    const location = created.headers.get('location')!;

    // A PATCH that announces the whole upload and sends a part of it, then nothing more.
    store.holding = true;
    const url = new URL(baseUrl + location);
    const answered = new Promise<number | 'cut'>((resolve) => {
      const request = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'PATCH',
          headers: { authorization: `Bearer ${s.tokens.alice}`, ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': '0', 'content-length': String(length) },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode!);
        },
      );
      request.on('error', () => resolve('cut'));
      request.write(Buffer.alloc(40 * 1024, 9));
    });
    await store.receiving.promise;
    store.holding = false;

    let deleteAnswered = false;
    const deleting = alice.del(location, { headers: TUS }).then((r) => {
      deleteAnswered = true;
      return r;
    });
    // The DELETE ended the PATCH's body: its chunk is durable in the store, and held there.
    await store.held.promise;
    // Held until the DELETE answers, or for a second if it does not (as it must not while the
    // chunk is there): a DELETE that answers before the chunk is removed is caught in the act.
    await Promise.race([deleting, new Promise((resolve) => setTimeout(resolve, 1000))]);
    const storedWhenAnswered = deleteAnswered ? await s.blobs.stored() : null;
    store.release.resolve();

    const r = await deleting;
    expect(r.status, r.text).toBe(204);
    expect(storedWhenAnswered ?? (await s.blobs.stored())).toEqual(before);
    expect(await s.blobs.stored()).toEqual(before);
    expect(await s.blobs.unfinished()).toEqual([]);
    // The PATCH could not record its chunk: the upload is gone (404), or its connection was cut.
    expect([404, 'cut']).toContain(await answered);
    expect((await alice.call('HEAD', location, { headers: TUS })).status).toBe(404);
  });
});
