import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileObject, FilePage } from '../../lib/schemas';
import { client, expectError } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

/** Every stored blob, through the store's own listing (disk or object store). */
const storedBlobs = () => s.blobs.stored();
/** What unfinished writes left: temp files on disk, incomplete multipart uploads in a bucket. */
const unfinishedWrites = () => s.blobs.unfinished();

/** The asset URL as a path on the server under test (file_url carries the server's own origin). */
const assetPath = (fileUrl: string) => {
  const u = new URL(fileUrl);
  return u.pathname + u.search;
};

beforeAll(async () => {
  s = await startTarget({ env: { MAX_UPLOAD_BYTES: String(1024 * 1024) } });
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 'files-contact' } })).body.id;
});
afterAll(() => s.stop());

describe('upload', () => {
  it('stores a file into a conversation (new message) and raises last_active_at', async () => {
    const before = (await alice.get(`/v1/conversations/${conversationId}`)).body;
    const r = await alice.upload({ conversation_id: conversationId }, { name: 'report.pdf', bytes: '%PDF-1.7 body', type: 'application/pdf' });
    expect(r.status).toBe(201);
    const f = FileObject.parse(r.body);
    expect(Object.keys(r.body).sort()).toEqual(['created_at', 'file_size', 'file_type', 'file_url', 'filename', 'id', 'message_id']);
    expect(f).toMatchObject({ filename: 'report.pdf', file_type: 'application/pdf', file_size: 13 });
    const after = (await alice.get(`/v1/conversations/${conversationId}`)).body;
    expect(before.last_active_at).toBeNull();
    expect(after.last_active_at).toBeGreaterThanOrEqual(f.created_at);
    const got = await alice.get(`/v1/files/${f.id}`);
    expect(got.body).toEqual(f);
  });

  it('attaches to an existing message with message_id; fields may come after the file part', async () => {
    const first = (await alice.upload({ conversation_id: conversationId }, { name: 'a.txt', bytes: 'a' })).body;
    const form = new FormData();
    form.append('file', new Blob(['second']), 'b.txt');
    form.append('message_id', first.message_id);
    const r = await alice.post('/v1/files', { multipart: form });
    expect(r.status).toBe(201);
    expect(r.body.message_id).toBe(first.message_id);
  });

  it('file_type: declared type, else sniffed from bytes, else from the name, else octet-stream', async () => {
    const up = (name: string, bytes: Uint8Array | string, type?: string) =>
      alice.upload({ conversation_id: conversationId }, { name, bytes, type }).then((r) => r.body.file_type);
    expect(await up('scan.bin', '%PDF-1.4', 'application/octet-stream')).toBe('application/pdf');
    expect(await up('photo', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe('image/png');
    expect(await up('patient.json', '{"resourceType":"Patient","id":"1"}')).toBe('application/fhir+json');
    expect(await up('notes.csv', 'a,b\n1,2')).toBe('text/csv');
    expect(await up('data.dat', 'opaque')).toBe('application/octet-stream');
    expect(await up('x.txt', 'x', 'text/plain; charset=utf-8')).toBe('text/plain');
    expect(await up('x.txt', 'x', 'not a type')).toBe('text/plain');
  });

  it('removes any path from the part name and keeps UTF-8 names', async () => {
    const a = await alice.upload({ conversation_id: conversationId }, { name: 'C:\\fakepath\\scan.pdf', bytes: '%PDF' });
    expect(a.body.filename).toBe('scan.pdf');
    const b = await alice.upload({ conversation_id: conversationId }, { name: 'dir/sub/Résumé – ü.txt', bytes: 'x' });
    expect(b.body.filename).toBe('Résumé – ü.txt');
  });

  it('refuses bad filenames, missing parts, unknown and duplicate fields with 400 and stores nothing', async () => {
    const blobs = (await storedBlobs()).length;
    const bad = async (fields: Record<string, string>, file: any, code: string, param?: string) =>
      expectError(await alice.upload(fields, file), 400, code, param);
    await bad({ conversation_id: conversationId }, { name: 'a'.repeat(256), bytes: 'x' }, 'parameter_invalid', 'file');
    await bad({ conversation_id: conversationId }, { name: 'tab\there.txt', bytes: 'x' }, 'parameter_invalid', 'file');
    await bad({ conversation_id: conversationId }, { name: '..', bytes: 'x' }, 'parameter_invalid', 'file');
    await bad({ conversation_id: conversationId }, null, 'parameter_missing', 'file');
    await bad({}, { name: 'a.txt', bytes: 'x' }, 'parameter_missing', 'conversation_id');
    await bad({ conversation_id: conversationId, message_id: 'AAAAAAAAAAAAAAAA' }, { name: 'a.txt', bytes: 'x' }, 'parameter_invalid');
    await bad({ conversation_id: conversationId, extra: '1' }, { name: 'a.txt', bytes: 'x' }, 'parameter_unknown', 'extra');
    await bad({ conversation_id: conversationId, file: 'text' }, null, 'parameter_invalid', 'file');
    const two = new FormData();
    two.append('conversation_id', conversationId);
    two.append('file', new Blob(['1']), 'one.txt');
    two.append('file', new Blob(['2']), 'two.txt');
    expectError(await alice.post('/v1/files', { multipart: two }), 400, 'parameter_invalid', 'file');
    expect((await storedBlobs()).length).toBe(blobs);
    expect(await unfinishedWrites()).toEqual([]);
  });

  it('unknown conversation or message: 404, nothing stored', async () => {
    const blobs = (await storedBlobs()).length;
    expectError(await alice.upload({ conversation_id: 'AAAAAAAAAAAAAAAA' }, { name: 'a.txt', bytes: 'x' }), 404, 'resource_missing', 'conversation_id');
    expectError(await alice.upload({ message_id: 'AAAAAAAAAAAAAAAA' }, { name: 'a.txt', bytes: 'x' }), 404, 'resource_missing', 'message_id');
    expect((await storedBlobs()).length).toBe(blobs);
  });

  it('not multipart: 415; malformed multipart: 400', async () => {
    expectError(await alice.post('/v1/files', { json: { conversation_id: conversationId } }), 415, 'unsupported_media_type');
    expectError(
      await alice.post('/v1/files', {
        body: `--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated`,
        headers: { 'content-type': 'multipart/form-data; boundary=b' },
      }),
      400,
      'parameter_invalid',
    );
    expectError(await alice.post('/v1/files', { body: 'x', headers: { 'content-type': 'multipart/form-data' } }), 400, 'parameter_invalid');
    expect(await unfinishedWrites()).toEqual([]);
  });

  it('over the size limit: 413 file_too_large, no row, no bytes', async () => {
    const rowsBefore = (await alice.get(`/v1/files?conversation_id=${conversationId}&limit=100`)).body.data.length;
    const blobs = (await storedBlobs()).length;
    const r = await alice.upload({ conversation_id: conversationId }, { name: 'big.bin', bytes: new Uint8Array(1024 * 1024 + 1) });
    expectError(r, 413, 'file_too_large');
    const exact = await alice.upload({ conversation_id: conversationId }, { name: 'exact.bin', bytes: new Uint8Array(1024 * 1024) });
    expect(exact.status).toBe(201);
    expect(exact.body.file_size).toBe(1024 * 1024);
    const rowsAfter = (await alice.get(`/v1/files?conversation_id=${conversationId}&limit=100`)).body.data;
    expect(rowsAfter.length).toBe(rowsBefore + 1);
    expect(rowsAfter.some((f: any) => f.filename === 'big.bin')).toBe(false);
    expect((await storedBlobs()).length).toBe(blobs + 1);
    expect(await unfinishedWrites()).toEqual([]);
  });
});

describe('asset host', () => {
  it('serves the bytes with type, length, ETag, safety headers; supports HEAD, Range and 304', async () => {
    const body = 'The quick brown fox jumps over the lazy dog';
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'fox.txt', bytes: body })).body;
    const url = assetPath(f.file_url);
    const anon = client(() => s.baseUrl);
    const r = await anon.get(url);
    expect(r.status).toBe(200);
    expect(r.text).toBe(body);
    expect(r.headers.get('content-type')).toBe('text/plain');
    expect(r.headers.get('content-length')).toBe(String(body.length));
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('content-security-policy')).toBe('sandbox');
    expect(r.headers.get('content-disposition')).toMatch(/^inline/);
    // Patient data: never kept by the browser's (or a shared) HTTP cache.
    expect(r.headers.get('cache-control')).toBe('private, no-store');
    // And neither is any /v1 answer, the OpenAPI document included.
    for (const target of [`/v1/files/${f.id}`, '/v1/conversations', '/v1/openapi.json']) {
      expect((await alice.get(target)).headers.get('cache-control'), target).toBe('no-store');
    }
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);

    const head = await anon.call('HEAD', url);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-length')).toBe(String(body.length));

    const part = await anon.get(url, { headers: { range: 'bytes=4-8' } });
    expect(part.status).toBe(206);
    expect(part.text).toBe('quick');
    expect(part.headers.get('content-range')).toBe(`bytes 4-8/${body.length}`);
    const suffix = await anon.get(url, { headers: { range: 'bytes=-3' } });
    expect(suffix.text).toBe('dog');
    const open = await anon.get(url, { headers: { range: 'bytes=40-' } });
    expect(open.text).toBe('dog');
    const beyond = await anon.get(url, { headers: { range: 'bytes=999-' } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${body.length}`);
    const stale = await anon.get(url, { headers: { range: 'bytes=0-2', 'if-range': '"other"' } });
    expect(stale.status).toBe(200);

    const cached = await anon.get(url, { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
  });

  it('serves HTML, SVG, XML and JS as attachments (JS as octet-stream: see uploaded-types.test.ts)', async () => {
    for (const [name, type, served] of [
      ['page.html', 'text/html', 'text/html'],
      ['image.svg', 'image/svg+xml', 'image/svg+xml'],
      ['doc.xml', 'application/xml', 'application/xml'],
      ['code.js', 'text/javascript', 'application/octet-stream'],
    ]) {
      const f = (await alice.upload({ conversation_id: conversationId }, { name: name!, bytes: '<x/>', type })).body;
      const r = await client(() => s.baseUrl).get(assetPath(f.file_url));
      expect(r.headers.get('content-disposition'), name).toMatch(/^attachment/);
      expect(r.headers.get('content-type')).toBe(served);
    }
  });

  it('a bad or missing signature is 404; other methods 405', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'sig.txt', bytes: 'x' })).body;
    const u = new URL(f.file_url);
    const anon = client(() => s.baseUrl);
    expectError(await anon.get(`${u.pathname}?id=${u.searchParams.get('id')}`), 404, 'resource_missing');
    expectError(await anon.get(`${u.pathname}?id=${u.searchParams.get('id')}&sig=AAAA${u.searchParams.get('sig')!.slice(4)}`), 404, 'resource_missing');
    expectError(await anon.get(`/files/other.txt${u.search}`), 404, 'resource_missing');
    expectError(await anon.post(u.pathname + u.search, { body: 'x' }), 405, 'method_not_allowed');
  });

  it('rename changes file_url; the old URL stops working, the new one works', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'old name.txt', bytes: 'content' })).body;
    const r = await alice.put(`/v1/files/${f.id}`, { json: { filename: 'new name ü.txt' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...f, filename: 'new name ü.txt', file_url: r.body.file_url });
    expect(r.body.file_url).not.toBe(f.file_url);
    const anon = client(() => s.baseUrl);
    expect((await anon.get(assetPath(f.file_url))).status).toBe(404);
    const fresh = await anon.get(assetPath(r.body.file_url));
    expect(fresh.status).toBe(200);
    expect(fresh.text).toBe('content');
    expect((await alice.get(`/v1/files/${f.id}`)).body.file_url).toBe(r.body.file_url);
  });

  it('rename refuses bad names and other fields, changing nothing', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'keep.txt', bytes: 'k' })).body;
    const path = `/v1/files/${f.id}`;
    expectError(await alice.put(path, { json: { filename: 'a/b.txt' } }), 400, 'parameter_invalid', 'filename');
    expectError(await alice.put(path, { json: { filename: '' } }), 400, 'parameter_invalid', 'filename');
    expectError(await alice.put(path, { json: { filename: 'nul\u0000.txt' } }), 400, 'parameter_invalid', 'filename');
    expectError(await alice.put(path, { json: {} }), 400, 'parameter_missing', 'filename');
    expectError(await alice.put(path, { json: { filename: 'ok.txt', file_type: 'text/html' } }), 400, 'parameter_unknown', 'file_type');
    expect((await alice.get(path)).body).toEqual(f);
  });
});

describe('delete', () => {
  it('deleting a file removes its bytes and makes its URL 404', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'gone.txt', bytes: 'bye' })).body;
    const blobs = (await storedBlobs()).length;
    const r = await alice.del(`/v1/files/${f.id}`);
    expect(r.status).toBe(204);
    expect((await storedBlobs()).length).toBe(blobs - 1);
    expectError(await alice.get(`/v1/files/${f.id}`), 404, 'resource_missing');
    expect((await client(() => s.baseUrl).get(assetPath(f.file_url))).status).toBe(404);
  });

  it('deleting a conversation removes its messages, files and their bytes on disk', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'doomed' } })).body;
    const keep = (await alice.upload({ conversation_id: conversationId }, { name: 'keep.txt', bytes: 'keep' })).body;
    const before = (await storedBlobs()).length;
    const files = [];
    for (let i = 0; i < 3; i++) files.push((await alice.upload({ conversation_id: c.id }, { name: `f${i}.txt`, bytes: `bytes ${i}` })).body);
    expect((await storedBlobs()).length).toBe(before + 3);
    expect((await alice.del(`/v1/conversations/${c.id}`)).status).toBe(204);
    expect((await storedBlobs()).length).toBe(before);
    for (const f of files) {
      expect((await alice.get(`/v1/files/${f.id}`)).status).toBe(404);
      expect((await client(() => s.baseUrl).get(assetPath(f.file_url))).status).toBe(404);
    }
    expect((await alice.get(`/v1/files/${keep.id}`)).status).toBe(200);
    // its messages went too: the message id can no longer take attachments
    expectError(await alice.upload({ message_id: files[0].message_id }, { name: 'late.txt', bytes: 'x' }), 404, 'resource_missing', 'message_id');
  });
});

describe('list', () => {
  it('lists files newest first, filters by conversation, 404 for a conversation that is not the user\'s', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'list-files' } })).body;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await alice.upload({ conversation_id: c.id }, { name: `l${i}.txt`, bytes: 'l' })).body.id);
    const r = await alice.get(`/v1/files?conversation_id=${c.id}`);
    expect(r.status).toBe(200);
    FilePage.parse(r.body);
    expect(r.body.data.map((f: any) => f.id)).toEqual(ids.reverse());
    expect(r.body.has_more).toBe(false);
    const all = await alice.get('/v1/files?limit=2');
    expect(all.body.data.map((f: any) => f.id)).toEqual(ids.slice(0, 2));
    expect(all.body.has_more).toBe(true);
    expectError(await alice.get('/v1/files?conversation_id=AAAAAAAAAAAAAAAA'), 404, 'resource_missing', 'conversation_id');
    expectError(await alice.get('/v1/files?conversation_id=bad'), 404, 'resource_missing', 'conversation_id');
  });
});
