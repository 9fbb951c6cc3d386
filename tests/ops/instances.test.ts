// Two instances on one PostgreSQL database and one object store (s3rver), requests alternating
// between them: what one instance did, the other sees — bytes, idempotency records, the one
// conversation per contact, revoked tokens, deletions, live events. And a third instance
// starting while the first is uploading leaves that upload alone (the start-up sweep's grace).
import http from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/cli';
import { client, expectError } from '../helpers/api';
import { startDeployment, type Deployment } from '../helpers/instances';
import { openSse } from '../helpers/sse';
import type { TestServer } from '../helpers/server';
import { field, filePart, rawMultipart } from '../api/raw-multipart';

/** How long a stored token may still be accepted after it is revoked: the auth cache (lib/api/domain/tokens.ts, README). */
const AUTH_CACHE_TTL_MS = 10_000;

let deployment: Deployment;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  deployment = await startDeployment(2);
  [a, b] = deployment.instances as [TestServer, TestServer];
});
afterAll(() => deployment?.stop());

const on = (s: TestServer, token = s.tokens.alice) => client(() => s.baseUrl, token);
const assetPath = (fileUrl: string) => new URL(fileUrl).pathname + new URL(fileUrl).search;

/** Polls `check` until it holds or `ms` pass; returns whether it held. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `npm run token -- …` against the deployment's database. */
async function tokenCli(...args: string[]): Promise<string> {
  const { code, out, err } = await runCommand('token', args, { DATABASE_URL: deployment.databaseUrl });
  expect(code, err).toBe(0);
  return out.trim();
}

describe('two instances, one database, one object store', () => {
  it('a file uploaded through one is read, whole and by Range, through the other', async () => {
    const c = (await on(a).post('/v1/conversations', { json: { contact_id: 'shared-bytes' } })).body;
    const bytes = 'bytes stored by A, read by B';
    const f = (await on(a).upload({ conversation_id: c.id }, { name: 'shared.txt', bytes, type: 'text/plain' })).body;
    expect((await on(b).get(`/v1/files/${f.id}`)).body).toMatchObject({ id: f.id, file_size: bytes.length });
    const anon = client(() => b.baseUrl);
    const whole = await anon.get(assetPath(f.file_url));
    expect(whole.status).toBe(200);
    expect(whole.text).toBe(bytes);
    const part = await anon.get(assetPath(f.file_url), { headers: { range: 'bytes=9-14' } });
    expect(part.status).toBe(206);
    expect(part.text).toBe(bytes.slice(9, 15));
    expect(part.headers.get('content-range')).toBe(`bytes 9-14/${bytes.length}`);
  });

  it('an Idempotency-Key used on one is replayed by the other: same answer, Idempotent-Replayed: true', async () => {
    const key = { 'idempotency-key': 'across-instances-1' };
    const first = await on(a).post('/v1/conversations', { json: { contact_id: 'idem-across' }, headers: key });
    expect(first.status).toBe(201);
    const again = await on(b).post('/v1/conversations', { json: { contact_id: 'idem-across' }, headers: key });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    // An upload too: the replay on B stores nothing new and answers A's file.
    const upKey = { 'idempotency-key': 'across-instances-upload' };
    const up1 = await on(a).upload({ conversation_id: first.body.id }, { name: 'once.txt', bytes: 'once' }, { headers: upKey });
    expect(up1.status).toBe(201);
    const keysBefore = await a.blobs.stored();
    const up2 = await on(b).upload({ conversation_id: first.body.id }, { name: 'once.txt', bytes: 'once' }, { headers: upKey });
    expect(up2.status).toBe(201);
    expect(up2.headers.get('idempotent-replayed')).toBe('true');
    expect(up2.body.id).toBe(up1.body.id);
    expect(await a.blobs.stored()).toEqual(keysBefore);
  });

  it('concurrent creates of one contact across instances: exactly one 201, every other 409 with the same existing_id', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => on(i % 2 ? a : b).post('/v1/conversations', { json: { contact_id: 'raced-across' } })),
    );
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of answers.filter((r) => r.status !== 201)) {
      expectError(r, 409, 'conversation_exists');
      expect(r.body.existing_id).toBe(created[0]!.body.id);
    }
  });

  it('a token revoked through one is refused by the other within the auth cache’s time', async () => {
    const token = await tokenCli('create', '--user', 'carol', '--label', 'instances test');
    // Both instances have seen it (and cached it).
    expect((await on(a, token).get('/v1/me')).body).toEqual({ id: 'carol' });
    expect((await on(b, token).get('/v1/me')).body).toEqual({ id: 'carol' });
    expect(await tokenCli('revoke', token)).toContain('revoked');
    const refused = async (s: TestServer) => (await on(s, token).get('/v1/me')).status === 401;
    // Waits on the refusal itself; the promise is "within the cache's time", with room for a slow machine.
    expect(await eventually(() => refused(b), AUTH_CACHE_TTL_MS + 5_000)).toBe(true);
    expect(await eventually(() => refused(a), AUTH_CACHE_TTL_MS + 5_000)).toBe(true);
  });

  it('a file deleted through one is gone on the other: 404 for the file and its URL, its bytes gone from the store', async () => {
    const c = (await on(a).post('/v1/conversations', { json: { contact_id: 'deleted-across' } })).body;
    const f = (await on(b).upload({ conversation_id: c.id }, { name: 'gone.txt', bytes: 'soon gone' })).body;
    const key = (await a.service.db.selectFrom('files').select('storage_key').where('id', '=', f.id).executeTakeFirstOrThrow()).storage_key;
    expect(await b.blobs.stored()).toContain(key);
    expect((await on(a).del(`/v1/files/${f.id}`)).status).toBe(204);
    expectError(await on(b).get(`/v1/files/${f.id}`), 404, 'resource_missing');
    expect((await client(() => b.baseUrl).get(assetPath(f.file_url))).status).toBe(404);
    // Removed by the deleting instance's deletion pass, after its commit.
    expect(await eventually(async () => !(await b.blobs.stored()).includes(key), 10_000)).toBe(true);
  });

  it('a live stream on one receives a change made through the other', async () => {
    const stream = await openSse(`${b.baseUrl}/v1/events/stream`, { authorization: `Bearer ${b.tokens.alice}` });
    try {
      const made = (await on(a).post('/v1/conversations', { json: { contact_id: 'live-across' } })).body;
      const message = await stream.next((m) => m.data.includes(made.id));
      expect(JSON.parse(message.data)).toMatchObject({ type: 'conversation.created', object: { id: made.id } });
    } finally {
      stream.close();
    }
  });
});

