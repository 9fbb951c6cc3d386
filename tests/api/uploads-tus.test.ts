// Resumable uploads (tus 1.0.0) at /v1/uploads, over real HTTP against the real server: every
// request form, isolation, the checks made before any byte, completion into exactly one file,
// idempotent creation, expiry, and (by project) the object store and two instances.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileObject } from '../../lib/schemas';
import { client, expectError, type CallResult } from '../helpers/api';
import { startTarget, type TargetOptions } from '../helpers/target';
import { tempDataDir } from '../helpers/server';
import Database from 'better-sqlite3';
import { capturingLog } from '../helpers/storage';
import type { TestServer } from '../helpers/server';
import type { TwoInstances } from '../helpers/two-instances';
import { Writable } from 'node:stream';
import { DiskBlobStore } from '../../lib/api/storage/disk-blob-store';
import type { BlobStore, BlobWrite } from '../../lib/api/storage/blob-store';

/** The disk store, except that while `full` is set a write fails as a full disk does (ENOSPC). */
class FillableStore extends DiskBlobStore implements BlobStore {
  full = false;
  begin(): BlobWrite {
    const write = super.begin();
    if (!this.full) return write;
    const sink = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
      },
    });
    return { key: write.key, sink, finish: () => Promise.reject(new Error('not finished')), abort: () => write.abort() };
  }
}

/** The disk store, counting the blobs written (chunks and files). */
class CountingStore extends DiskBlobStore implements BlobStore {
  writes = 0;
  begin(): BlobWrite {
    this.writes++;
    return super.begin();
  }
}

const MAX = 64 * 1024;
const OFFSET_STREAM = 'application/offset+octet-stream';
const TUS = { 'tus-resumable': '1.0.0' };
const viaProxy = process.env.PARLEY_TEST_VIA_PROXY === '1';
const onS3 = process.env.PARLEY_TEST_S3 === '1';
const twoInstances = process.env.PARLEY_TEST_TWO_INSTANCES === '1';

let s: TestServer;
let alice: ReturnType<typeof client>;
let bob: ReturnType<typeof client>;
let conversationId: string;

const b64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');
const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');
/** A PNG signature and then some: sniffed as image/png when no filetype is given. */
const png = (size: number) => {
  const bytes = Buffer.alloc(size);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
  for (let i = 8; i < size; i++) bytes[i] = (i * 7) % 251;
  return bytes;
};

type Client = ReturnType<typeof client>;

function create(c: Client, length: number, fields: Record<string, string>, o: { body?: Buffer; headers?: Record<string, string> } = {}) {
  return c.post('/v1/uploads', {
    headers: {
      ...TUS,
      'upload-length': String(length),
      'upload-metadata': metadata(fields),
      ...(o.body ? { 'content-type': OFFSET_STREAM } : {}),
      ...o.headers,
    },
    body: o.body as BodyInit | undefined,
  });
}

