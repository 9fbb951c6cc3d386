// Real responses, checked against the OpenAPI document the server itself serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { client, type CallResult } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;
let doc: any;

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  const r = await alice.get('/v1/openapi.json', { token: null });
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(() => s.stop());

function resolve(node: any): any {
  if (Array.isArray(node)) return node.map(resolve);
  if (node && typeof node === 'object') {
    if (typeof node.$ref === 'string') {
      const name = node.$ref.replace('#/components/schemas/', '');
      return resolve(doc.components.schemas[name]);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v)]));
  }
  return node;
}

/** Checks a real response against the document: the status is documented and the body matches. */
function conforms(template: string, method: string, r: CallResult) {
  const operation = doc.paths[template]?.[method];
  expect(operation, `${method} ${template} documented`).toBeDefined();
  const response = operation.responses[String(r.status)];
  expect(response, `${method} ${template} documents ${r.status}`).toBeDefined();
  const schema = response.content?.['application/json']?.schema;
  if (!schema) {
    expect(r.text).toBe('');
    return;
  }
  const validator = z.fromJSONSchema(resolve(schema));
  const result = validator.safeParse(r.body);
  expect(result.success, `${method} ${template} ${r.status}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
}

describe('OpenAPI 3.1 document', () => {
  it('is served at /v1/openapi.json and describes every operation', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/conversations',
      '/v1/conversations/{id}',
      '/v1/events',
      '/v1/events/stream',
      '/v1/files',
      '/v1/files/{id}',
      '/v1/me',
      '/v1/uploads',
      '/v1/uploads/{id}',
    ]);
    const ops = Object.values(doc.paths).flatMap((p: any) => Object.keys(p).filter((k) => k !== 'parameters'));
    expect(ops.length).toBe(19);
  });

  it('real responses of every operation conform to it', async () => {
    // The feed's cursor before the writes below: the page after it holds their events.
    const start = (await alice.get('/v1/events?limit=0')).body.next as string;
    const created = await alice.post('/v1/conversations', { json: { contact_id: 'doc' } });
    conforms('/v1/conversations', 'post', created);
    const id = created.body.id;
    conforms('/v1/conversations', 'post', await alice.post('/v1/conversations', { json: { contact_id: 'doc' } })); // 409
    conforms('/v1/conversations', 'post', await alice.post('/v1/conversations', { body: 'x', headers: { 'content-type': 'text/plain' } })); // 415
    conforms('/v1/conversations', 'get', await alice.get('/v1/conversations?limit=5'));
    conforms('/v1/conversations', 'get', await alice.get('/v1/conversations?limit=500')); // 400
    conforms('/v1/conversations', 'get', await alice.get('/v1/conversations', { token: null })); // 401
    conforms('/v1/conversations/{id}', 'get', await alice.get(`/v1/conversations/${id}`));
    conforms('/v1/conversations/{id}', 'get', await alice.get('/v1/conversations/AAAAAAAAAAAAAAAA')); // 404
    conforms('/v1/conversations/{id}', 'put', await alice.put(`/v1/conversations/${id}`, { json: { is_pinned: true, archived_at: 1 } }));
    const file = await alice.upload({ conversation_id: id }, { name: 'doc.pdf', bytes: '%PDF' });
    conforms('/v1/files', 'post', file);
    conforms('/v1/files', 'post', await alice.upload({ conversation_id: 'AAAAAAAAAAAAAAAA' }, { name: 'x', bytes: 'x' })); // 404
    conforms('/v1/files', 'get', await alice.get(`/v1/files?conversation_id=${id}`));
    conforms('/v1/files/{id}', 'get', await alice.get(`/v1/files/${file.body.id}`));
    conforms('/v1/files/{id}', 'put', await alice.put(`/v1/files/${file.body.id}`, { form: { filename: 'renamed.pdf' } }));
    conforms('/v1/files/{id}', 'put', await alice.put(`/v1/files/${file.body.id}`, { form: { filename: '' } })); // 400
    conforms('/v1/files/{id}', 'put', await alice.put(`/v1/files/${file.body.id}`, { json: { filename: 'a\u202Eb.pdf' } })); // 400
    conforms('/v1/files/{id}', 'delete', await alice.del(`/v1/files/${file.body.id}?force=1`)); // 400: unknown query parameter
    conforms('/v1/conversations/{id}', 'put', await alice.put(`/v1/conversations/${id}?is_pinned=true`)); // 400
    conforms('/v1/files/{id}', 'delete', await alice.del(`/v1/files/${file.body.id}`));
    conforms('/v1/conversations/{id}', 'delete', await alice.del(`/v1/conversations/${id}`));
    const head = await alice.get('/v1/events?limit=0');
    conforms('/v1/events', 'get', head);
    const page = await alice.get(`/v1/events?after=${start}&limit=1000`);
    expect(page.body.data.length).toBeGreaterThan(0);
    conforms('/v1/events', 'get', page);
    conforms('/v1/events', 'get', await alice.get('/v1/events?after=x')); // 400
    conforms('/v1/events', 'get', await alice.get(`/v1/events?after=${'A'.repeat(22)}`)); // 410: a cursor not issued to alice
    conforms('/v1/me', 'get', await alice.get('/v1/me'));
    conforms('/v1/me', 'get', await alice.get('/v1/me', { token: null })); // 401
  });

  it('the checker itself rejects a body that does not match', () => {
    const schema = z.fromJSONSchema(resolve(doc.components.schemas.Conversation));
    expect(schema.safeParse({ id: 'x' }).success).toBe(false);
  });
});
