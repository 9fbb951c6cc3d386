// A store without the housekeeping operations (issue 17): s3rver 3.7 exactly as published has no
// ListMultipartUploads (nor AbortMultipartUpload), like some S3-compatible stores. The start-up
// sweep of stale multipart uploads uses it; its absence costs a warning in the log, not the
// service: the service starts and serves uploads and downloads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api';
import { startS3Server, type S3TestServer } from '../helpers/s3';
import { startTestServer, type TestServer } from '../helpers/server';

let s3: S3TestServer;
let s: TestServer | undefined;
const errors: string[] = [];

beforeAll(async () => {
  s3 = await startS3Server({ asPublished: true });
});
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
});

describe('an object store without ListMultipartUploads', () => {
  it('the service starts with a warning and serves files', async () => {
    const { env } = await s3.newBucket();
    // sweepGraceMs 0: the sweep runs over everything, as a start long after a crash would.
    s = await startTestServer({ env, sweepGraceMs: 0, log: { log: () => {}, error: (...args: unknown[]) => errors.push(args.map(String).join(' ')) } });
    expect(errors.some((line) => /warning: the start-up sweep of unfinished uploads was skipped/.test(line))).toBe(true);
    const alice = client(() => s!.baseUrl, s.tokens.alice);
    const conversation = (await alice.post('/v1/conversations', { json: { contact_id: 'housekeeping' } })).body.id;
    const form = new FormData();
    form.set('conversation_id', conversation);
    form.set('file', new Blob(['lab result'], { type: 'text/plain' }), 'result.txt');
    const uploaded = await fetch(`${s.baseUrl}/v1/files`, { method: 'POST', headers: { Authorization: `Bearer ${s.tokens.alice}` }, body: form });
    expect(uploaded.status).toBe(201);
    const file = await uploaded.json();
    const bytes = await fetch(file.file_url);
    expect(bytes.status).toBe(200);
    expect(await bytes.text()).toBe('lab result');
  });
});
