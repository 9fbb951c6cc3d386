import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conversation, ConversationPage } from '../../lib/schemas';
import { client, expectError } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
});
afterAll(() => s.stop());


describe('create', () => {
  it('creates with a contact (JSON) and answers 201 with all ten fields', async () => {
    const r = await alice.post('/v1/conversations', { json: { contact_id: 'patient-001' } });
    expect(r.status).toBe(201);
    const c = Conversation.parse(r.body);
    expect(Object.keys(r.body).sort()).toEqual(
      ['archived_at', 'contact_id', 'created_at', 'group_id', 'id', 'is_muted', 'is_pinned', 'last_active_at', 'last_opened_at', 'pinned_message_id'],
    );
    expect(c).toMatchObject({ contact_id: 'patient-001', group_id: null, is_pinned: false, is_muted: false, archived_at: null });
    expect(Math.abs(c.created_at - Date.now() / 1000)).toBeLessThan(5);
  });

  it('creates with a group (form and multipart bodies)', async () => {
    const form = await alice.post('/v1/conversations', { form: { group_id: 'ward_7' } });
    expect(form.status).toBe(201);
    expect(form.body.group_id).toBe('ward_7');
    const fd = new FormData();
    fd.append('group_id', 'ward-8');
    const multi = await alice.post('/v1/conversations', { multipart: fd });
    expect(multi.status).toBe(201);
    expect(multi.body.group_id).toBe('ward-8');
  });

  it('one conversation per contact and per group: 409 conversation_exists with existing_id', async () => {
    const first = await alice.post('/v1/conversations', { json: { contact_id: 'dup-contact' } });
    const again = await alice.post('/v1/conversations', { form: { contact_id: 'dup-contact' } });
    expectError(again, 409, 'conversation_exists');
    expect(again.body.existing_id).toBe(first.body.id);
    const g1 = await alice.post('/v1/conversations', { json: { group_id: 'dup-group' } });
    const g2 = await alice.post('/v1/conversations', { json: { group_id: 'dup-group' } });
    expectError(g2, 409, 'conversation_exists');
    expect(g2.body.existing_id).toBe(g1.body.id);
  });

  it('neither or both of contact_id/group_id: 400', async () => {
    expectError(await alice.post('/v1/conversations', { json: {} }), 400, 'parameter_missing', 'contact_id');
    expectError(await alice.post('/v1/conversations', { json: { contact_id: 'a', group_id: 'b' } }), 400, 'parameter_invalid');
  });

  it('invalid ids, unknown fields, wrong types: 400 with the param', async () => {
    expectError(await alice.post('/v1/conversations', { json: { contact_id: 'has space' } }), 400, 'parameter_invalid', 'contact_id');
    expectError(await alice.post('/v1/conversations', { json: { contact_id: 'x'.repeat(65) } }), 400, 'parameter_invalid', 'contact_id');
    expectError(await alice.post('/v1/conversations', { json: { contact_id: 42 } }), 400, 'parameter_invalid', 'contact_id');
    expectError(await alice.post('/v1/conversations', { json: { contact_id: 'ok', colour: 'red' } }), 400, 'parameter_unknown', 'colour');
    expectError(await alice.post('/v1/conversations', { body: 'contact_id=a&contact_id=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 400, 'parameter_invalid', 'contact_id');
  });

  it('malformed JSON and multipart: 400, never 500', async () => {
    expectError(await alice.post('/v1/conversations', { body: '{"contact_id":', headers: { 'content-type': 'application/json' } }), 400, 'parameter_invalid');
    expectError(await alice.post('/v1/conversations', { body: '[1,2]', headers: { 'content-type': 'application/json' } }), 400, 'parameter_invalid');
    expectError(
      await alice.post('/v1/conversations', { body: '--x\r\nContent-Disposition: form-data; name="contact_id"\r\n\r\nabc', headers: { 'content-type': 'multipart/form-data; boundary=x' } }),
      400,
      'parameter_invalid',
    );
    expectError(await alice.post('/v1/conversations', { body: 'contact_id=a', headers: { 'content-type': 'multipart/form-data' } }), 400, 'parameter_invalid');
  });

  it('another content type: 415', async () => {
    expectError(await alice.post('/v1/conversations', { body: 'contact_id=a', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectError(await alice.post('/v1/conversations', { body: '<x/>', headers: { 'content-type': 'application/xml' } }), 415, 'unsupported_media_type');
  });

  it('leaves no partial state after a refused create', async () => {
    await alice.post('/v1/conversations', { json: { contact_id: 'never-made', extra: 1 } });
    const list = await alice.get('/v1/conversations?limit=100');
    expect(list.body.data.some((c: any) => c.contact_id === 'never-made')).toBe(false);
  });
});

describe('retrieve, update, delete', () => {
  it('retrieve returns the object and has no side effect', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'retrieve-me' } })).body;
    const r1 = await alice.get(`/v1/conversations/${c.id}`);
    const r2 = await alice.get(`/v1/conversations/${c.id}`);
    expect(r1.status).toBe(200);
    expect(r1.body).toEqual(c);
    expect(r2.body).toEqual(c);
  });

  it('update changes only supplied fields; booleans as true/false/1/0', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'update-me' } })).body;
    let r = await alice.put(`/v1/conversations/${c.id}`, { form: { is_pinned: '1' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...c, is_pinned: true });
    r = await alice.put(`/v1/conversations/${c.id}`, { json: { is_muted: true, is_pinned: 'false' } });
    expect(r.body).toEqual({ ...c, is_muted: true, is_pinned: false });
    r = await alice.put(`/v1/conversations/${c.id}`, { json: { archived_at: 1700000000, last_opened_at: '1700000100' } });
    expect(r.body).toEqual({ ...c, is_muted: true, archived_at: 1700000000, last_opened_at: 1700000100 });
    r = await alice.put(`/v1/conversations/${c.id}`, { form: { archived_at: '' } });
    expect(r.body.archived_at).toBeNull();
    await alice.put(`/v1/conversations/${c.id}`, { json: { archived_at: 5 } });
    r = await alice.put(`/v1/conversations/${c.id}`, { json: { archived_at: null } });
    expect(r.body.archived_at).toBeNull();
    expect((await alice.get(`/v1/conversations/${c.id}`)).body).toEqual(r.body);
  });

  it('update with an empty body changes nothing', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'empty-update' } })).body;
    const r = await alice.put(`/v1/conversations/${c.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(c);
  });

  it('update refuses bad values, unknown fields and immutable fields without changing anything', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'bad-update' } })).body;
    const path = `/v1/conversations/${c.id}`;
    expectError(await alice.put(path, { form: { is_pinned: 'yes' } }), 400, 'parameter_invalid', 'is_pinned');
    expectError(await alice.put(path, { json: { is_muted: 2 } }), 400, 'parameter_invalid', 'is_muted');
    expectError(await alice.put(path, { json: { archived_at: -1 } }), 400, 'parameter_invalid', 'archived_at');
    expectError(await alice.put(path, { json: { archived_at: 1.5 } }), 400, 'parameter_invalid', 'archived_at');
    expectError(await alice.put(path, { form: { last_opened_at: 'today' } }), 400, 'parameter_invalid', 'last_opened_at');
    expectError(await alice.put(path, { json: { is_pinned: true, contact_id: 'other' } }), 400, 'parameter_unknown', 'contact_id');
    expectError(await alice.put(path, { json: { created_at: 1 } }), 400, 'parameter_unknown', 'created_at');
    expectError(await alice.put(path, { json: { pinned_message_id: 'AAAAAAAAAAAAAAAA' } }), 400, 'parameter_invalid', 'pinned_message_id');
    expectError(await alice.put(path, { json: { pinned_message_id: 'short' } }), 400, 'parameter_invalid', 'pinned_message_id');
    expect((await alice.get(path)).body).toEqual(c);
  });

  it('pins a message of the conversation and clears it with an empty value', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'pin-message' } })).body;
    const other = (await alice.post('/v1/conversations', { json: { contact_id: 'pin-other' } })).body;
    const file = (await alice.upload({ conversation_id: c.id }, { name: 'note.txt', bytes: 'hello' })).body;
    const foreign = (await alice.upload({ conversation_id: other.id }, { name: 'x.txt', bytes: 'x' })).body;
    let r = await alice.put(`/v1/conversations/${c.id}`, { form: { pinned_message_id: file.message_id } });
    expect(r.status).toBe(200);
    expect(r.body.pinned_message_id).toBe(file.message_id);
    // a message of another conversation is not "a message of this conversation"
    expectError(await alice.put(`/v1/conversations/${c.id}`, { json: { pinned_message_id: foreign.message_id } }), 400, 'parameter_invalid', 'pinned_message_id');
    r = await alice.put(`/v1/conversations/${c.id}`, { form: { pinned_message_id: '' } });
    expect(r.body.pinned_message_id).toBeNull();
  });

  it('delete answers 204 with no body, then 404', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'delete-me' } })).body;
    const r = await alice.del(`/v1/conversations/${c.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expectError(await alice.get(`/v1/conversations/${c.id}`), 404, 'resource_missing');
    expectError(await alice.del(`/v1/conversations/${c.id}`), 404, 'resource_missing');
    expectError(await alice.put(`/v1/conversations/${c.id}`, { json: { is_pinned: true } }), 404, 'resource_missing');
    // the contact is free again
    expect((await alice.post('/v1/conversations', { json: { contact_id: 'delete-me' } })).status).toBe(201);
  });

  it('unknown or malformed ids: 404', async () => {
    expectError(await alice.get('/v1/conversations/AAAAAAAAAAAAAAAA'), 404, 'resource_missing');
    expectError(await alice.get('/v1/conversations/not-an-id'), 404, 'resource_missing');
    expectError(await alice.get('/v1/nothing-here'), 404, 'resource_missing');
  });

  it('methods outside the contract: 405 with Allow', async () => {
    let r = await alice.call('PATCH', '/v1/conversations');
    expectError(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, POST');
    r = await alice.call('PATCH', '/v1/conversations/AAAAAAAAAAAAAAAA', { json: {} });
    expectError(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, PUT, DELETE');
    r = await alice.call('DELETE', '/v1/files');
    expect(r.headers.get('allow')).toBe('GET, POST');
  });
});

