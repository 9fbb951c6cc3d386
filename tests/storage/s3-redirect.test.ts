// S3_PRESIGNED_REDIRECT=true: a valid signed /files/… GET is answered with a redirect to a
// short-lived presigned URL at the store, which serves the bytes with the same type and
// disposition; everything that needs no bytes (HEAD, 304, refusals) is still answered here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError } from '../helpers/api';
import { startS3Server, type S3TestServer } from '../helpers/s3';
import { startTestServer, type TestServer } from '../helpers/server';

let s3: S3TestServer;
let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

beforeAll(async () => {
  s3 = await startS3Server();
  const { env } = await s3.newBucket();
  s = await startTestServer({ env: { ...env, S3_PRESIGNED_REDIRECT: 'true' } });
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 'redirects' } })).body.id;
});
afterAll(async () => {
  await s?.stop();
  await s3?.stop();
});

const assetUrl = (fileUrl: string) => {
  const u = new URL(fileUrl);
  return s.baseUrl + u.pathname + u.search;
};
const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, redirect: 'manual' });

describe('presigned redirects', () => {
  it('a valid signed GET answers 302 to the store, which serves the bytes with the same type, disposition and ranges', async () => {
    const body = 'The quick brown fox jumps over the lazy dog';
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'fox ü.txt', bytes: body, type: 'text/plain' })).body;
    const r = await get(assetUrl(f.file_url));
    expect(r.status).toBe(302);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    const location = r.headers.get('location')!;
    expect(location.startsWith(`${s3.endpoint}/`)).toBe(true);
    expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('300');

    const fromStore = await fetch(location);
    expect(fromStore.status).toBe(200);
    expect(await fromStore.text()).toBe(body);
    expect(fromStore.headers.get('content-type')).toBe('text/plain');
    expect(fromStore.headers.get('content-disposition')).toBe(`inline; filename="fox _.txt"; filename*=UTF-8''fox%20%C3%BC.txt`);
    expect(fromStore.headers.get('cache-control')).toBe('private, no-store');
    const part = await fetch(location, { headers: { range: 'bytes=4-8' } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe('quick');

    // Following the redirect, as a browser or fetch() does.
    const followed = await fetch(assetUrl(f.file_url));
    expect(await followed.text()).toBe(body);
  });

  it('active content keeps its attachment disposition at the store', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'page.html', bytes: '<script>alert(1)</script>', type: 'text/html' })).body;
    const fromStore = await fetch(assetUrl(f.file_url));
    expect(fromStore.headers.get('content-type')).toBe('text/html');
    expect(fromStore.headers.get('content-disposition')).toMatch(/^attachment; /);
  });

  it('HEAD, 304 and an empty file are answered here; a bad signature is still 404, never a redirect', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'h.txt', bytes: 'head me' })).body;
    const head = await fetch(assetUrl(f.file_url), { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('7');
    expect(head.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = head.headers.get('etag')!;
    const cached = await get(assetUrl(f.file_url), { 'if-none-match': etag });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('location')).toBeNull();

    const empty = (await alice.upload({ conversation_id: conversationId }, { name: 'empty.txt', bytes: '' })).body;
    const e = await get(assetUrl(empty.file_url));
    expect(e.status).toBe(200);
    expect(await e.text()).toBe('');

    const u = new URL(f.file_url);
    const forged = `${s.baseUrl}${u.pathname}?id=${u.searchParams.get('id')}&sig=AAAA${u.searchParams.get('sig')!.slice(4)}`;
    const refused = await get(forged);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('location')).toBeNull();
    expectError({ status: refused.status, body: await refused.json() }, 404, 'resource_missing');
  });
});
