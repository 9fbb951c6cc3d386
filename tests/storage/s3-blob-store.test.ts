// The object store's BlobStore operations against a real S3-compatible server (s3rver): what the
// orphan sweep and the start-up clean-up rely on (a complete listing with modification times,
// idempotent removal, aborting only stale incomplete uploads, only under the service's prefix),
// and a clear refusal to start on a bucket it cannot use.
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig, readS3Config } from '../../lib/config';
import { ApiService } from '../../lib/api/service';
import { sweepOrphans } from '../../lib/api/storage/blob-store';
import { S3BlobStore } from '../../lib/api/storage/s3-blob-store';
import { startS3Server, type S3TestServer } from '../helpers/s3';
import { tempDataDir } from '../helpers/server';

let s3: S3TestServer;
let c: S3Client;
const stores: S3BlobStore[] = [];

beforeAll(async () => {
  s3 = await startS3Server();
  c = s3.client();
});
afterAll(async () => {
  for (const store of stores) store.close();
  await s3?.stop();
});

async function freshStore(): Promise<{ store: S3BlobStore; bucket: string }> {
  const { bucket, env } = await s3.newBucket();
  const store = S3BlobStore.fromConfig(readS3Config(env)!, { maxUploadBytes: 100 * 1024 * 1024 });
  stores.push(store);
  return { store, bucket };
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function put(bucket: string, key: string, body = 'x') {
  await c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

describe('S3BlobStore', () => {
  it('list() pages through the whole bucket (past 1,000 objects) with modification times, under its prefix only', async () => {
    const { store, bucket } = await freshStore();
    const keys = Array.from({ length: 1005 }, (_, i) => `k${String(i).padStart(5, '0')}`);
    const startedAt = Date.now();
    for (let i = 0; i < keys.length; i += 25) await Promise.all(keys.slice(i, i + 25).map((k) => put(bucket, `files/${k}`)));
    await put(bucket, 'elsewhere/not-ours');
    // One ListObjectsV2 page is not all of it.
    const firstPage = await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'files/' }));
    expect(firstPage.IsTruncated).toBe(true);

    const listed = await all(store.list());
    expect(listed.map((b) => b.key).sort()).toEqual(keys);
    // S3 keeps LastModified to the second.
    for (const blob of listed) expect(blob.modifiedAt).toBeGreaterThanOrEqual(Math.floor(startedAt / 1000) * 1000);

    // The sweep sees every blob; it removes only what no row points at, and never outside the prefix.
    const live = new Set(keys.slice(0, 1000));
    expect(await sweepOrphans(store, (k) => live.has(k), 0)).toBe(5);
    expect((await all(store.list())).length).toBe(1000);
    expect((await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'elsewhere/' }))).KeyCount).toBe(1);
  });

  it('remove() is idempotent: a missing object is fine', async () => {
    const { store, bucket } = await freshStore();
    await put(bucket, 'files/gone');
    await store.remove('gone');
    await store.remove('gone');
    await store.remove('never-existed');
    expect(await all(store.list())).toEqual([]);
  });

  it('removeUnfinished() aborts incomplete multipart uploads older than asked, under its prefix only', async () => {
    const { store, bucket } = await freshStore();
    for (const key of ['files/a', 'files/b', 'elsewhere/c']) await c.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    const pending = async () => ((await c.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).map((u) => u.Key).sort();
    expect(await store.removeUnfinished(3600_000)).toBe(0); // all younger than an hour
    expect(await pending()).toEqual(['elsewhere/c', 'files/a', 'files/b']);
    expect(await store.removeUnfinished(0)).toBe(2);
    expect(await pending()).toEqual(['elsewhere/c']);
  });

  it('a write aborted before it finishes leaves nothing; one aborted after finish() is deleted', async () => {
    const { store } = await freshStore();
    const early = store.begin();
    early.sink.write(Buffer.alloc(1024, 1));
    await early.abort();
    await early.abort(); // twice is fine
    const late = store.begin();
    late.sink.end(Buffer.from('done'));
    await late.finish();
    expect((await all(store.list())).map((b) => b.key)).toEqual([late.key]);
    await late.abort();
    expect(await all(store.list())).toEqual([]);
  });
});

describe('when the store fails under a write', () => {
  /** Writes `mib` MiB into the sink, then waits for `atPause` and writes `more` MiB and ends. */
  async function write(sink: NodeJS.WritableStream, mib: number, atPause: () => Promise<void>, more: number) {
    const block = Buffer.alloc(1024 * 1024, 7);
    async function* source() {
      for (let i = 0; i < mib; i++) yield block;
      await atPause();
      for (let i = 0; i < more; i++) yield block;
    }
    // Stream to stream, as the upload handler pipes busboy's file stream into the sink.
    await pipeline(Readable.from(source()), sink);
  }
  const begun = (bucket: string, client = c) =>
    expect.poll(async () => ((await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).length, { timeout: 20_000 }).toBe(1);

  it('a store that goes away: the writer hears the store\'s own error, and finish() rejects', async () => {
    const dying = await startS3Server();
    const { bucket, env } = await dying.newBucket();
    const store = S3BlobStore.fromConfig(readS3Config(env)!, { maxUploadBytes: 100 * 1024 * 1024 });
    stores.push(store);
    const blob = store.begin();
    const writing = write(blob.sink, 7, async () => {
      await begun(bucket, dying.client());
      await dying.kill();
    }, 30);
    const error = await writing.then(() => null, (e: NodeJS.ErrnoException) => e);
    fs.rmSync(dying.directory, { recursive: true, force: true });
    expect(error?.code).not.toBe('ERR_STREAM_PREMATURE_CLOSE');
    expect(error?.code).toBe('ECONNREFUSED');
    await expect(blob.finish()).rejects.toThrow();
    await blob.abort(); // never rejects
  });

  it('a store that stops answering: the request times out, the write fails instead of hanging', async () => {
    const { bucket, env } = await s3.newBucket();
    const store = S3BlobStore.fromConfig(readS3Config(env)!, { maxUploadBytes: 100 * 1024 * 1024, requestTimeoutMs: 500 });
    stores.push(store);
    const blob = store.begin();
    let frozen = false;
    try {
      const writing = write(blob.sink, 7, async () => {
        await begun(bucket);
        process.kill(s3.pid, 'SIGSTOP');
        frozen = true;
      }, 30);
      const error = await writing.then(() => null, (e: Error) => e);
      expect(error?.name).toBe('TimeoutError');
      await expect(blob.finish()).rejects.toThrow(/requestTimeout/);
    } finally {
      if (frozen) process.kill(s3.pid, 'SIGCONT');
    }
  });
});

describe('starting on a bucket that cannot be used', () => {
  // (s3rver checks the access key but not SigV4 signatures: an unknown key stands for bad credentials.)
  it('a missing bucket or wrong credentials stop the start with a clear message', async () => {
    const { env } = await s3.newBucket();
    const open = (extra: Record<string, string>) => ApiService.open(readConfig({ DATA_DIR: tempDataDir(), ...env, ...extra }), { log: () => {}, error: () => {} });
    await expect(open({ S3_BUCKET: 'no-such-bucket-here' })).rejects.toThrow('object store: bucket "no-such-bucket-here" is not usable (it does not exist)');
    await expect(open({ S3_ACCESS_KEY_ID: 'UNKNOWNKEY' })).rejects.toThrow(/object store: bucket "parley-[0-9a-f]+" is not usable \(access denied\)/);
  });
});
