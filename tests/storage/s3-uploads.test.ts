// The service with file bytes in an S3-compatible object store (s3rver, a real server process on a
// free port): where the bytes go, multipart for large files, and that nothing is left in the bucket
// — no object, no incomplete multipart upload — when an upload is refused, fails or is cut off.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { GetObjectCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiErrorBody } from '../../lib/schemas';
import { client, expectError } from '../helpers/api';
import { startS3Server, type S3TestServer } from '../helpers/s3';
import { startTestServer, type TestServer } from '../helpers/server';

const MiB = 1024 * 1024;
const LIMIT = 70 * MiB;

let s3: S3TestServer;
let bucket: string;
let s3c: S3Client;
let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

beforeAll(async () => {
  s3 = await startS3Server();
  const made = await s3.newBucket();
  bucket = made.bucket;
  s3c = s3.client();
  s = await startTestServer({ env: { ...made.env, MAX_UPLOAD_BYTES: String(LIMIT) } });
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 's3-uploads' } })).body.id;
});
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
});

/** Incomplete multipart uploads anywhere in the bucket. */
async function incompleteUploads(c = s3c, b = bucket): Promise<string[]> {
  const page = await c.send(new ListMultipartUploadsCommand({ Bucket: b }));
  return (page.Uploads ?? []).map((u) => u.Key ?? '');
}

async function objectBytes(key: string): Promise<Buffer> {
  const answer = await s3c.send(new GetObjectCommand({ Bucket: bucket, Key: `files/${key}` }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

/** Waits until the bucket holds an incomplete multipart upload (the service has begun one). */
async function multipartBegun(c = s3c, b = bucket): Promise<void> {
  await expect.poll(() => incompleteUploads(c, b), { timeout: 20_000, interval: 20 }).toHaveLength(1);
}

const block = randomBytes(MiB);

/**
 * A multipart/form-data upload streamed by hand: `fields` first, then a file part of `size`
 * pseudo-random bytes. After `pauseAt` bytes of the file it awaits `atPause`; `cut` drops the
 * connection there instead of finishing. Resolves with the status and body, or null when cut.
 */
function streamUpload(options: {
  /** The server to send to (the shared one by default). */
  to?: TestServer;
  fields: Record<string, string>;
  size: number;
  after?: Record<string, string>;
  pauseAt?: number;
  atPause?: () => Promise<void>;
  cut?: boolean;
}): Promise<{ status: number; body: any; sha256: string } | null> {
  const boundary = `s3test${randomBytes(6).toString('hex')}`;
  const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = Buffer.from(
    Object.entries(options.fields).map(([k, v]) => part(k, v)).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n${Object.entries(options.after ?? {}).map(([k, v]) => part(k, v)).join('')}--${boundary}--\r\n`);
  const server = options.to ?? s;
  const url = new URL(server.baseUrl);
  const hash = createHash('sha256');
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/v1/files',
      headers: {
        authorization: `Bearer ${server.tokens.alice}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + options.size + tail.length),
      },
    });
    let cutDone = false;
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), sha256: hash.digest('hex') }));
    });
    req.on('error', (error) => (cutDone ? resolve(null) : reject(error)));
    const write = (chunk: Buffer) => (req.write(chunk) ? Promise.resolve() : new Promise<void>((r) => req.once('drain', () => r())));
    void (async () => {
      await write(head);
      let sent = 0;
      let paused = options.pauseAt === undefined;
      while (sent < options.size) {
        if (!paused && sent >= options.pauseAt!) {
          paused = true;
          await options.atPause?.();
          if (options.cut) {
            cutDone = true;
            req.destroy();
            resolve(null);
            return;
          }
        }
        const n = Math.min(MiB, options.size - sent, paused ? MiB : options.pauseAt! - sent);
        const chunk = block.subarray(0, n);
        hash.update(chunk);
        if (req.destroyed) return; // answered early (a refusal): stop sending
        await write(chunk);
        sent += n;
      }
      req.end(tail);
    })().catch(() => {});
  });
}