/** A multipart upload whose body the test sends piece by piece; `done` is the answer. */
function slowUpload(s: TestServer, conversationId: string, content: Buffer) {
  const { body, contentType } = rawMultipart([field('conversation_id', conversationId), filePart('slow.bin', new Uint8Array(content), 'application/octet-stream')]);
  const request = http.request(`${s.baseUrl}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.tokens.alice}`, 'content-type': contentType, 'content-length': body.length },
  });
  const done = new Promise<{ status: number; body: any }>((resolve, reject) => {
    request.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      response.once('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    request.once('error', reject);
  });
  return { body: Buffer.from(body), request, done };
}

describe('an instance starting while another uploads (the start-up sweep)', () => {
  it('bytes finished but whose row is not committed yet survive the other instance’s start', async () => {
    const c = (await on(a).post('/v1/conversations', { json: { contact_id: 'sweep-finished' } })).body;
    const before = await a.blobs.stored();
    // Holds every write to `files`: A's upload stores its bytes, then waits to insert its row.
    const holder = new pg.Client({ connectionString: deployment.databaseUrl });
    await holder.connect();
    let late: TestServer | null = null;
    try {
      await holder.query('begin');
      await holder.query('lock table files in exclusive mode');
      const upload = on(a).upload({ conversation_id: c.id }, { name: 'in-flight.txt', bytes: 'finished, not yet committed' });
      expect(await eventually(async () => (await a.blobs.stored()).length > before.length, 20_000)).toBe(true);
      // Another instance starts now, on the same database and bucket (reading `files` is not blocked).
      late = await deployment.add();
      await holder.query('rollback');
      const answer = await upload;
      expect(answer.status).toBe(201);
      const bytes = await client(() => late!.baseUrl).get(assetPath(answer.body.file_url));
      expect(bytes.status).toBe(200);
      expect(bytes.text).toBe('finished, not yet committed');
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
    }
  });

  it('a multipart upload still arriving survives the other instance’s start', async () => {
    const c = (await on(a).post('/v1/conversations', { json: { contact_id: 'sweep-unfinished' } })).body;
    // Larger than one 5 MiB part: the object store holds an incomplete multipart upload meanwhile.
    const content = Buffer.alloc(7 * 1024 * 1024, 7);
    content.write('the first bytes of a large upload');
    const upload = slowUpload(a, c.id, content);
    const half = 6 * 1024 * 1024;
    upload.request.write(upload.body.subarray(0, half));
    expect(await eventually(async () => (await a.blobs.unfinished()).length > 0, 30_000)).toBe(true);
    await deployment.add();
    upload.request.end(upload.body.subarray(half));
    const answer = await upload.done;
    expect(answer.status).toBe(201);
    const bytes = await fetch(b.baseUrl + assetPath(answer.body.file_url));
    expect(bytes.status).toBe(200);
    expect(Buffer.from(await bytes.arrayBuffer()).equals(content)).toBe(true);
  });
});