describe('authentication', () => {
  it('missing, malformed or unknown token: 401 with WWW-Authenticate: Bearer', async () => {
    const variants: Record<string, string>[] = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer nope' }];
    for (const headers of variants) {
      const r = await alice.get('/v1/conversations', { token: null, headers });
      expectError(r, 401, 'unauthenticated');
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expectError(await alice.post('/v1/conversations', { token: 'wrong', json: { contact_id: 'x' } }), 401, 'unauthenticated');
  });
});

describe('list and filters', () => {
  it('filters muted / archived / pinned / group_id: true → only those, false → the others', async () => {
    const u = client(() => s.baseUrl, s.tokens.bob);
    const make = async (body: object, change: object) => {
      const c = (await u.post('/v1/conversations', { json: body })).body;
      return (await u.put(`/v1/conversations/${c.id}`, { json: change })).body;
    };
    const plain = await make({ contact_id: 'f-plain' }, {});
    const muted = await make({ contact_id: 'f-muted' }, { is_muted: true });
    const archived = await make({ contact_id: 'f-archived' }, { archived_at: 1700000000 });
    const pinned = await make({ group_id: 'f-group' }, { is_pinned: true });
    const ids = async (q: string) => {
      const r = await u.get(`/v1/conversations?limit=100${q}`);
      expect(r.status).toBe(200);
      ConversationPage.parse(r.body);
      return r.body.data.map((c: any) => c.id);
    };
    expect(await ids('')).toEqual([pinned.id, archived.id, muted.id, plain.id]);
    expect(await ids('&muted=true')).toEqual([muted.id]);
    expect(await ids('&muted=0')).toEqual([pinned.id, archived.id, plain.id]);
    expect(await ids('&archived=1')).toEqual([archived.id]);
    expect(await ids('&archived=false')).toEqual([pinned.id, muted.id, plain.id]);
    expect(await ids('&pinned=true')).toEqual([pinned.id]);
    expect(await ids('&pinned=false&muted=false')).toEqual([archived.id, plain.id]);
    expect(await ids('&group_id=f-group')).toEqual([pinned.id]);
    expect(await ids('&group_id=none')).toEqual([]);
    expectError(await u.get('/v1/conversations?muted=maybe'), 400, 'parameter_invalid', 'muted');
    expectError(await u.get('/v1/conversations?colour=red'), 400, 'parameter_unknown', 'colour');
    expectError(await u.get('/v1/conversations?group_id=bad%20id'), 400, 'parameter_invalid', 'group_id');
    // cleanup for other tests of bob
    for (const c of [plain, muted, archived, pinned]) await u.del(`/v1/conversations/${c.id}`);
  });
});
