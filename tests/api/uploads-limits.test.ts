// Resumable uploads (/v1/uploads) at their edges (issue 27, the low findings): an upload ends with
// the conversation it was going to; one filename rule for tus and POST /v1/files (a leading BOM);
// oversized headers and a body cut short answered in the contract's shape, or not at all; a HEAD
// right after a PATCH cut off mid-body tells the offset it reached; caps on open uploads per user
// and on chunks per upload; Retry-After from the lease that is really held.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../lib/config';
import type { BlobStore, BlobWrite } from '../../lib/api/storage/blob-store';
import { DiskBlobStore } from '../../lib/api/storage/disk-blob-store';
import { S3BlobStore } from '../../lib/api/storage/s3-blob-store';
import { client, expectError, type CallResult } from '../helpers/api';
import { rawRequest } from '../helpers/raw-http';
import type { TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';
import type { TwoInstances } from '../helpers/two-instances';

const OFFSET_STREAM = 'application/offset+octet-stream';
const TUS = { 'tus-resumable': '1.0.0' };
const viaProxy = process.env.PARLEY_TEST_VIA_PROXY === '1';
const twoInstances = process.env.PARLEY_TEST_TWO_INSTANCES === '1';

type Client = ReturnType<typeof client>;
const b64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');
const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');
const create = (c: Client, length: number, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  c.post('/v1/uploads', { headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': metadata(fields), ...headers } });
const patch = (c: Client, location: string, offset: number, bytes: Buffer) =>
  c.call('PATCH', location, { headers: { ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': String(offset) }, body: bytes as BodyInit });
const head = (c: Client, location: string) => c.call('HEAD', location, { headers: TUS });

function expectTusError(r: CallResult, status: number, code: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.body).toMatchObject({ type: 'invalid_request', code });
  expect(typeof r.body.message).toBe('string');
}

async function newConversation(c: Client, contact: string): Promise<string> {
  const r = await c.post('/v1/conversations', { json: { contact_id: contact } });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function until(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A PATCH on a raw socket that announces `length` bytes and sends `sent` of them (more may follow). */
function openPatch(port: number, location: string, token: string, offset: number, length: number, sent: Buffer) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    `PATCH ${location} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nTus-Resumable: 1.0.0\r\n` +
      `Content-Type: ${OFFSET_STREAM}\r\nUpload-Offset: ${offset}\r\nContent-Length: ${length}\r\n\r\n`,
  );
  socket.write(sent);
  return { socket, closed, received: () => received };
}

/** The server's store; while `slow`, a write's finish() (the chunk made durable) takes `slowMs` more. */
class SlowFinishStore implements BlobStore {
  slow = false;
  slowMs = 600;
  constructor(readonly inner: BlobStore) {}
  begin(): BlobWrite {
    const write = this.inner.begin();
    if (!this.slow) return write;
    return {
      key: write.key,
      sink: write.sink,
      abort: () => write.abort(),
      finish: async () => {
        await new Promise((resolve) => setTimeout(resolve, this.slowMs));
        await write.finish();
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

const CAPS = { MAX_OPEN_UPLOADS_PER_USER: '3', MAX_UPLOAD_CHUNKS: '3' };

describe('resumable uploads at their edges', () => {
  let s: TestServer;
  let store: SlowFinishStore | undefined;
  /** With two instances, one of them: a HEAD's wait for a PATCH is within one process. */
  let baseUrl: string;
  let port: number;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    s = await startTarget({
      env: CAPS,
      edgeEnv: CAPS,
      ...(viaProxy ? {} : { store: (dataDir: string, config: Config) => (store = new SlowFinishStore(storeFor(dataDir, config))) }),
    });
    const one = twoInstances ? (s as TwoInstances).instances[0] : s;
    baseUrl = one.baseUrl;
    port = Number(new URL(baseUrl).port);
    alice = client(() => baseUrl, s.tokens.alice);
    bob = client(() => baseUrl, s.tokens.bob);
  });
  afterAll(async () => {
    await s?.stop();
    store?.close();
  });

  /** Ends every unfinished upload of `c` (the open-uploads cap is small here). */
  async function endUploads(...locations: string[]) {
    for (const location of locations) expect([204, 404]).toContain((await alice.del(location, { headers: TUS })).status);
  }

  // The white-box looks (rows, blobs) are the embedded server's; the proxy stages in its own.
  it.skipIf(viaProxy)('deleting a conversation ends its unfinished uploads (into it, or into its messages) and removes their bytes at once; HEAD then 404', async () => {
    const conversation = await newConversation(alice, 'uploads-end-with-it');
    const file = await alice.upload({ conversation_id: conversation }, { name: 'first.txt', bytes: 'first' });
    expect(file.status).toBe(201);
    const before = await s.blobs.stored();
    const into = await create(alice, 100, { filename: 'into.bin', conversation_id: conversation });
    const toMessage = await create(alice, 100, { filename: 'message.bin', message_id: file.body.message_id });
    const locations = [into.headers.get('location')!, toMessage.headers.get('location')!];
    for (const location of locations) expect((await patch(alice, location, 0, Buffer.alloc(40, 1))).status).toBe(204);
    expect((await s.blobs.stored()).length).toBe(before.length + 2);
    // A third upload into it, whose PATCH is still receiving bytes (on the instance the delete goes to).
    const receiving = await create(alice, 100, { filename: 'receiving.bin', conversation_id: conversation });
    const receivingAt = receiving.headers.get('location')!;
    const id = receivingAt.split('/').pop()!;
    const open = openPatch(port, receivingAt, s.tokens.alice, 0, 100, Buffer.alloc(10, 2));
    await until(async () => Boolean((await (s.service.db as any).selectFrom('uploads').select('writer').where('id', '=', id).executeTakeFirst())?.writer), 'the PATCH to hold the upload');
    await until(async () => (await s.blobs.unfinished()).length > 0 || Boolean(process.env.PARLEY_TEST_S3), 'its bytes to arrive');

    expect((await alice.del(`/v1/conversations/${conversation}`)).status).toBe(204);
    // At once: the chunks' blobs are gone (the file's too), and so is the receiving PATCH's.
    const after = await s.blobs.stored();
    expect(after.filter((key) => !before.includes(key))).toEqual([]);
    expect(await s.blobs.unfinished()).toEqual([]);
    for (const location of [...locations, receivingAt]) expect((await head(alice, location)).status).toBe(404);
    expect((await (s.service.db as any).selectFrom('uploads').selectAll().where('conversation_id', '=', conversation).execute()).length).toBe(0);
    await open.closed;
  });

  it('a filename with a BOM is refused by tus as by POST /v1/files (400, nothing kept)', async () => {
    const conversation = await newConversation(alice, 'uploads-bom');
    for (const name of ['\uFEFFreport.pdf', 'report\uFEFF.pdf']) {
      expectError(await create(alice, 4, { filename: name, conversation_id: conversation }), 400, 'parameter_invalid', 'filename');
      expectError(await alice.upload({ conversation_id: conversation }, { name, bytes: 'abcd' }), 400, 'parameter_invalid', 'file');
    }
    expect((await alice.get(`/v1/files?conversation_id=${conversation}`)).body.data).toEqual([]);
  });

  it('headers beyond the limit (a 40 KB Upload-Metadata): 431 in the contract\'s shape, and the connection closes', async () => {
    const huge = `filename ${b64('x.txt')},conversation_id ${b64('AAAAAAAAAAAAAAAA')},relativePath ${b64('d/'.repeat(15_000))}`;
    const answer = await rawRequest(
      port,
      `POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${s.tokens.alice}\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 5\r\nUpload-Metadata: ${huge}\r\n\r\n`,
    );
    expect(answer.status, answer.text.slice(0, 300)).toBe(431);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toMatchObject({ type: 'invalid_request', code: 'request_header_fields_too_large' });
    expect(answer.closedByServer).toBe(true);
  });

  it('a request whose headers are cut short (the client closes its side): 400 that says so', async () => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.end(`POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpload-Len`);
    await closed;
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(text.split('\r\n\r\n')[1]!);
    expect(body).toMatchObject({ type: 'invalid_request', code: 'parameter_invalid' });
    expect(body.message).toMatch(/closed before the request was complete/);
  });

  it.skipIf(viaProxy)('a PATCH whose client closes mid-body: no "could not be parsed" answer, and a HEAD right after tells the offset it reached', async () => {
    const conversation = await newConversation(alice, 'uploads-cut');
    const created = await create(alice, 64, { filename: 'cut.bin', conversation_id: conversation });
    const location = created.headers.get('location')!;
    const id = location.split('/').pop()!;
    const cut = openPatch(port, location, s.tokens.alice, 0, 64, Buffer.alloc(24, 5));
    await until(async () => Boolean((await (s.service.db as any).selectFrom('uploads').select('writer').where('id', '=', id).executeTakeFirst())?.writer), 'the PATCH to hold the upload');
    await new Promise((resolve) => setTimeout(resolve, 100)); // its 24 bytes read
    // Its chunk takes a while to become durable (the store is slow for this one): the HEAD that
    // comes meanwhile waits for it.
    store!.slow = true;
    try {
      cut.socket.end();
      await cut.closed;
      const started = Date.now();
      const state = await head(alice, location);
      expect(state.headers.get('upload-offset')).toBe('24');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      store!.slow = false;
    }
    expect(cut.received()).not.toMatch(/could not be parsed/);
    const rest = await patch(alice, location, 24, Buffer.alloc(40, 6));
    expect(rest.status, rest.text).toBe(204);
    expect(rest.headers.get('upload-file-id')).toMatch(/^[A-Za-z0-9]{16}$/);
  });

  it.skipIf(viaProxy)('a PATCH refused because another instance holds the upload: Retry-After is what is left of that lease', async () => {
    const conversation = await newConversation(alice, 'uploads-lease');
    const created = await create(alice, 10, { filename: 'lease.bin', conversation_id: conversation });
    const location = created.headers.get('location')!;
    const id = location.split('/').pop()!;
    // Held by a request of another instance, for 2.5 s more.
    await (s.service.db as any).updateTable('uploads').set({ writer: 'elsewhere', writer_until: Date.now() + 2_500 }).where('id', '=', id).execute();
    const refused = await patch(alice, location, 0, Buffer.alloc(10, 1));
    expectTusError(refused, 409, 'upload_in_progress');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3);
    await endUploads(location);
  });

  it('MAX_OPEN_UPLOADS_PER_USER: one more creation is 429 too_many_uploads with Retry-After (not stored under its Idempotency-Key); a finished or deleted one frees its place', async () => {
    const conversation = await newConversation(alice, 'uploads-open-cap');
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await create(alice, 4, { filename: `open-${i}.txt`, conversation_id: conversation });
      expect(r.status, r.text).toBe(201);
      made.push(r.headers.get('location')!);
    }
    const key = `over-${Date.now()}`;
    const over = await create(alice, 4, { filename: 'over.txt', conversation_id: conversation }, { 'idempotency-key': key });
    expectTusError(over, 429, 'too_many_uploads');
    expect(over.body.message).toMatch(/until it expires/);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3600); // the first of them expires in a day
    expect(retryAfter).toBeLessThanOrEqual(24 * 3600);
    // Another user is not affected.
    const bobs = await newConversation(bob, 'uploads-open-cap-bob');
    const ofBob = await create(bob, 4, { filename: 'bob.txt', conversation_id: bobs });
    expect(ofBob.status).toBe(201);
    // A finished upload does not count: one place.
    expect((await patch(alice, made[0]!, 0, Buffer.from('done'))).headers.get('upload-file-id')).toBeTruthy();
    const again = await create(alice, 4, { filename: 'over.txt', conversation_id: conversation }, { 'idempotency-key': key });
    expect(again.status, again.text).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expectTusError(await create(alice, 4, { filename: 'more.txt', conversation_id: conversation }), 429, 'too_many_uploads');
    // A deleted one does not count either.
    await endUploads(made[1]!);
    expect((await create(alice, 4, { filename: 'more.txt', conversation_id: conversation })).status).toBe(201);
    await endUploads(made[2]!, again.headers.get('location')!);
    await bob.del(ofBob.headers.get('location')!, { headers: TUS });
    // The last one made above still counts; clean it up through the conversation.
    expect((await alice.del(`/v1/conversations/${conversation}`)).status).toBe(204);
  });

  it('MAX_UPLOAD_CHUNKS: with one chunk left, a PATCH must carry every byte left (409 upload_chunk_limit otherwise; one that ends short keeps nothing)', async () => {
    const conversation = await newConversation(alice, 'uploads-chunk-cap');
    const created = await create(alice, 10, { filename: 'pieces.txt', conversation_id: conversation });
    const location = created.headers.get('location')!;
    expect((await patch(alice, location, 0, Buffer.from('a'))).status).toBe(204);
    expect((await patch(alice, location, 1, Buffer.from('b'))).status).toBe(204);
    // Two chunks of three: the next must end the upload.
    const refused = await patch(alice, location, 2, Buffer.from('c'));
    expectTusError(refused, 409, 'upload_chunk_limit');
    expect(refused.body.message).toMatch(/every byte left \(8\)/);
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('2');
    // One that announces the rest and ends short: its bytes are not kept.
    const short = openPatch(port, location, s.tokens.alice, 2, 8, Buffer.from('cde'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    short.socket.end();
    await short.closed;
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('2');
    const done = await patch(alice, location, 2, Buffer.from('cdefghij'));
    expect(done.status, done.text).toBe(204);
    const file = (await alice.get(`/v1/files/${done.headers.get('upload-file-id')}`)).body;
    const url = new URL(file.file_url);
    expect(await (await fetch(s.baseUrl + url.pathname + url.search)).text()).toBe('abcdefghij');
  });
});
