import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;
let bob: ReturnType<typeof client>;
let conversation: any;
let file: any;

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  bob = client(() => s.baseUrl, s.tokens.bob);
  conversation = (await alice.post('/v1/conversations', { json: { contact_id: 'shared-contact' } })).body;
  file = (await alice.upload({ conversation_id: conversation.id }, { name: 'secret.pdf', bytes: '%PDF secret' })).body;
  conversation = (await alice.get(`/v1/conversations/${conversation.id}`)).body; // the upload made it active
});
afterAll(() => s.stop());

const expect404 = (r: { status: number; body: any }) => {
  expect(r.status).toBe(404);
  expect(r.body.code).toBe('resource_missing');
};

describe("bob and alice's resources", () => {
  it('bob gets 404 for each of alice\'s resources on every method', async () => {
    expect404(await bob.get(`/v1/conversations/${conversation.id}`));
    expect404(await bob.put(`/v1/conversations/${conversation.id}`, { json: { is_pinned: true } }));
    expect404(await bob.put(`/v1/conversations/${conversation.id}`, { json: { pinned_message_id: file.message_id } }));
    expect404(await bob.put(`/v1/conversations/${conversation.id}`, { json: {} }));
    // a missing conversation is 404 even when the message id is wrong too (404 before 400)
    expect404(await bob.put('/v1/conversations/ZZZZZZZZZZZZZZZZ', { json: { pinned_message_id: 'AAAAAAAAAAAAAAAA' } }));
    expect404(await bob.del(`/v1/conversations/${conversation.id}`));
    expect404(await bob.get(`/v1/files/${file.id}`));
    expect404(await bob.put(`/v1/files/${file.id}`, { json: { filename: 'mine.pdf' } }));
    expect404(await bob.del(`/v1/files/${file.id}`));
    expect404(await bob.get(`/v1/files?conversation_id=${conversation.id}`));
    expect404(await bob.upload({ conversation_id: conversation.id }, { name: 'x.txt', bytes: 'x' }));
    expect404(await bob.upload({ message_id: file.message_id }, { name: 'x.txt', bytes: 'x' }));
    // the answer is exactly that of an id that does not exist
    const missing = await bob.get('/v1/conversations/ZZZZZZZZZZZZZZZZ');
    expect((await bob.get(`/v1/conversations/${conversation.id}`)).body).toEqual(missing.body);
  });

  it('nothing of bob\'s requests changed alice\'s data', async () => {
    expect((await alice.get(`/v1/conversations/${conversation.id}`)).body).toEqual(conversation);
    expect((await alice.get(`/v1/files/${file.id}`)).body).toEqual(file);
  });

  it('bob sees none of them in lists, and may use the same contact id', async () => {
    expect((await bob.get('/v1/conversations?limit=100')).body.data).toEqual([]);
    expect((await bob.get('/v1/files?limit=100')).body.data).toEqual([]);
    const own = await bob.post('/v1/conversations', { json: { contact_id: 'shared-contact' } });
    expect(own.status).toBe(201);
    expect(own.body.id).not.toBe(conversation.id);
    expect((await bob.get('/v1/conversations')).body.data.map((c: any) => c.id)).toEqual([own.body.id]);
    expect((await alice.get('/v1/conversations')).body.data.map((c: any) => c.id)).toEqual([conversation.id]);
  });

  it('bob cannot pin alice\'s message in his own conversation', async () => {
    const own = (await bob.get('/v1/conversations')).body.data[0];
    const r = await bob.put(`/v1/conversations/${own.id}`, { json: { pinned_message_id: file.message_id } });
    expect(r.status).toBe(400);
    expect(r.body.param).toBe('pinned_message_id');
  });
});
