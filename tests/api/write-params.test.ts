// Unknown parameters on writes are refused with the param named, never ignored: a stray query
// parameter on POST/PUT/DELETE, and a field named like an Object.prototype member (__proto__,
// constructor, …) in a JSON, form or multipart body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';
import { field, filePart, rawMultipart } from './raw-multipart';

let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 'write-params' } })).body.id;
});
afterAll(() => s.stop());

const storedBlobs = () => s.blobs.stored();
const tempFiles = () => s.blobs.unfinished();
const allConversations = async () => (await alice.get('/v1/conversations?limit=100')).body.data as any[];
const filesOf = async (id: string) => (await alice.get(`/v1/files?conversation_id=${id}&limit=100`)).body.data as any[];

describe('unknown query parameters on writes: 400 parameter_unknown, nothing changes', () => {
  it('PUT /v1/conversations/:id?is_pinned=true', async () => {
    const before = (await alice.get(`/v1/conversations/${conversationId}`)).body;
    expectError(await alice.put(`/v1/conversations/${conversationId}?is_pinned=true`), 400, 'parameter_unknown', 'is_pinned');
    expectError(
      await alice.put(`/v1/conversations/${conversationId}?is_pinned=true`, { json: { is_muted: true } }),
      400,
      'parameter_unknown',
      'is_pinned',
    );
    expect((await alice.get(`/v1/conversations/${conversationId}`)).body).toEqual(before);
  });

  it('POST /v1/conversations?…', async () => {
    const before = await allConversations();
    expectError(await alice.post('/v1/conversations?expand=files', { json: { contact_id: 'qp-create' } }), 400, 'parameter_unknown', 'expand');
    // The body's own field given in the query instead does not count either.
    expectError(await alice.post('/v1/conversations?contact_id=qp-create', { json: {} }), 400, 'parameter_unknown', 'contact_id');
    expect(await allConversations()).toEqual(before);
  });

  it('DELETE /v1/conversations/:id?…', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'qp-delete' } })).body;
    expectError(await alice.del(`/v1/conversations/${c.id}?force=1`), 400, 'parameter_unknown', 'force');
    expect((await alice.get(`/v1/conversations/${c.id}`)).body).toEqual(c);
  });

  it('POST /v1/files?… stores no row and no bytes', async () => {
    const blobs = (await storedBlobs()).length;
    const before = await filesOf(conversationId);
    const r = await alice.upload({ conversation_id: conversationId }, { name: 'q.txt', bytes: 'q' });
    expect(r.status).toBe(201);
    const form = new FormData();
    form.append('conversation_id', conversationId);
    form.append('file', new Blob(['x']), 'x.txt');
    expectError(await alice.post('/v1/files?message_id=AAAAAAAAAAAAAAAA', { multipart: form }), 400, 'parameter_unknown', 'message_id');
    expect((await filesOf(conversationId)).length).toBe(before.length + 1);
    expect((await storedBlobs()).length).toBe(blobs + 1);
    expect(await tempFiles()).toEqual([]);
  });

  it('PUT and DELETE /v1/files/:id?…', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'keep-me.txt', bytes: 'k' })).body;
    expectError(await alice.put(`/v1/files/${f.id}?filename=other.txt`, { json: { filename: 'renamed.txt' } }), 400, 'parameter_unknown', 'filename');
    expectError(await alice.del(`/v1/files/${f.id}?purge=true`), 400, 'parameter_unknown', 'purge');
    expect((await alice.get(`/v1/files/${f.id}`)).body).toEqual(f);
  });

  it('an empty query string is no parameter', async () => {
    expect((await alice.put(`/v1/conversations/${conversationId}?`, { json: {} })).status).toBe(200);
  });
});

describe('fields named like Object.prototype members are unknown fields, in every body kind', () => {
  const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

  it('JSON bodies (an own "__proto__" key, as JSON.parse makes it)', async () => {
    const json = (text: string) => ({ body: text, headers: { 'content-type': 'application/json' } });
    const before = (await alice.get(`/v1/conversations/${conversationId}`)).body;
    expectError(await alice.put(`/v1/conversations/${conversationId}`, json('{"__proto__": {"is_pinned": true}}')), 400, 'parameter_unknown', '__proto__');
    expectError(await alice.put(`/v1/conversations/${conversationId}`, json('{"is_muted": true, "__proto__": 1}')), 400, 'parameter_unknown', '__proto__');
    expectError(await alice.post('/v1/conversations', json('{"contact_id": "proto-json", "__proto__": {"group_id": "g"}}')), 400, 'parameter_unknown', '__proto__');
    for (const name of names.slice(1)) {
      expectError(await alice.put(`/v1/conversations/${conversationId}`, { json: { [name]: 'x' } }), 400, 'parameter_unknown', name);
    }
    expect((await alice.get(`/v1/conversations/${conversationId}`)).body).toEqual(before);
    expect((await allConversations()).some((c) => c.contact_id === 'proto-json')).toBe(false);
  });

  it('form bodies', async () => {
    const rename = (await alice.upload({ conversation_id: conversationId }, { name: 'form-proto.txt', bytes: 'f' })).body;
    const before = (await alice.get(`/v1/conversations/${conversationId}`)).body; // after the upload's activity
    for (const name of names) {
      const body = `${encodeURIComponent(name)}=1&is_muted=true`;
      const r = await alice.put(`/v1/conversations/${conversationId}`, { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expectError(r, 400, 'parameter_unknown', name);
      const created = await alice.post('/v1/conversations', {
        body: `contact_id=proto-form&${encodeURIComponent(name)}=x`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectError(created, 400, 'parameter_unknown', name);
    }
    expectError(
      await alice.put(`/v1/files/${rename.id}`, { body: 'filename=x.txt&__proto__=y', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      400,
      'parameter_unknown',
      '__proto__',
    );
    expect((await alice.get(`/v1/files/${rename.id}`)).body).toEqual(rename);
    expect((await alice.get(`/v1/conversations/${conversationId}`)).body).toEqual(before);
    expect((await allConversations()).some((c) => c.contact_id === 'proto-form')).toBe(false);
  });

  it('multipart field bodies', async () => {
    const before = (await alice.get(`/v1/conversations/${conversationId}`)).body;
    for (const name of names) {
      const { body, contentType } = rawMultipart([field(name, 'x'), field('is_muted', 'true')]);
      expectError(await alice.put(`/v1/conversations/${conversationId}`, { body, headers: { 'content-type': contentType } }), 400, 'parameter_unknown', name);
    }
    expect((await alice.get(`/v1/conversations/${conversationId}`)).body).toEqual(before);
  });

  it('upload fields: refused, no row, no bytes', async () => {
    const blobs = (await storedBlobs()).length;
    const rows = (await filesOf(conversationId)).length;
    for (const name of names) {
      for (const order of ['before', 'after'] as const) {
        const parts = [field('conversation_id', conversationId), field(name, 'x'), filePart('proto.txt', 'p', 'text/plain')];
        const { body, contentType } = rawMultipart(order === 'before' ? parts : parts.reverse());
        expectError(await alice.post('/v1/files', { body, headers: { 'content-type': contentType } }), 400, 'parameter_unknown', name);
      }
    }
    expect((await filesOf(conversationId)).length).toBe(rows);
    expect((await storedBlobs()).length).toBe(blobs);
    expect(await tempFiles()).toEqual([]);
  });
});
