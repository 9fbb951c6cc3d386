// Real requests and answers of every operation, checked against the OpenAPI document the server
// itself serves (tests/helpers/openapi-check.ts: ajv, JSON Schema 2020-12, with formats).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiChecker, type Answer, type SentRequest } from '../helpers/openapi-check';
import { startTarget } from '../helpers/target';
import { startTestServer, type TestServer } from '../helpers/server';

let s: TestServer;
let doc: any;
let checker: OpenApiChecker;

beforeAll(async () => {
  s = await startTarget();
  const r = await fetch(`${s.baseUrl}/v1/openapi.json`);
  expect(r.status).toBe(200);
  doc = await r.json();
  checker = new OpenApiChecker(doc);
});
afterAll(() => s.stop());

interface Send {
  token?: string | null;
  headers?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
  multipart?: { fields: Record<string, string>; file?: { name: string; bytes: string } };
  bytes?: string;
  /** Whether the document should take the request: yes (default for 2xx), no, or not checked. */
  request?: 'valid' | 'invalid' | 'unchecked';
  /** The status expected (default: a success, below 300). */
  status?: number | 'any';
  /** The operation whose answers a 405 is checked against. */
  operationOf?: string;
  base?: string;
}

interface Result extends Answer {
  body: any;
}

async function send(method: string, target: string, o: Send = {}): Promise<Result> {
  const headers: Record<string, string> = { ...o.headers };
  const token = o.token === undefined ? s.tokens.alice : o.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  let sent: SentRequest['body'];
  if (o.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(o.json);
    sent = { type: 'application/json', value: o.json };
  } else if (o.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(o.form).toString();
    sent = { type: 'application/x-www-form-urlencoded', value: o.form };
  } else if (o.multipart) {
    const form = new FormData();
    for (const [k, v] of Object.entries(o.multipart.fields)) form.append(k, v);
    if (o.multipart.file) form.append('file', new Blob([o.multipart.file.bytes]), o.multipart.file.name);
    body = form;
    sent = { type: 'multipart/form-data', value: { ...o.multipart.fields, ...(o.multipart.file ? { file: o.multipart.file.bytes } : {}) } };
  } else if (o.bytes !== undefined) {
    body = o.bytes;
    sent = { type: headers['content-type'] ?? '', value: o.bytes };
  }
  const request: SentRequest = { method, target, headers, body: sent };
  const response = await fetch((o.base ?? s.baseUrl) + target, { method, headers, body });
  const text = await response.text();
  const answer: Result = {
    status: response.status,
    headers: response.headers,
    text,
    body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined,
  };
  const where = `${method} ${target} → ${answer.status} ${text.slice(0, 200)}`;
  if (o.status === undefined) expect(answer.status, where).toBeLessThan(300);
  else if (o.status !== 'any') expect(answer.status, where).toBe(o.status);
  expect(checker.answerProblems(request, answer, o.operationOf), where).toEqual([]);
  const expectation = o.request ?? (answer.status < 300 ? 'valid' : 'unchecked');
  if (expectation !== 'unchecked') {
    const problems = checker.requestProblems(request, o.operationOf);
    if (expectation === 'valid') expect(problems, `${where}: the document refuses the request`).toEqual([]);
    else expect(problems.length, `${where}: the document takes a request the server refuses`).toBeGreaterThan(0);
  }
  return answer;
}

const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
const TUS = { 'tus-resumable': '1.0.0' };