const patch = (c: Client, location: string, offset: number, bytes: Buffer, headers: Record<string, string> = {}) =>
  c.call('PATCH', location, { headers: { ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': String(offset), ...headers }, body: bytes as BodyInit });
const head = (c: Client, location: string) => c.call('HEAD', location, { headers: TUS });

/** The contract's error shape, for the tus codes too (which ApiErrorBody does not list yet). */
function expectTusError(r: CallResult, status: number, code: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.body).toMatchObject({ type: 'invalid_request', code });
  expect(typeof r.body.message).toBe('string');
  expect(r.headers.get('tus-resumable')).toBe('1.0.0');
}

// Through the proxy (PARLEY_TEST_VIA_PROXY=1) the proxy serves /v1/uploads itself and stages the
// bytes in its own DATA_DIR (lib/proxy/uploads.ts): the white-box looks go there.
let stagingDir = '';
/** The target, with the proxy's own DATA_DIR and MAX_UPLOAD_BYTES when the suite runs through it. */
function startUploadsTarget(options: TargetOptions): Promise<TestServer> {
  if (!viaProxy) return startTarget(options);
  stagingDir = tempDataDir();
  return startTarget({ ...options, edgeEnv: {
      ...options.edgeEnv,
      DATA_DIR: stagingDir,
      ...(options.env?.MAX_UPLOAD_BYTES ? { MAX_UPLOAD_BYTES: options.env.MAX_UPLOAD_BYTES } : {}),
    },
  });
}
const staging = () => path.join(stagingDir, 'proxy-uploads');

/** Upload rows (white-box: the database all instances share; through the proxy, its staging database). */
async function uploadRows(): Promise<Array<Record<string, any>>> {
  if (!viaProxy) return (await (s.service.db as any).selectFrom('uploads').selectAll().execute()) as Array<Record<string, any>>;
  if (!fs.existsSync(path.join(staging(), 'parley.sqlite'))) return [];
  const db = new Database(path.join(staging(), 'parley.sqlite'), { readonly: true });
  try {
    return db.prepare('select * from uploads').all() as Array<Record<string, any>>;
  } finally {
    db.close();
  }
}
/** Where the bytes of unfinished uploads are (and, embedded, the files' too). */
async function storedBlobs(): Promise<string[]> {
  if (!viaProxy) return s.blobs.stored();
  const files = path.join(staging(), 'files');
  if (!fs.existsSync(files)) return [];
  return fs.readdirSync(files, { recursive: true }).map(String).filter((p) => fs.statSync(path.join(files, p)).isFile()).sort();
}
const unfinishedBlobs = async () => [...(await s.blobs.unfinished()), ...(viaProxy && fs.existsSync(path.join(staging(), 'tmp')) ? fs.readdirSync(path.join(staging(), 'tmp')) : [])];

async function newConversation(c: Client, contact: string): Promise<string> {
  const r = await c.post('/v1/conversations', { json: { contact_id: contact } });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function fileBytes(c: Client, file: { file_url: string }): Promise<Buffer> {
  const u = new URL(file.file_url);
  const r = await fetch(s.baseUrl + u.pathname + u.search);
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}

// Through the proxy: the proxy serves /v1/uploads itself (staging the bytes) and delivers a
// finished upload upstream as one POST /v1/files; its own tests: tests/proxy/uploads-staging.test.ts.
describe('resumable uploads (tus 1.0.0) at /v1/uploads', () => {
  beforeAll(async () => {
    s = await startUploadsTarget({ env: { MAX_UPLOAD_BYTES: String(MAX) } });
    alice = client(() => s.baseUrl, s.tokens.alice);
    bob = client(() => s.baseUrl, s.tokens.bob);
    conversationId = await newConversation(alice, 'tus-contact');
  });
  afterAll(() => s?.stop());

  it('OPTIONS advertises the protocol without a token', async () => {
    const r = await alice.call('OPTIONS', '/v1/uploads', { token: null });
    expect(r.status).toBe(204);
    expect(r.headers.get('tus-version')).toBe('1.0.0');
    expect(r.headers.get('tus-resumable')).toBe('1.0.0');
    expect(r.headers.get('tus-extension')!.split(',').sort()).toEqual(['creation', 'creation-with-upload', 'expiration', 'termination']);
    expect(r.headers.get('tus-max-size')).toBe(String(MAX));
  });

  it('the endpoints are in /v1/openapi.json, with the statuses they answer', async () => {
    const doc = (await alice.get('/v1/openapi.json', { token: null })).body;
    expect(Object.keys(doc.paths['/v1/uploads'])).toEqual(expect.arrayContaining(['options', 'post']));
    expect(Object.keys(doc.paths['/v1/uploads/{id}'])).toEqual(expect.arrayContaining(['options', 'head', 'patch', 'delete']));
    expect(doc.paths['/v1/uploads'].options.security).toEqual([]);
    for (const [path, method, statuses] of [
      ['/v1/uploads', 'post', ['201', '400', '401', '404', '409', '413', '415']],
      ['/v1/uploads/{id}', 'head', ['200', '404', '410']],
      ['/v1/uploads/{id}', 'patch', ['204', '400', '404', '409', '410', '413', '415']],
      ['/v1/uploads/{id}', 'delete', ['204', '404']],
    ] as const) {
      expect(Object.keys(doc.paths[path][method].responses), `${method} ${path}`).toEqual(expect.arrayContaining([...statuses]));
    }
  });

  it('every other request needs the bearer token', async () => {
    expectError(await create(client(() => s.baseUrl), 3, { filename: 'a.txt', conversation_id: conversationId }), 401, 'unauthenticated');
    const created = await create(alice, 3, { filename: 'a.txt', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    expect((await alice.call('HEAD', location, { token: null })).status).toBe(401);
    expectError(await patch(client(() => s.baseUrl), location, 0, Buffer.from('abc')), 401, 'unauthenticated');
    expectError(await client(() => s.baseUrl).del(location), 401, 'unauthenticated');
    expect(Number((await head(alice, location)).headers.get('upload-offset'))).toBe(0);
  });

  it('X-HTTP-Method-Override on a POST is its method; a method a path does not take is 405 with Allow; another Tus-Resumable is 412, before the method', async () => {
    const created = await create(alice, 6, { filename: 'override.txt', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    const as = (method: string, headers: Record<string, string> = {}, body?: Buffer) =>
      alice.post(location, { headers: { ...TUS, 'x-http-method-override': method, ...headers }, body: body as BodyInit | undefined });
    const appended = await as('patch', { 'content-type': OFFSET_STREAM, 'upload-offset': '0' }, Buffer.from('abc'));
    expect(appended.status, appended.text).toBe(204);
    expect(appended.headers.get('upload-offset')).toBe('3');
    const state = await as('HEAD');
    expect(state.status).toBe(200);
    expect(state.headers.get('upload-offset')).toBe('3');
    for (const [r, allow] of [
      [await alice.get('/v1/uploads', { headers: TUS }), 'POST, OPTIONS'],
      [await alice.post('/v1/uploads', { headers: { ...TUS, 'x-http-method-override': 'PATCH' } }), 'POST, OPTIONS'],
      [await alice.get(location, { headers: TUS }), 'HEAD, PATCH, DELETE, OPTIONS'],
      [await alice.post(location, { headers: TUS }), 'HEAD, PATCH, DELETE, OPTIONS'],
      [await as('OPTIONS'), 'HEAD, PATCH, DELETE, OPTIONS'],
    ] as const) {
      expectTusError(r, 405, 'method_not_allowed');
      expect(r.headers.get('allow')).toBe(allow);
    }
    const old = { 'tus-resumable': '0.2.2' };
    for (const r of [
      await alice.get(location, { headers: old }),
      await alice.call('PATCH', location, { headers: { ...old, 'content-type': OFFSET_STREAM, 'upload-offset': '3' }, body: Buffer.from('def') }),
      await create(alice, 3, { filename: 'old.txt', conversation_id: conversationId }, { headers: old }),
    ]) {
      expectTusError(r, 412, 'tus_version_unsupported');
      expect(r.headers.get('tus-version')).toBe('1.0.0');
    }
    expect((await as('DELETE')).status).toBe(204);
    expect((await head(alice, location)).status).toBe(404);
  });

  it('bad tus headers are the contract\'s errors, with the header as param', async () => {
    const created = await create(alice, 6, { filename: 'headers.txt', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    const fields = metadata({ filename: 'x.txt', conversation_id: conversationId });
    const post = (headers: Record<string, string>) => alice.post('/v1/uploads', { headers: { ...TUS, 'upload-metadata': fields, ...headers } });
    const cases: Array<[CallResult, number, string, string]> = [
      [await post({ 'upload-length': '-1' }), 400, 'parameter_invalid', 'Upload-Length'],
      [await post({ 'upload-length': '1e3' }), 400, 'parameter_invalid', 'Upload-Length'],
      [await post({ 'upload-length': '12345678901234567' }), 400, 'parameter_invalid', 'Upload-Length'],
      [await post({ 'upload-length': '3', 'upload-defer-length': '1' }), 400, 'parameter_invalid', 'Upload-Defer-Length'],
      [await post({ 'upload-length': '3', 'upload-metadata': `filename ${b64('a')},filename ${b64('b')}` }), 400, 'parameter_invalid', 'Upload-Metadata'],
      [await post({ 'upload-length': '3', 'upload-metadata': 'filename @@@@' }), 400, 'parameter_invalid', 'Upload-Metadata'],
      [await post({ 'upload-length': '3', 'upload-metadata': `filename ${Buffer.from([0xff, 0xfe]).toString('base64')}` }), 400, 'parameter_invalid', 'Upload-Metadata'],
      [await patch(alice, location, 0, Buffer.from('abc'), { 'upload-offset': 'zero' }), 400, 'parameter_invalid', 'Upload-Offset'],
    ];
    cases.forEach(([r, status, code, param], i) => {
      expect(r.status, `case ${i}: ${r.text}`).toBe(status);
      expectError(r, status, code, param);
      expect(r.headers.get('tus-resumable'), `case ${i}`).toBe('1.0.0');
    });
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('0');
  });

  it('POST, HEAD, PATCH in chunks: the last byte creates exactly one file, as POST /v1/files would', async () => {
    const conversation = await newConversation(alice, 'tus-chunks');
    const before = (await alice.get(`/v1/conversations/${conversation}`)).body;
    expect(before.last_active_at).toBeNull();
    const cursor = (await alice.get('/v1/events?limit=0')).body.next as string;
    const bytes = png(10_000);
    const created = await create(alice, bytes.length, { filename: 'scan', conversation_id: conversation });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toMatch(/^\/v1\/uploads\/[A-Za-z0-9]{16}$/);
    expect(created.headers.get('tus-resumable')).toBe('1.0.0');
    // Upload-Expires: a day after the server's Date (the default UPLOAD_EXPIRY_HOURS).
    const expires = Date.parse(created.headers.get('upload-expires')!);
    const date = Date.parse(created.headers.get('date')!);
    expect(Math.abs(expires - date - 24 * 3600_000)).toBeLessThanOrEqual(2000);

    let h = await head(alice, location);
    expect(h.status).toBe(200);
    expect(h.headers.get('upload-offset')).toBe('0');
    expect(h.headers.get('upload-length')).toBe(String(bytes.length));
    expect(h.headers.get('cache-control')).toContain('no-store');
    expect(h.headers.get('upload-file-id')).toBeNull();

    const cuts = [0, 3000, 7000, bytes.length];
    for (let i = 0; i < cuts.length - 1; i++) {
      const r = await patch(alice, location, cuts[i]!, bytes.subarray(cuts[i], cuts[i + 1]));
      expect(r.status, r.text).toBe(204);
      expect(r.headers.get('upload-offset')).toBe(String(cuts[i + 1]));
      if (i < cuts.length - 2) {
        expect(r.headers.get('upload-file-id')).toBeNull();
        expect((await head(alice, location)).headers.get('upload-offset')).toBe(String(cuts[i + 1]));
        expect((await alice.get(`/v1/files?conversation_id=${conversation}`)).body.data).toEqual([]);
      } else {
        h = r;
      }
    }
    const fileId = h.headers.get('upload-file-id')!;
    expect(fileId).toMatch(/^[A-Za-z0-9]{16}$/);

    const file = FileObject.parse((await alice.get(`/v1/files/${fileId}`)).body);
    expect(file).toMatchObject({ filename: 'scan', file_type: 'image/png', file_size: bytes.length });
    expect((await fileBytes(alice, file)).equals(bytes)).toBe(true);
    const listed = (await alice.get(`/v1/files?conversation_id=${conversation}`)).body.data;
    expect(listed.map((f: { id: string }) => f.id)).toEqual([fileId]);
    const after = (await alice.get(`/v1/conversations/${conversation}`)).body;
    expect(after.last_active_at).toBeGreaterThanOrEqual(file.created_at);
    const events = (await alice.get(`/v1/events?after=${cursor}&limit=1000`)).body.data as Array<{ type: string; object: { id: string } }>;
    expect(events.filter((e) => e.type === 'file.created').map((e) => e.object.id)).toEqual([fileId]);

    // A repeat of the last PATCH (its answer lost), and any later HEAD: the same file, no second one.
    const again = await patch(alice, location, cuts[2]!, bytes.subarray(cuts[2]));
    expect(again.status).toBe(204);
    expect(again.headers.get('upload-file-id')).toBe(fileId);
    expect(again.headers.get('upload-offset')).toBe(String(bytes.length));
    const later = await head(alice, location);
    expect(later.headers.get('upload-file-id')).toBe(fileId);
    expect(later.headers.get('upload-offset')).toBe(String(bytes.length));
    expect((await alice.get(`/v1/files?conversation_id=${conversation}`)).body.data).toHaveLength(1);
    // An earlier chunk again is not the end: refused, nothing changes.
    expectTusError(await patch(alice, location, 0, bytes.subarray(0, 3000)), 409, 'upload_offset_mismatch');
    expect((await alice.get(`/v1/files?conversation_id=${conversation}`)).body.data).toHaveLength(1);
  });

  it('creation-with-upload: the whole file in the POST, or its start', async () => {
    const whole = Buffer.from('%PDF-1.7 a whole pdf in the creation request');
    const r = await create(alice, whole.length, { filename: 'whole.bin', conversation_id: conversationId }, { body: whole });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('upload-offset')).toBe(String(whole.length));
    const file = (await alice.get(`/v1/files/${r.headers.get('upload-file-id')}`)).body;
    expect(file).toMatchObject({ filename: 'whole.bin', file_type: 'application/pdf', file_size: whole.length });
    expect((await fileBytes(alice, file)).equals(whole)).toBe(true);

    const text = Buffer.from('hello, resumable world');
    const start = await create(alice, text.length, { filename: 'notes.txt', filetype: 'text/plain', message_id: file.message_id }, { body: text.subarray(0, 5) });
    expect(start.status).toBe(201);
    expect(start.headers.get('upload-offset')).toBe('5');
    expect(start.headers.get('upload-file-id')).toBeNull();
    const location = start.headers.get('location')!;
    const end = await patch(alice, location, 5, text.subarray(5));
    const attached = (await alice.get(`/v1/files/${end.headers.get('upload-file-id')}`)).body;
    expect(attached).toMatchObject({ filename: 'notes.txt', file_type: 'text/plain', message_id: file.message_id, file_size: text.length });
    expect((await fileBytes(alice, attached)).equals(text)).toBe(true);
  });

  it('Prefer: return=representation: the request that stores the last byte answers with the file (no GET needed)', async () => {
    const prefer = { prefer: 'return=representation' };
    // Proxy mode makes the file upstream and answers with its id alone: a client reads it with a GET.
    const withBody = !viaProxy;
    const whole = png(3000);
    const r = await create(alice, whole.length, { filename: 'answered.png', conversation_id: conversationId }, { body: whole, headers: prefer });
    expect(r.status, r.text).toBe(201);
    const fileId = r.headers.get('upload-file-id')!;
    const file = (await alice.get(`/v1/files/${fileId}`)).body;
    expect(r.headers.get('location')).toMatch(/^\/v1\/uploads\/[A-Za-z0-9]{16}$/);
    if (withBody) {
      expect(r.headers.get('preference-applied')).toBe('return=representation');
      expect(r.headers.get('content-type')).toContain('application/json');
      expect(FileObject.parse(r.body)).toEqual(file);
    } else {
      expect(r.text).toBe('');
    }

    // In chunks: only the last PATCH answers with the file (200); the others stay 204, no body.
    const bytes = png(5000);
    const created = await create(alice, bytes.length, { filename: 'chunked.png', conversation_id: conversationId }, { headers: prefer });
    expect(created.status).toBe(201);
    expect(created.text).toBe('');
    const location = created.headers.get('location')!;
    const first = await patch(alice, location, 0, bytes.subarray(0, 2000), prefer);
    expect(first.status).toBe(204);
    expect(first.headers.get('preference-applied')).toBeNull();
    const last = await patch(alice, location, 2000, bytes.subarray(2000), prefer);
    const lastId = last.headers.get('upload-file-id')!;
    expect(lastId).toMatch(/^[A-Za-z0-9]{16}$/);
    const made = (await alice.get(`/v1/files/${lastId}`)).body;
    expect(made).toMatchObject({ filename: 'chunked.png', file_size: bytes.length });
    if (withBody) {
      expect(last.status).toBe(200);
      expect(last.headers.get('preference-applied')).toBe('return=representation');
      expect(FileObject.parse(last.body)).toEqual(made);
    } else {
      expect(last.status).toBe(204);
    }
    // Without the preference: the protocol's 204, no body.
    const plain = await create(alice, 4, { filename: 'plain.txt', conversation_id: conversationId });
    const done = await patch(alice, plain.headers.get('location')!, 0, Buffer.from('abcd'));
    expect(done.status).toBe(204);
    expect(done.text).toBe('');
    expect(done.headers.get('upload-file-id')).toMatch(/^[A-Za-z0-9]{16}$/);
  });

  it('an empty file: Upload-Length 0 is finished at creation', async () => {
    const r = await create(alice, 0, { filename: 'empty.txt', conversation_id: conversationId });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('upload-offset')).toBe('0');
    const file = (await alice.get(`/v1/files/${r.headers.get('upload-file-id')}`)).body;
    expect(file).toMatchObject({ filename: 'empty.txt', file_size: 0, file_type: 'text/plain' });
    expect((await head(alice, r.headers.get('location')!)).headers.get('upload-file-id')).toBe(file.id);
  });

  it('PATCH: a wrong offset is 409, a wrong Content-Type 415, a body past Upload-Length 413; nothing changes', async () => {
    const created = await create(alice, 10, { filename: 'ten.txt', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    expect((await patch(alice, location, 0, Buffer.from('abcd'))).status).toBe(204);
    const wrong = await patch(alice, location, 2, Buffer.from('xx'));
    expectTusError(wrong, 409, 'upload_offset_mismatch');
    expect(wrong.headers.get('upload-offset')).toBe('4');
    expectError(await patch(alice, location, 4, Buffer.from('ef'), { 'content-type': 'application/octet-stream' }), 415, 'unsupported_media_type');
    expectError(await patch(alice, location, 4, Buffer.from('efghijklmnop')), 413, 'file_too_large');
    expectError(await alice.call('PATCH', location, { headers: { ...TUS, 'content-type': OFFSET_STREAM }, body: Buffer.from('ef') }), 400, 'parameter_missing', 'Upload-Offset');
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('4');
    const done = await patch(alice, location, 4, Buffer.from('efghij'));
    const file = (await alice.get(`/v1/files/${done.headers.get('upload-file-id')}`)).body;
    expect((await fileBytes(alice, file)).toString()).toBe('abcdefghij');
  });

  it('DELETE ends an upload and removes its bytes', async () => {
    const blobsBefore = await storedBlobs();
    const created = await create(alice, 100, { filename: 'gone.txt', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    expect((await patch(alice, location, 0, Buffer.alloc(40, 1))).status).toBe(204);
    expect((await storedBlobs()).length).toBe(blobsBefore.length + 1);
    const r = await alice.del(location, { headers: TUS });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await head(alice, location)).status).toBe(404);
    expectError(await patch(alice, location, 40, Buffer.alloc(60, 1)), 404, 'resource_missing');
    expect(await storedBlobs()).toEqual(blobsBefore);
    expect(await unfinishedBlobs()).toEqual([]);
  });

  it("another user's upload is a missing one: HEAD, PATCH and DELETE answer 404 and change nothing", async () => {
    const created = await create(alice, 8, { filename: 'mine.txt', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    expect((await patch(alice, location, 0, Buffer.from('mine'))).status).toBe(204);
    expect((await head(bob, location)).status).toBe(404);
    expectError(await patch(bob, location, 4, Buffer.from('bob!')), 404, 'resource_missing');
    expectError(await bob.del(location), 404, 'resource_missing');
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('4');
    expect((await bob.call('HEAD', '/v1/uploads/AAAAAAAAAAAAAAAA')).status).toBe(404);
  });

  it('refuses before any byte is accepted: the same checks as POST /v1/files; nothing is stored', async () => {
    const blobsBefore = await storedBlobs();
    const rowsBefore = (await uploadRows()).length;
    const body = Buffer.from('some bytes');
    const bobs = await newConversation(bob, 'tus-bob');
    const cases: Array<[CallResult, number, string, string | undefined]> = [
      [await create(alice, body.length, { filename: 'x.txt', conversation_id: 'AAAAAAAAAAAAAAAA' }, { body }), 404, 'resource_missing', 'conversation_id'],
      [await create(alice, body.length, { filename: 'x.txt', conversation_id: bobs }, { body }), 404, 'resource_missing', 'conversation_id'],
      [await create(alice, body.length, { filename: 'x.txt', message_id: 'AAAAAAAAAAAAAAAA' }, { body }), 404, 'resource_missing', 'message_id'],
      [await create(alice, body.length, { filename: 'x.txt' }, { body }), 400, 'parameter_missing', 'conversation_id'],
      [await create(alice, body.length, { filename: 'x.txt', conversation_id: conversationId, message_id: 'AAAAAAAAAAAAAAAA' }, { body }), 400, 'parameter_invalid', 'message_id'],
      [await create(alice, body.length, { conversation_id: conversationId }, { body }), 400, 'parameter_missing', 'filename'],
      [await create(alice, body.length, { filename: 'tab\there.txt', conversation_id: conversationId }, { body }), 400, 'parameter_invalid', 'filename'],
      [await create(alice, body.length, { filename: 'dir/', conversation_id: conversationId }, { body }), 400, 'parameter_invalid', 'filename'],
      [await create(alice, body.length, { filename: 'evil\u202Etxt.exe', conversation_id: conversationId }, { body }), 400, 'parameter_invalid', 'filename'],
      [await create(alice, MAX + 1, { filename: 'big.bin', conversation_id: conversationId }, { body }), 413, 'file_too_large', 'Upload-Length'],
      [
        await create(alice, body.length, { filename: 'x.txt', conversation_id: conversationId }, { body, headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
        undefined,
      ],
      [await create(alice, body.length, { filename: 'x.txt', conversation_id: conversationId }, { headers: { 'upload-metadata': 'filename !!!' } }), 400, 'parameter_invalid', 'Upload-Metadata'],
      [await alice.post('/v1/uploads', { headers: { ...TUS, 'upload-metadata': metadata({ filename: 'x', conversation_id: conversationId }) } }), 400, 'parameter_missing', 'Upload-Length'],
    ];
    cases.forEach(([r, status, code, param], i) => {
      expect(r.status, `case ${i}: ${r.text}`).toBe(status);
      expectError(r, status, code, param);
    });
    expect((await uploadRows()).length).toBe(rowsBefore);
    expect(await storedBlobs()).toEqual(blobsBefore);
    expect(await unfinishedBlobs()).toEqual([]);
    // A body larger than the Upload-Length it comes with: 413, nothing kept.
    expectError(await create(alice, 4, { filename: 'x.txt', conversation_id: conversationId }, { body }), 413, 'file_too_large');
    expect(await storedBlobs()).toEqual(blobsBefore);
  });

  it('an Idempotency-Key on creation returns the same upload on a repeat', async () => {
    const key = `tus-${Date.now()}-${Math.random()}`;
    const fields = { filename: 'same.txt', conversation_id: conversationId };
    const first = await create(alice, 6, fields, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect((await patch(alice, first.headers.get('location')!, 0, Buffer.from('abc'))).status).toBe(204);
    const repeat = await create(alice, 6, fields, { headers: { 'idempotency-key': key } });
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.headers.get('location')).toBe(first.headers.get('location'));
    expect(repeat.headers.get('upload-offset')).toBe('3');
    expectError(await create(alice, 7, fields, { headers: { 'idempotency-key': key } }), 409, 'idempotency_conflict');
    expect((await uploadRows()).filter((r) => r.filename === 'same.txt')).toHaveLength(1);
  });

  // Expiry through the proxy (its own pass, its own database): tests/proxy/uploads-staging.test.ts.
  it.skipIf(viaProxy)('unfinished uploads expire: 410 once due, then the pass removes the record and the bytes', async () => {
    const blobsBefore = await storedBlobs();
    const created = await create(alice, 50, { filename: 'late.txt', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    const id = location.split('/').pop()!;
    expect((await patch(alice, location, 0, Buffer.alloc(20, 2))).status).toBe(204);
    expect((await storedBlobs()).length).toBe(blobsBefore.length + 1);
    const expiresAt = Math.floor(Date.parse(created.headers.get('upload-expires')!) / 1000);
    // Not yet due: the pass leaves it alone.
    await s.service.uploads.expire(expiresAt - 3600);
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('20');
    // Due (the clock played forward in the database): 410 until the pass comes.
    await (s.service.db as any).updateTable('uploads').set({ expires_at: 1 }).where('id', '=', id).execute();
    expect((await head(alice, location)).status).toBe(410);
    expectTusError(await patch(alice, location, 20, Buffer.alloc(30, 2)), 410, 'upload_expired');
    expect(await s.service.uploads.expire()).toBeGreaterThanOrEqual(1);
    expect((await head(alice, location)).status).toBe(404);
    expect(await storedBlobs()).toEqual(blobsBefore);
    expect(await unfinishedBlobs()).toEqual([]);
  });

  it.skipIf(viaProxy)('a finished upload keeps its record until its expiry; its file stays after that', async () => {
    const done = await create(alice, 3, { filename: 'kept.txt', conversation_id: conversationId }, { body: Buffer.from('abc') });
    const fileId = done.headers.get('upload-file-id')!;
    const location = done.headers.get('location')!;
    const expiresAt = Math.floor(Date.now() / 1000) + 25 * 3600;
    await s.service.uploads.expire(expiresAt);
    expect((await head(alice, location)).status).toBe(404);
    expect((await alice.get(`/v1/files/${fileId}`)).status).toBe(200);
  });

  it('two PATCHes of one upload at once never both write: one is refused with 409', async () => {
    const created = await create(alice, 100, { filename: 'race.bin', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    const id = location.split('/').pop()!;
    // The first PATCH sends 10 bytes and keeps its body open.
    const url = new URL(s.baseUrl + location);
    const first = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'PATCH',
      headers: { authorization: `Bearer ${s.tokens.alice}`, ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': '0', 'content-length': '100' },
    });
    const firstAnswer = new Promise<number | null>((resolve) => {
      first.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? null);
      });
      first.on('error', () => resolve(null));
    });
    first.write(Buffer.alloc(10, 7));
    // Until the first holds the upload (white-box: its lease in the shared database).
    for (;;) {
      const [row] = (await uploadRows()).filter((r) => r.id === id);
      if (row?.writer) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const second = await patch(alice, location, 0, Buffer.alloc(100, 8));
    expect(second.status).toBe(409);
    expect(['upload_offset_mismatch', 'upload_in_progress']).toContain(second.body.code);
    first.destroy();
    await firstAnswer;
    // Whatever the first stored stays, in order; the second wrote nothing.
    for (;;) {
      const [row] = (await uploadRows()).filter((r) => r.id === id);
      if (!row.writer) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const offset = Number((await head(alice, location)).headers.get('upload-offset'));
    expect(offset).toBeLessThanOrEqual(10);
    const rest = await patch(alice, location, offset, Buffer.alloc(100 - offset, 7));
    expect(rest.status, rest.text).toBe(204);
    const file = (await alice.get(`/v1/files/${rest.headers.get('upload-file-id')}`)).body;
    expect((await fileBytes(alice, file)).equals(Buffer.alloc(100, 7))).toBe(true);
  });

  it('a PATCH cut off mid-body keeps the bytes that arrived; the upload resumes from there', async () => {
    const blobsBefore = await storedBlobs();
    const created = await create(alice, 64, { filename: 'cut.bin', conversation_id: conversationId });
    const location = created.headers.get('location')!;
    const id = location.split('/').pop()!;
    const url = new URL(s.baseUrl + location);
    const cut = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'PATCH',
      headers: { authorization: `Bearer ${s.tokens.alice}`, ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': '0', 'content-length': '64' },
    });
    cut.on('error', () => {});
    cut.write(Buffer.alloc(24, 5));
    for (;;) {
      const [row] = (await uploadRows()).filter((r) => r.id === id);
      if (row?.writer) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The connection ends (FIN) 40 bytes short of what it announced: the 24 sent are all read.
    cut.socket!.end();
    for (;;) {
      const [row] = (await uploadRows()).filter((r) => r.id === id);
      if (!row.writer) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('24');
    expect((await storedBlobs()).length).toBe(blobsBefore.length + 1);
    const rest = await patch(alice, location, 24, Buffer.alloc(40, 6));
    const file = (await alice.get(`/v1/files/${rest.headers.get('upload-file-id')}`)).body;
    expect((await fileBytes(alice, file)).equals(Buffer.concat([Buffer.alloc(24, 5), Buffer.alloc(40, 6)]))).toBe(true);
    // The chunks' blobs went once the file was made: only the file's own is new (through the
    // proxy, the file is the upstream's: nothing stays staged).
    expect((await storedBlobs()).length).toBe(blobsBefore.length + (viaProxy ? 0 : 1));
  });

  it.runIf(onS3 && !twoInstances)('on the object store: the bytes go to the bucket, none to DATA_DIR, and expiry removes them', async () => {
    const blobsBefore = await storedBlobs();
    const created = await create(alice, 30, { filename: 's3.txt', conversation_id: conversationId }, { body: Buffer.alloc(12, 3) });
    const location = created.headers.get('location')!;
    const stored = await storedBlobs();
    expect(stored.length).toBe(blobsBefore.length + 1);
    const filesDir = path.join(s.dataDir, 'files');
    const onDisk = fs.existsSync(filesDir) ? fs.readdirSync(filesDir, { recursive: true }).filter((p) => fs.statSync(path.join(filesDir, String(p))).isFile()) : [];
    expect(onDisk).toEqual([]);
    expect(await unfinishedBlobs()).toEqual([]);
    // Its expiry as HEAD tells it: counted from its last write, which may be a second after the creation's answer.
    await s.service.uploads.expire(Math.floor(Date.parse((await head(alice, location)).headers.get('upload-expires')!) / 1000));
    expect((await head(alice, location)).status).toBe(404);
    expect(await storedBlobs()).toEqual(blobsBefore);
    expect(await unfinishedBlobs()).toEqual([]);
  });

  it.runIf(twoInstances)('two instances: an upload started on one continues on the other', async () => {
    const [a, b] = (s as TwoInstances).instances;
    const onA = client(() => a.baseUrl, s.tokens.alice);
    const onB = client(() => b.baseUrl, s.tokens.alice);
    const bytes = png(5000);
    const created = await create(onA, bytes.length, { filename: 'both.png', conversation_id: conversationId }, { body: bytes.subarray(0, 1000) });
    const location = created.headers.get('location')!;
    expect((await head(onB, location)).headers.get('upload-offset')).toBe('1000');
    expect((await patch(onB, location, 1000, bytes.subarray(1000, 3000))).status).toBe(204);
    expect((await head(onA, location)).headers.get('upload-offset')).toBe('3000');
    expectTusError(await patch(onA, location, 1000, bytes.subarray(1000, 3000)), 409, 'upload_offset_mismatch');
    const done = await patch(onA, location, 3000, bytes.subarray(3000));
    const fileId = done.headers.get('upload-file-id')!;
    expect((await head(onB, location)).headers.get('upload-file-id')).toBe(fileId);
    const file = (await onB.get(`/v1/files/${fileId}`)).body;
    expect(file).toMatchObject({ file_type: 'image/png', file_size: bytes.length });
    expect((await fileBytes(onB, file)).equals(bytes)).toBe(true);
  });

  // The store that fills is the upstream's; through the proxy the chunks are staged elsewhere.
  // A counting disk store (on the disk projects: the object store's projects inspect the bucket).
  describe.skipIf(viaProxy || onS3 || twoInstances)('the whole file in one request', () => {
    let w: TestServer;
    let store: CountingStore;
    beforeAll(async () => {
      w = await startTarget({ env: { MAX_UPLOAD_BYTES: String(MAX) }, store: (dir) => (store = new CountingStore(dir)) });
    });
    afterAll(() => w?.stop());

    it('is made into the file straight from the bytes received: one blob written, nothing copied', async () => {
      const c = client(() => w.baseUrl, w.tokens.alice);
      const conversation = await newConversation(c, 'tus-whole');
      const read = async (fileId: string) => {
        const file = (await c.get(`/v1/files/${fileId}`)).body;
        const u = new URL(file.file_url);
        return { file, bytes: Buffer.from(await (await fetch(w.baseUrl + u.pathname + u.search)).arrayBuffer()) };
      };
      // A creation carrying every byte.
      const bytes = png(20_000);
      let before = store.writes;
      const r = await create(c, bytes.length, { filename: 'whole.png', conversation_id: conversation }, { body: bytes });
      expect(r.status, r.text).toBe(201);
      expect(store.writes - before).toBe(1);
      let made = await read(r.headers.get('upload-file-id')!);
      expect(made.file).toMatchObject({ filename: 'whole.png', file_type: 'image/png', file_size: bytes.length });
      expect(made.bytes.equals(bytes)).toBe(true);
      // One PATCH from 0 to the end.
      const text = Buffer.from('the whole text, in one PATCH');
      const created = await create(c, text.length, { filename: 'whole.txt', conversation_id: conversation });
      before = store.writes;
      const done = await patch(c, created.headers.get('location')!, 0, text);
      expect(done.status, done.text).toBe(204);
      expect(store.writes - before).toBe(1);
      made = await read(done.headers.get('upload-file-id')!);
      expect(made.file).toMatchObject({ filename: 'whole.txt', file_type: 'text/plain', file_size: text.length });
      expect(made.bytes.equals(text)).toBe(true);
      // In pieces: each piece, then the file they make together.
      const pieces = png(9_000);
      const chunked = await create(c, pieces.length, { filename: 'pieces.png', conversation_id: conversation });
      before = store.writes;
      await patch(c, chunked.headers.get('location')!, 0, pieces.subarray(0, 4000));
      const last = await patch(c, chunked.headers.get('location')!, 4000, pieces.subarray(4000));
      expect(store.writes - before).toBe(3);
      expect((await read(last.headers.get('upload-file-id')!)).bytes.equals(pieces)).toBe(true);
      // Nothing left over but the three files' bytes.
      expect(await w.blobs.stored()).toHaveLength(3);
    });

    it('whose file cannot be made keeps its bytes as the upload\'s, as one in pieces does; DELETE removes them', async () => {
      const c = client(() => w.baseUrl, w.tokens.alice);
      const conversation = await newConversation(c, 'tus-whole-gone');
      const bytes = Buffer.from('bytes for a conversation deleted meanwhile');
      const created = await create(c, bytes.length, { filename: 'gone.txt', conversation_id: conversation });
      const location = created.headers.get('location')!;
      const stored = await w.blobs.stored();
      // Its conversation gone as the file is made (a deletion between the upload's checks and the
      // file's row; deleting it before ends the upload too — tests/api/uploads-limits.test.ts):
      // played by pointing the upload at a conversation that does not exist.
      await (w.service.db as any).updateTable('uploads').set({ conversation_id: 'AAAAAAAAAAAAAAAA' }).where('id', '=', location.split('/').pop()).execute();
      const r = await patch(c, location, 0, bytes);
      expectTusError(r, 404, 'resource_missing');
      expect(r.body.param).toBe('conversation_id');
      // Every byte is the upload's (not lost, not a file): the store holds them. A HEAD, finding
      // every byte stored and no file, tries to make it and answers why it cannot: the same 404.
      const h = await head(c, location);
      expect(h.status).toBe(404);
      expect(h.headers.get('upload-file-id')).toBeNull();
      expect((await w.blobs.stored()).filter((k) => !stored.includes(k))).toHaveLength(1);
      expect((await c.del(location)).status).toBe(204);
      expect(await w.blobs.stored()).toEqual(stored);
    });
  });

  describe.skipIf(viaProxy)('on a full store', () => {
    let f: TestServer;
    let store: FillableStore;
    beforeAll(async () => {
      // Its log is kept, not printed: the full store is logged as it should be.
      f = await startTarget({ env: { MAX_UPLOAD_BYTES: String(MAX) }, log: capturingLog().log, store: (dir) => (store = new FillableStore(dir)) });
    });
    afterAll(() => f?.stop());

    it('a PATCH that cannot be stored answers 507 (retryable); nothing is half-stored, the offset stays', async () => {
      const c = client(() => f.baseUrl, f.tokens.alice);
      const conversation = await newConversation(c, 'tus-full');
      const created = await create(c, 20, { filename: 'full.txt', conversation_id: conversation });
      const location = created.headers.get('location')!;
      expect((await patch(c, location, 0, Buffer.from('0123456789'))).status).toBe(204);
      const before = await f.blobs.stored();
      store.full = true;
      const r = await patch(c, location, 10, Buffer.from('abcdefghij'));
      expectError(r, 507, 'insufficient_storage');
      expect(r.headers.get('retry-after')).not.toBeNull();
      store.full = false;
      expect(await f.blobs.stored()).toEqual(before);
      expect((await head(c, location)).headers.get('upload-offset')).toBe('10');
      const done = await patch(c, location, 10, Buffer.from('abcdefghij'));
      expect(done.status, done.text).toBe(204);
      const file = (await c.get(`/v1/files/${done.headers.get('upload-file-id')}`)).body;
      const u = new URL(file.file_url);
      expect(Buffer.from(await (await fetch(f.baseUrl + u.pathname + u.search)).arrayBuffer()).toString()).toBe('0123456789abcdefghij');
    });
  });

  // The start-up sweep removes stored bytes no row points at; an unfinished upload's are not such.
  describe('across a restart, with the sweep of orphaned bytes', () => {
    let r: TestServer;
    beforeAll(async () => {
      r = await startUploadsTarget({ env: { MAX_UPLOAD_BYTES: String(MAX) }, sweepGraceMs: 0 });
    });
    afterAll(() => r?.stop());

    it('an unfinished upload survives a restart and its sweep, and finishes', async () => {
      const c = client(() => r.baseUrl, r.tokens.alice);
      const conversation = await newConversation(c, 'tus-restart');
      const bytes = png(3000);
      const created = await create(c, bytes.length, { filename: 'later.png', conversation_id: conversation }, { body: bytes.subarray(0, 1200) });
      const location = created.headers.get('location')!;
      await r.restart();
      expect((await head(c, location)).headers.get('upload-offset')).toBe('1200');
      const done = await patch(c, location, 1200, bytes.subarray(1200));
      expect(done.status, done.text).toBe(204);
      const file = (await c.get(`/v1/files/${done.headers.get('upload-file-id')}`)).body;
      const u = new URL(file.file_url);
      const got = Buffer.from(await (await fetch(r.baseUrl + u.pathname + u.search)).arrayBuffer());
      expect(got.equals(bytes)).toBe(true);
    });
  });
});