describe('file bytes in an object store', () => {
  it('keeps the bytes in the bucket, not on disk, and serves them back', async () => {
    const before = await s.blobs.stored();
    const f = await alice.upload({ conversation_id: conversationId }, { name: 'note.txt', bytes: 'stored in s3' });
    expect(f.status).toBe(201);
    const added = (await s.blobs.stored()).filter((k) => !before.includes(k));
    expect(added).toHaveLength(1);
    expect((await objectBytes(added[0]!)).toString()).toBe('stored in s3');
    expect(fs.existsSync(path.join(s.dataDir, 'files'))).toBe(false);
    const u = new URL(f.body.file_url);
    const got = await client(() => s.baseUrl).get(u.pathname + u.search);
    expect(got.text).toBe('stored in s3');
  });

  it('a large (64 MiB) upload goes multipart, arrives whole, and serves Range (across parts), ETag and 304 from the store', async () => {
    const before = await s.blobs.stored();
    const size = 64 * MiB + 12345;
    const r = await streamUpload({ fields: { conversation_id: conversationId }, size, pauseAt: 11 * MiB, atPause: () => multipartBegun() });
    expect(r!.status).toBe(201);
    expect(r!.body.file_size).toBe(size);
    expect(await incompleteUploads()).toEqual([]);
    const added = (await s.blobs.stored()).filter((k) => !before.includes(k));
    expect(added).toHaveLength(1);
    expect(createHash('sha256').update(await objectBytes(added[0]!)).digest('hex')).toBe(r!.sha256);

    const u = new URL(r!.body.file_url);
    const anon = client(() => s.baseUrl);
    const full = await fetch(s.baseUrl + u.pathname + u.search);
    expect(full.status).toBe(200);
    expect(full.headers.get('content-length')).toBe(String(size));
    expect(createHash('sha256').update(Buffer.from(await full.arrayBuffer())).digest('hex')).toBe(r!.sha256);
    const etag = full.headers.get('etag')!;

    // 5 MiB is where the first part ends.
    const start = 5 * MiB - 3;
    const part = await fetch(s.baseUrl + u.pathname + u.search, { headers: { range: `bytes=${start}-${start + 7}` } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes ${start}-${start + 7}/${size}`);
    const expected = Buffer.concat([block.subarray(start % MiB), block.subarray(0, 8)]).subarray(0, 8);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(expected);
    const suffix = await fetch(s.baseUrl + u.pathname + u.search, { headers: { range: 'bytes=-5' } });
    expect(Buffer.from(await suffix.arrayBuffer())).toEqual(block.subarray(12345 - 5, 12345));

    expect((await anon.get(u.pathname + u.search, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const head = await anon.call('HEAD', u.pathname + u.search);
    expect(head.headers.get('content-length')).toBe(String(size));
    expect(head.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('over the limit mid-multipart: 413, the multipart upload aborted, no object', async () => {
    const before = await s.blobs.stored();
    const r = await streamUpload({ fields: { conversation_id: conversationId }, size: LIMIT + 4 * MiB, pauseAt: 11 * MiB, atPause: () => multipartBegun() });
    expectError(r!, 413, 'file_too_large');
    // Answered only once the bytes are gone: nothing to wait for.
    expect(await incompleteUploads()).toEqual([]);
    expect(await s.blobs.stored()).toEqual(before);
  });

  it('a bad field after a large file: 400, the completed object deleted', async () => {
    const before = await s.blobs.stored();
    const r = await streamUpload({ fields: { conversation_id: conversationId }, size: 12 * MiB, after: { colour: 'blue' } });
    expectError(r!, 400, 'parameter_unknown', 'colour');
    expect(await incompleteUploads()).toEqual([]);
    expect(await s.blobs.stored()).toEqual(before);
  });

  it('an unknown conversation: 404 after the bytes were stored, the object deleted (small and multipart)', async () => {
    const before = await s.blobs.stored();
    expectError(await alice.upload({ conversation_id: 'AAAAAAAAAAAAAAAA' }, { name: 'a.txt', bytes: 'x' }), 404, 'resource_missing', 'conversation_id');
    const r = await streamUpload({ fields: { conversation_id: 'AAAAAAAAAAAAAAAA' }, size: 12 * MiB, pauseAt: 6 * MiB, atPause: () => multipartBegun() });
    expectError(r!, 404, 'resource_missing', 'conversation_id');
    expect(await incompleteUploads()).toEqual([]);
    expect(await s.blobs.stored()).toEqual(before);
  });

  it('a client that drops the connection mid-multipart leaves no upload and no object', async () => {
    const before = await s.blobs.stored();
    const rowsBefore = (await alice.get(`/v1/files?conversation_id=${conversationId}&limit=100`)).body.data.length;
    const r = await streamUpload({ fields: { conversation_id: conversationId }, size: 20 * MiB, pauseAt: 11 * MiB, atPause: () => multipartBegun(), cut: true });
    expect(r).toBeNull();
    // No answer reaches a dropped client: wait for the abort to land.
    await expect.poll(() => incompleteUploads(), { timeout: 20_000 }).toEqual([]);
    expect(await s.blobs.stored()).toEqual(before);
    expect((await alice.get(`/v1/files?conversation_id=${conversationId}&limit=100`)).body.data.length).toBe(rowsBefore);
  });
});

describe('when the object store fails mid-upload', () => {
  it('the upload is answered with an error (not left hanging), no row; the next start aborts the stale multipart upload', async () => {
    const store = await startS3Server();
    const { bucket: b, env } = await store.newBucket();
    const server = await startTestServer({ env });
    const dataDir = server.dataDir;
    let revived: S3TestServer | null = null;
    try {
      const me = client(() => server.baseUrl, server.tokens.alice);
      const c = (await me.post('/v1/conversations', { json: { contact_id: 'store-dies' } })).body;
      const r = await streamUpload({
        to: server,
        fields: { conversation_id: c.id },
        size: 20 * MiB,
        pauseAt: 11 * MiB,
        atPause: async () => {
          await multipartBegun(store.client(), b);
          await store.kill();
        },
      });
      expect(r!.status).toBeGreaterThanOrEqual(400);
      ApiErrorBody.parse(r!.body);
      expect((await me.get(`/v1/files?conversation_id=${c.id}`)).body.data).toEqual([]);

      // The store comes back (same data, new port): the multipart upload it could not be told to
      // abort is still there, until the service's next start-up sweep.
      revived = await startS3Server({ directory: store.directory });
      const rc = revived.client();
      expect(await incompleteUploads(rc, b)).toHaveLength(1);
      await server.stop();
      // (A start long after the failure: the sweep's grace period, an hour by default, is over.)
      const again = await startTestServer({ dataDir, env: { ...env, S3_ENDPOINT: revived.endpoint }, sweepGraceMs: 0 });
      expect(await incompleteUploads(rc, b)).toEqual([]);
      await again.stop();
    } finally {
      await server.stop().catch(() => {});
      await revived?.stop();
      fs.rmSync(store.directory, { recursive: true, force: true });
    }
  });
});