describe('the OpenAPI document', () => {
  it('is served at /v1/openapi.json and describes every route', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/conversations',
      '/v1/conversations/{id}',
      '/v1/events',
      '/v1/events/stream',
      '/v1/files',
      '/v1/files/{id}',
      '/v1/me',
      '/v1/me/devices',
      '/v1/me/devices/{id}',
      '/v1/me/pairings',
      '/v1/me/pairings/{id}',
      '/v1/me/pairings/{id}/approve',
      '/v1/me/pairings/{id}/deny',
      '/v1/openapi.json',
      '/v1/pairings/redeem',
      '/v1/pairings/{id}/token',
      '/v1/uploads',
      '/v1/uploads/{id}',
    ]);
    expect(checker.operations().length).toBe(28);
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) expect(operation.summary, `${method} ${path}`).toBeTruthy();
    }
    // Objects are components, referenced where they recur (never inlined).
    expect(JSON.stringify(doc.components.schemas.ConversationPage)).toContain('"$ref":"#/components/schemas/Conversation"');
    expect(JSON.stringify(doc.components.schemas.Event)).toContain('"$ref":"#/components/schemas/Conversation"');
  });

  it('takes the bodies the server takes, and refuses those it refuses', () => {
    const body = (value: unknown): SentRequest => ({ method: 'PUT', target: '/v1/conversations/AAAAAAAAAAAAAAAA', headers: {}, body: { type: 'application/json', value } });
    for (const ok of [{ pinned_message_id: '' }, { pinned_message_id: null }, { is_pinned: 1 }, { is_muted: '0' }, { archived_at: '' }, { archived_at: '12' }, {}]) {
      expect(checker.requestProblems(body(ok)), JSON.stringify(ok)).toEqual([]);
    }
    for (const bad of [{ pinned_message_id: 'short' }, { is_pinned: 2 }, { is_pinned: 'yes' }, { archived_at: -1 }, { other: 1 }]) {
      expect(checker.requestProblems(body(bad)).length, JSON.stringify(bad)).toBeGreaterThan(0);
    }
  });

  it('real requests and answers of every operation conform to it', async () => {
    const bob = s.tokens.bob;
    // Service
    await send('GET', '/v1/openapi.json', { token: null });
    await send('POST', '/v1/openapi.json', { status: 405, token: null, operationOf: 'GET', request: 'unchecked' }); // 405, Allow
    await send('GET', '/v1/me');
    await send('GET', '/v1/me?x=1', { status: 400, request: 'invalid' }); // 400
    await send('GET', '/v1/me', { status: 401, token: null }); // 401, WWW-Authenticate
    await send('GET', '/v1/me', { status: 401, token: 'not-a-token' }); // 401

    // Conversations
    const start = (await send('GET', '/v1/events?limit=0')).body.next as string;
    const created = await send('POST', '/v1/conversations', { json: { contact_id: 'doc' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await send('POST', '/v1/conversations', { status: 409, json: { contact_id: 'doc' } }); // 409 conversation_exists
    await send('POST', '/v1/conversations', { status: 400, json: { contact_id: 'doc', group_id: 'g' } }); // 400 (both)
    await send('POST', '/v1/conversations', { status: 400, form: { contact_id: 'bad id!' }, request: 'invalid' }); // 400
    await send('POST', '/v1/conversations', { status: 415, bytes: 'x', headers: { 'content-type': 'text/plain' }, request: 'invalid' }); // 415
    const keyed = { 'idempotency-key': 'openapi-doc-1' };
    const first = await send('POST', '/v1/conversations', { form: { group_id: 'team' }, headers: keyed });
    const replay = await send('POST', '/v1/conversations', { form: { group_id: 'team' }, headers: keyed });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
    await send('POST', '/v1/conversations', { status: 409, form: { group_id: 'other' }, headers: keyed }); // 409 idempotency_conflict
    await send('DELETE', '/v1/conversations', { status: 405, operationOf: 'GET', request: 'unchecked' }); // 405, Allow
    await send('GET', '/v1/conversations?limit=5');
    await send('GET', '/v1/conversations?pinned=0&muted=false&group_id=team&limit=010');
    await send('GET', '/v1/conversations?limit=500', { status: 400, request: 'invalid' }); // 400
    await send('GET', '/v1/conversations?muted=yes', { status: 400, request: 'invalid' }); // 400
    await send('GET', '/v1/conversations?colour=red', { status: 400, request: 'invalid' }); // 400 parameter_unknown
    await send('GET', '/v1/conversations', { status: 401, token: null }); // 401
    await send('GET', `/v1/conversations/${id}`);
    await send('GET', '/v1/conversations/AAAAAAAAAAAAAAAA', { status: 404 }); // 404
    await send('GET', `/v1/conversations/${id}`, { status: 404, token: bob }); // 404: another user's
    await send('GET', '/v1/conversations/not-an-id', { status: 404, request: 'invalid' }); // 404
    await send('PATCH', `/v1/conversations/${id}`, { status: 405, operationOf: 'PUT', request: 'unchecked' }); // 405
    await send('PUT', `/v1/conversations/${id}`, { json: { is_pinned: true, archived_at: 1 } });
    await send('PUT', `/v1/conversations/${id}`, { json: { is_muted: 1, pinned_message_id: '' } });
    await send('PUT', `/v1/conversations/${id}`, { form: { is_pinned: '0', archived_at: '', last_opened_at: '1700000000' } });
    await send('PUT', `/v1/conversations/${id}`, { multipart: { fields: { is_muted: 'false' } } });
    await send('PUT', `/v1/conversations/${id}`);
    await send('PUT', `/v1/conversations/${id}`, { status: 400, json: { is_pinned: 'yes' }, request: 'invalid' }); // 400
    await send('PUT', `/v1/conversations/${id}`, { status: 400, json: { colour: 'red' }, request: 'invalid' }); // 400 parameter_unknown
    await send('PUT', `/v1/conversations/${id}?is_pinned=true`, { status: 400, request: 'invalid' }); // 400
    await send('PUT', `/v1/conversations/${id}`, { status: 400, json: { pinned_message_id: 'AAAAAAAAAAAAAAAA' } }); // 400: not a message of it

    // Files
    const file = await send('POST', '/v1/files', { multipart: { fields: { conversation_id: id }, file: { name: 'doc.pdf', bytes: '%PDF-1.4' } } });
    expect(file.status).toBe(201);
    const fileId = file.body.id as string;
    await send('POST', '/v1/files', { multipart: { fields: { message_id: file.body.message_id }, file: { name: 'second.txt', bytes: 'hello' } } });
    await send('POST', '/v1/files', { status: 404, multipart: { fields: { conversation_id: 'AAAAAAAAAAAAAAAA' }, file: { name: 'x', bytes: 'x' } } }); // 404
    await send('POST', '/v1/files', { status: 400, multipart: { fields: { conversation_id: id } }, request: 'invalid' }); // 400: no file
    await send('POST', '/v1/files', { status: 415, json: { conversation_id: id }, request: 'invalid' }); // 415
    await send('GET', `/v1/files?conversation_id=${id}&limit=1`);
    const page = await send('GET', `/v1/files?conversation_id=${id}&limit=1`);
    await send('GET', `/v1/files?conversation_id=${id}&starting_after=${page.body.data[0].id}`);
    await send('GET', '/v1/files?starting_after=AAAAAAAAAAAAAAAA&ending_before=AAAAAAAAAAAAAAAA', { status: 400 }); // 400: both
    await send('GET', '/v1/files?conversation_id=AAAAAAAAAAAAAAAA', { status: 404 }); // 404
    await send('GET', `/v1/files/${fileId}`);
    await send('GET', '/v1/files/AAAAAAAAAAAAAAAA', { status: 404 }); // 404
    await send('PUT', `/v1/files/${fileId}`, { form: { filename: 'renamed.pdf' } });
    await send('PUT', `/v1/files/${fileId}`, { json: { filename: 'again.pdf' }, headers: { 'idempotency-key': 'openapi-doc-2' } });
    await send('PUT', `/v1/files/${fileId}`, { status: 400, form: { filename: '' } }); // 400
    await send('PUT', `/v1/files/${fileId}`, { status: 400, json: { filename: 'a\u202Eb.pdf' } }); // 400
    await send('PUT', `/v1/files/${fileId}`, { status: 400, json: { name: 'x' }, request: 'invalid' }); // 400 unknown
    await send('DELETE', `/v1/files/${fileId}?force=1`, { status: 400, request: 'invalid' }); // 400
    await send('DELETE', `/v1/files/${fileId}`);
    await send('DELETE', `/v1/files/${fileId}`, { status: 404 }); // 404

    // Resumable uploads
    await send('OPTIONS', '/v1/uploads', { token: null });
    await send('OPTIONS', '/v1/uploads/AAAAAAAAAAAAAAAA', { token: null });
    const body = 'resumable bytes';
    const upload = await send('POST', '/v1/uploads', {
      headers: { ...TUS, 'upload-length': String(body.length), 'upload-metadata': metadata({ filename: 'r.txt', conversation_id: id }) },
    });
    expect(upload.status).toBe(201);
    const uploadPath = new URL(upload.headers.get('location')!, s.baseUrl).pathname;
    await send('POST', '/v1/uploads', { status: 400, headers: { ...TUS, 'upload-metadata': metadata({ filename: 'r.txt', conversation_id: id }) }, request: 'invalid' }); // 400: no Upload-Length
    await send('POST', '/v1/uploads', {
      status: 404,
      headers: { ...TUS, 'upload-length': '1', 'upload-metadata': metadata({ filename: 'r.txt', conversation_id: 'AAAAAAAAAAAAAAAA' }) },
    });
    await send('POST', '/v1/uploads', { status: 401, token: null, headers: { ...TUS, 'upload-length': '1', 'upload-metadata': metadata({ filename: 'r.txt' }) } }); // 401
    await send('HEAD', uploadPath, { headers: TUS });
    await send('HEAD', '/v1/uploads/AAAAAAAAAAAAAAAA', { status: 404, headers: TUS }); // 404
    const octets = { ...TUS, 'content-type': 'application/offset+octet-stream' };
    await send('PATCH', uploadPath, { status: 409, headers: { ...octets, 'upload-offset': '3' }, bytes: body }); // 409: offset mismatch
    await send('PATCH', uploadPath, { status: 204, headers: { ...octets, 'upload-offset': '0' }, bytes: body.slice(0, 5) }); // 204
    // 200 with the file (the proxy's own tus server answers 204: it does not take Prefer)
    const last = await send('PATCH', uploadPath, { status: 'any', headers: { ...octets, 'upload-offset': '5', prefer: 'return=representation' }, bytes: body.slice(5) });
    expect([200, 204]).toContain(last.status);
    await send('HEAD', uploadPath, { headers: TUS }); // finished: Upload-File-Id
    await send('PATCH', uploadPath, { status: 415, headers: { ...TUS, 'content-type': 'text/plain', 'upload-offset': '0' }, bytes: 'x', request: 'invalid' }); // 415
    await send('GET', uploadPath, { status: 405, headers: TUS, operationOf: 'DELETE', request: 'unchecked' }); // 405
    const ended = await send('POST', '/v1/uploads', {
      headers: { ...TUS, 'upload-length': '10', 'upload-metadata': metadata({ filename: 'e.txt', conversation_id: id }) },
    });
    const endedPath = new URL(ended.headers.get('location')!, s.baseUrl).pathname;
    await send('DELETE', endedPath, { headers: TUS });
    await send('DELETE', endedPath, { status: 404, headers: TUS }); // 404

    // The change feed
    await send('GET', '/v1/events?limit=0');
    const events = await send('GET', `/v1/events?after=${start}&limit=1000`);
    expect(events.body.data.length).toBeGreaterThan(0);
    await send('GET', '/v1/events?after=x', { status: 400 }); // 400: not a cursor of this feed
    await send('GET', '/v1/events?limit=1001', { status: 400, request: 'invalid' }); // 400
    await send('GET', `/v1/events?after=${'A'.repeat(22)}`, { status: 410 }); // 410: a cursor not issued to alice
    await send('GET', '/v1/events/stream?colour=red', { status: 400, request: 'invalid' }); // 400
    await send('GET', '/v1/events/stream', { status: 401, token: null }); // 401
    await send('POST', '/v1/events/stream', { status: 405, operationOf: 'GET', request: 'unchecked' }); // 405
    await stream(`/v1/events/stream?after=${start}`);

    await send('DELETE', `/v1/conversations/${id}`);
    await send('DELETE', `/v1/conversations/${id}`, { status: 404 }); // 404

    // Devices and pairing (extensions)
    const code = await send('POST', '/v1/me/pairings');
    expect(code.status).toBe(201);
    await send('POST', `/v1/me/pairings/${code.body.id}/approve`, { status: 409 }); // nobody redeemed it yet
    const redeemed = await send('POST', '/v1/pairings/redeem', { token: null, json: { code: code.body.code, label: 'doc phone' } });
    await send('POST', '/v1/pairings/redeem', { token: null, status: 410, json: { code: code.body.code } }); // used
    await send('POST', '/v1/pairings/redeem', { token: null, status: 400, json: { code: 'x', colour: 'red' }, request: 'invalid' });
    await send('POST', `/v1/pairings/${redeemed.body.pairing_id}/token`, { token: null, status: 409, json: { secret: redeemed.body.secret } }); // pending
    await send('GET', `/v1/me/pairings/${code.body.id}`);
    await send('GET', `/v1/me/pairings/${code.body.id}`, { status: 404, token: bob });
    await send('POST', `/v1/me/pairings/${code.body.id}/approve`);
    const collected = await send('POST', `/v1/pairings/${redeemed.body.pairing_id}/token`, { token: null, json: { secret: redeemed.body.secret } });
    await send('POST', `/v1/pairings/${redeemed.body.pairing_id}/token`, { token: null, status: 410, json: { secret: redeemed.body.secret } });
    const other = await send('POST', '/v1/me/pairings');
    const otherRedeemed = await send('POST', '/v1/pairings/redeem', { token: null, form: { code: other.body.code } });
    await send('POST', `/v1/me/pairings/${other.body.id}/deny`);
    await send('POST', `/v1/pairings/${otherRedeemed.body.pairing_id}/token`, { token: null, status: 403, json: { secret: otherRedeemed.body.secret } });
    await send('GET', '/v1/me/devices', { token: collected.body.token });
    await send('GET', '/v1/me/devices?limit=1', { status: 400, request: 'invalid' });
    await send('DELETE', `/v1/me/devices/${collected.body.device_id}`, { status: 404, token: bob });
    await send('DELETE', `/v1/me/devices/${collected.body.device_id}?wipe=true`);

    // Every operation was met at least once.
    expect(checker.operations().filter((op) => !checker.seen.has(op))).toEqual([]);
  });

  it('429 answers are the documented ones (with Retry-After)', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1', RATE_LIMIT_BURST_SECONDS: '60' } });
    try {
      let last: Result | null = null;
      for (let i = 0; i < 20 && last?.status !== 429; i++) last = await send('GET', '/v1/conversations', { base: limited.baseUrl, status: 'any' });
      expect(last!.status).toBe(429);
      expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await limited.stop();
    }
  });
});

/** A live stream: its answer's status and headers (then it is closed). */
async function stream(target: string) {
  const abort = new AbortController();
  const headers = { authorization: `Bearer ${s.tokens.alice}` };
  const response = await fetch(s.baseUrl + target, { headers, signal: abort.signal });
  const request: SentRequest = { method: 'GET', target, headers };
  const answer = { status: response.status, headers: response.headers, text: '' };
  abort.abort();
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(checker.answerProblems(request, { ...answer, headers: response.headers }).filter((p) => !p.includes('no body'))).toEqual([]);
  expect(checker.requestProblems(request)).toEqual([]);
}
