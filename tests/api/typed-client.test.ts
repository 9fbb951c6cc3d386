// The typed client (lib/client: openapi-fetch over the types generated from the OpenAPI document)
// against a real server: what a TypeScript consumer of /v1 writes, compiled by tsc with the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createParleyClient, uploadFile, type ApiError, type Conversation, type ParleyClient } from '../../lib/client';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let parley: ParleyClient;

beforeAll(async () => {
  s = await startTarget();
  // A function: the client asks for the token before every request (baseUrl may change per target).
  parley = createParleyClient({ baseUrl: s.baseUrl, token: () => s.tokens.alice });
});
afterAll(() => s.stop());

describe('typed client', () => {
  it('creates a conversation (201, typed body)', async () => {
    const { data, error, response } = await parley.POST('/v1/conversations', { body: { contact_id: 'typed-client-1' } });
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    const c: Conversation = data!;
    expect(c).toMatchObject({ contact_id: 'typed-client-1', group_id: null, is_pinned: false });
    const again = await parley.GET('/v1/conversations/{id}', { params: { path: { id: c.id } } });
    expect(again.data).toEqual(c);
  });

  it('lists with paging (limit, starting_after, has_more)', async () => {
    const made: string[] = [];
    for (const g of ['typed-page-a', 'typed-page-b', 'typed-page-c']) {
      const { data } = await parley.POST('/v1/conversations', { body: { group_id: g } });
      made.push(data!.id);
    }
    const first = await parley.GET('/v1/conversations', { params: { query: { limit: '2' } } });
    expect(first.response.status).toBe(200);
    expect(first.data!.has_more).toBe(true);
    expect(first.data!.data.map((c) => c.id)).toEqual([made[2], made[1]]);
    // Walk the rest page by page: it goes on with the oldest of the three and ends with has_more false.
    const walked = first.data!.data.map((c) => c.id);
    let page = first.data!;
    while (page.has_more) {
      const next = await parley.GET('/v1/conversations', { params: { query: { limit: '2', starting_after: walked[walked.length - 1] } } });
      expect(next.error).toBeUndefined();
      page = next.data!;
      walked.push(...page.data.map((c) => c.id));
    }
    expect(walked[2]).toBe(made[0]);
    const all = await parley.GET('/v1/conversations', { params: { query: { limit: '100' } } });
    expect(walked).toEqual(all.data!.data.map((c) => c.id));
  });

  it('uploads a Blob (multipart through bodySerializer) and a File with its name', async () => {
    const { data: c } = await parley.POST('/v1/conversations', { body: { group_id: 'typed-files' } });
    const blob = await uploadFile(parley, { file: new Blob(['hello, typed client'], { type: 'text/plain' }), conversation_id: c!.id });
    expect(blob.error).toBeUndefined();
    expect(blob.response.status).toBe(201);
    expect(blob.data).toMatchObject({ filename: 'blob', file_type: 'text/plain', file_size: 19 });
    const file = await uploadFile(parley, { file: new File(['{"a":1}'], 'notes.json', { type: 'application/json' }), message_id: blob.data!.message_id });
    expect(file.data).toMatchObject({ filename: 'notes.json', file_size: 7, message_id: blob.data!.message_id });
    const listed = await parley.GET('/v1/files', { params: { query: { conversation_id: c!.id } } });
    expect(listed.data!.data.map((f) => f.filename)).toEqual(['notes.json', 'blob']);
  });

  it('answers errors with the typed error body', async () => {
    const missing = await parley.GET('/v1/conversations/{id}', { params: { path: { id: 'A'.repeat(16) } } });
    expect(missing.data).toBeUndefined();
    expect(missing.response.status).toBe(404);
    const e: ApiError = missing.error!;
    expect(e).toMatchObject({ type: 'invalid_request', code: 'resource_missing' });

    await parley.POST('/v1/conversations', { body: { contact_id: 'typed-dup' } });
    const dup = await parley.POST('/v1/conversations', { body: { contact_id: 'typed-dup' } });
    expect(dup.response.status).toBe(409);
    expect(dup.error?.code).toBe('conversation_exists');
    expect(dup.error?.existing_id).toMatch(/^[A-Za-z0-9]{16}$/);

    const stranger = createParleyClient({ baseUrl: s.baseUrl, token: 'pk_not_a_token' });
    const refused = await stranger.GET('/v1/me');
    expect(refused.response.status).toBe(401);
    expect(refused.error?.code).toBe('unauthenticated');
  });
});
