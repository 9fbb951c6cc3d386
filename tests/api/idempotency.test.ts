import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

/** Stored blobs, through the store's own listing (disk or object store). */
const blobs = async () => (await s.blobs.stored()).length;
const key = (k: string) => ({ 'idempotency-key': k });

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 'idem' } })).body.id;
});
afterAll(() => s.stop());

describe('Idempotency-Key', () => {
  it('a repeated create answers the first response (replayed) and creates one resource', async () => {
    const first = await alice.post('/v1/conversations', { json: { group_id: 'idem-group' }, headers: key('op-create-1') });
    const again = await alice.post('/v1/conversations', { json: { group_id: 'idem-group' }, headers: key('op-create-1') });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await alice.get('/v1/conversations?group_id=idem-group');
    expect(list.body.data.length).toBe(1);
  });

  it('a repeated upload with a new multipart boundary stores one file', async () => {
    const before = await blobs();
    const send = () => alice.upload({ conversation_id: conversationId }, { name: 'scan.pdf', bytes: '%PDF same bytes' }, { headers: key('op-upload-1') });
    const a = await send();
    const b = await send();
    expect(a.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(await blobs()).toBe(before + 1);
    const files = await alice.get(`/v1/files?conversation_id=${conversationId}&limit=100`);
    expect(files.body.data.filter((f: any) => f.filename === 'scan.pdf').length).toBe(1);
    expect(await s.blobs.unfinished()).toEqual([]);
  });

  it('concurrent repeats run once', async () => {
    const before = await blobs();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        alice.upload({ conversation_id: conversationId }, { name: 'burst.txt', bytes: 'burst' }, { headers: key('op-burst') }),
      ),
    );
    const ids = new Set(results.map((r) => r.body.id));
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(ids.size).toBe(1);
    expect(await blobs()).toBe(before + 1);
  });

  it('the same key on a different body, method or path: 409 idempotency_conflict', async () => {
    await alice.post('/v1/conversations', { json: { contact_id: 'idem-a' }, headers: key('op-conflict') });
    const otherBody = await alice.post('/v1/conversations', { json: { contact_id: 'idem-b' }, headers: key('op-conflict') });
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.code).toBe('idempotency_conflict');
    const otherPath = await alice.put(`/v1/conversations/${conversationId}`, { json: { is_pinned: true }, headers: key('op-conflict') });
    expect(otherPath.body.code).toBe('idempotency_conflict');
    expect((await alice.get('/v1/conversations?limit=100')).body.data.some((c: any) => c.contact_id === 'idem-b')).toBe(false);
    const otherFile = await alice.upload({ conversation_id: conversationId }, { name: 'scan.pdf', bytes: '%PDF other bytes' }, { headers: key('op-upload-1') });
    expect(otherFile.body.code).toBe('idempotency_conflict');
  });

  it('the same fields sent as JSON or as a form are the same request', async () => {
    const a = await alice.put(`/v1/conversations/${conversationId}`, { json: { is_muted: true }, headers: key('op-mute') });
    const b = await alice.put(`/v1/conversations/${conversationId}`, { form: { is_muted: 'true' }, headers: key('op-mute') });
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
  });

  it('a refusal is replayed too, and left nothing behind', async () => {
    const a = await alice.put(`/v1/conversations/${conversationId}`, { json: { is_pinned: 'nope' }, headers: key('op-bad') });
    const b = await alice.put(`/v1/conversations/${conversationId}`, { json: { is_pinned: 'nope' }, headers: key('op-bad') });
    expect(a.status).toBe(400);
    expect(b.status).toBe(400);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a repeated delete answers 204 again instead of 404', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'idem-del' } })).body;
    expect((await alice.del(`/v1/conversations/${c.id}`, { headers: key('op-del') })).status).toBe(204);
    const again = await alice.del(`/v1/conversations/${c.id}`, { headers: key('op-del') });
    expect(again.status).toBe(204);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await alice.del(`/v1/conversations/${c.id}`)).status).toBe(404);
  });

  it('keys are per user', async () => {
    const bob = client(() => s.baseUrl, s.tokens.bob);
    const a = await alice.post('/v1/conversations', { json: { contact_id: 'per-user' }, headers: key('op-shared') });
    const b = await bob.post('/v1/conversations', { json: { contact_id: 'per-user' }, headers: key('op-shared') });
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('without a key, two uploads are two files; a malformed key is 400', async () => {
    const a = await alice.upload({ conversation_id: conversationId }, { name: 'twice.txt', bytes: 't' });
    const b = await alice.upload({ conversation_id: conversationId }, { name: 'twice.txt', bytes: 't' });
    expect(a.body.id).not.toBe(b.body.id);
    const bad = await alice.post('/v1/conversations', { json: { contact_id: 'k' }, headers: key('x'.repeat(256)) });
    expect(bad.status).toBe(400);
    expect(bad.body.param).toBe('Idempotency-Key');
  });
});

describe('a server without idempotency support (PARLEY_DISABLE_IDEMPOTENCY=1)', () => {
  it('ignores the header: a repeat runs again', async () => {
    const plain = await startTarget({ env: { PARLEY_DISABLE_IDEMPOTENCY: '1' } });
    try {
      const u = client(() => plain.baseUrl, plain.tokens.alice);
      const c = (await u.post('/v1/conversations', { json: { contact_id: 'p' } })).body;
      const send = () => u.upload({ conversation_id: c.id }, { name: 'dup.txt', bytes: 'd' }, { headers: key('same') });
      const a = await send();
      const b = await send();
      expect(b.body.id).not.toBe(a.body.id);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await plain.stop();
    }
  });
});
