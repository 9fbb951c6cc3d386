// Exactly once through the proxy (issue 27, items 1, 3 and 4): proxy mode in front of a PLAIN
// upstream (PARLEY_EXTENSIONS=none: it ignores Idempotency-Key and has no /v1/me), behind a gate
// that, on a seeded schedule, loses answers after the upstream acted, answers 503 before or after
// acting, and resets connections — on the deliveries (POST /v1/files) and on the proxy's own
// look for what arrived (GET /v1/files). Clients upload as the app does (create, PATCH, and after
// any failure HEAD and go on), several at once, two of them with the same name and size into the
// same conversation. Whatever the schedule: one file upstream per upload, with its own bytes.
import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { createHttpServer, listen } from '../../lib/api/http/node-server';
import { createProxy, type ApiProxy } from '../../lib/proxy/proxy';
import { client } from '../helpers/api';
import { fileDeliveries, startGate, type Fault, type Gate } from '../helpers/lossy-gate';
import { GENEROUS_RATE_LIMITS, startTestServer, tempDataDir, TEST_TOKENS, type TestServer } from '../helpers/server';

const MAX = 256 * 1024;
const OFFSET_STREAM = 'application/offset+octet-stream';
const TUS = { 'tus-resumable': '1.0.0' };
type Client = ReturnType<typeof client>;

interface StagingProxy {
  baseUrl: string;
  proxy: ApiProxy;
  stop(): Promise<void>;
}

async function startStagingProxy(upstream: string, answerWithinMs: number): Promise<StagingProxy> {
  const config = readConfig({ UPSTREAM_BASE_URL: upstream, DATA_DIR: tempDataDir(), MAX_UPLOAD_BYTES: String(MAX), ...GENEROUS_RATE_LIMITS });
  const quiet = { log: () => {}, error: () => {} };
  const proxy = createProxy(config, quiet, { uploadRetry: { firstMs: 1, maxMs: 5 }, uploadAnswerWithinMs: answerWithinMs });
  const server: http.Server = createHttpServer((request) => proxy.dispatch(request), undefined, config);
  const port = await listen(server, 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    proxy,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await proxy.close();
    },
  };
}

const b64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');
const pattern = (size: number, seed: number) => {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed * 7) % 256;
  return bytes;
};
const create = (c: Client, conversation: string, filename: string, length: number, key: string, body?: Buffer) =>
  c.post('/v1/uploads', {
    headers: {
      ...TUS,
      'upload-length': String(length),
      'upload-metadata': `filename ${b64(filename)},conversation_id ${b64(conversation)}`,
      'idempotency-key': key,
      ...(body ? { 'content-type': OFFSET_STREAM } : {}),
    },
    body: body as BodyInit | undefined,
  });
const patch = (c: Client, location: string, offset: number, bytes: Buffer) =>
  c.call('PATCH', location, { headers: { ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': String(offset) }, body: bytes as BodyInit });
const head = (c: Client, location: string) => c.call('HEAD', location, { headers: TUS });

/**
 * An upload as the app sends it: a creation (with the whole file when `whole`), PATCHes of
 * `chunk` bytes, and after any failure (an answer lost, a 503) a HEAD and on from its offset.
 * `loses(n)`: whether the client loses the answer of its n-th request (it acted on the proxy).
 */
async function uploadAsTheApp(c: Client, conversation: string, filename: string, bytes: Buffer, o: { key: string; whole: boolean; chunk: number; loses: (n: number) => boolean }): Promise<string> {
  let location: string | null = null;
  let n = 0;
  for (let round = 0; round < 200; round++) {
    if (location === null) {
      const r = await create(c, conversation, filename, bytes.length, o.key, o.whole ? bytes : undefined);
      if (o.loses(n++) || r.status !== 201) continue; // the same key gives the same upload again
      location = r.headers.get('location');
      if (r.headers.get('upload-file-id')) return r.headers.get('upload-file-id')!;
      continue;
    }
    const h = await head(c, location);
    if (o.loses(n++) || h.status !== 200) continue;
    const fileId = h.headers.get('upload-file-id');
    if (fileId) return fileId;
    const offset = Number(h.headers.get('upload-offset'));
    if (offset === bytes.length) continue; // every byte there, no file yet: ask again
    const r = await patch(c, location, offset, bytes.subarray(offset, offset + o.chunk));
    if (o.loses(n++)) continue;
    if (r.status === 204 && r.headers.get('upload-file-id')) return r.headers.get('upload-file-id')!;
  }
  throw new Error(`${filename}: no file after 200 rounds`);
}

let upstream: TestServer;
let gate: Gate;
let p: StagingProxy;
let alice: Client;
let direct: Client;

beforeAll(async () => {
  upstream = await startTestServer({ env: { PARLEY_EXTENSIONS: 'none', MAX_UPLOAD_BYTES: String(MAX) } });
  gate = await startGate(upstream.baseUrl);
  p = await startStagingProxy(gate.url, 500);
  alice = client(() => p.baseUrl, TEST_TOKENS.alice);
  direct = client(() => upstream.baseUrl, TEST_TOKENS.alice);
});
afterAll(async () => {
  await p?.stop();
  await gate?.stop();
  await upstream?.stop();
});

async function newConversation(contact: string): Promise<string> {
  const r = await direct.post('/v1/conversations', { json: { contact_id: contact } });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}
const upstreamFiles = async (conversation: string) => (await direct.get(`/v1/files?conversation_id=${conversation}&limit=100`)).body.data as Array<{ id: string; filename: string }>;
async function bytesOf(fileId: string): Promise<Buffer> {
  const file = (await direct.get(`/v1/files/${fileId}`)).body;
  const u = new URL(file.file_url);
  const r = await fetch(upstream.baseUrl + u.pathname + u.search);
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}

const FAULTS: Array<Fault | undefined> = [undefined, undefined, 'lose', 'lose', '503', '503-after', 'reset'];

describe('proxy mode in front of an upstream that ignores Idempotency-Key and loses answers', () => {
  it('the upstream ignores the key: a repeated POST /v1/files there makes a second file (what the proxy must never do)', async () => {
    const conversation = await newConversation('plain-repeat');
    const form = () => {
      const f = new FormData();
      f.set('conversation_id', conversation);
      f.set('file', new Blob([Buffer.from('same')]), 'same.txt');
      return f;
    };
    for (let i = 0; i < 2; i++) expect((await direct.post('/v1/files', { body: form(), headers: { 'idempotency-key': 'one-key' } })).status).toBe(201);
    expect(await upstreamFiles(conversation)).toHaveLength(2);
  });

  it('any seeded schedule of lost answers, 503s and resets: one file upstream per upload, with its bytes', async () => {
    let run = 0;
    let lostAfterActing = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...FAULTS), { minLength: 4, maxLength: 24 }),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        async (schedule, clientLosses) => {
          run++;
          const conversation = await newConversation(`once-${run}`);
          const faults = [...schedule];
          gate.decide = (method, path) => {
            if (path !== '/v1/files' || (method !== 'POST' && method !== 'GET')) return undefined;
            const fault = faults.shift();
            if (method === 'POST' && (fault === 'lose' || fault === '503-after')) lostAfterActing++;
            return fault;
          };
          // The client loses an answer now and then (one in eight), never the same request forever.
          const loses = (salt: number) => (k: number) => k < 30 && clientLosses[(k + salt) % 40]! && (k + salt) % 8 === 0;
          const uploads = [
            { name: 'photo.jpg', bytes: pattern(3000, run * 4 + 1), whole: false, chunk: 1000 },
            { name: 'photo.jpg', bytes: pattern(3000, run * 4 + 2), whole: false, chunk: 1500 },
            { name: 'letter.pdf', bytes: pattern(700, run * 4 + 3), whole: true, chunk: 700 },
            { name: 'ecg.png', bytes: pattern(2200, run * 4 + 4), whole: false, chunk: 2200 },
          ];
          const ids = await Promise.all(
            uploads.map((u, i) => uploadAsTheApp(alice, conversation, u.name, u.bytes, { key: `once-${run}-${i}`, whole: u.whole, chunk: u.chunk, loses: loses(i * 5) })),
          );
          gate.decide = null;
          const files = await upstreamFiles(conversation);
          expect(new Set(ids).size).toBe(uploads.length);
          expect(files.map((f) => f.id).sort()).toEqual([...ids].sort());
          for (const [i, id] of ids.entries()) expect((await bytesOf(id)).equals(uploads[i]!.bytes), `upload ${i}'s bytes`).toBe(true);
        },
      ),
      { numRuns: 25, endOnFailure: true },
    );
    // The case that matters happened: deliveries whose answer was lost after the upstream acted.
    expect(lostAfterActing).toBeGreaterThan(5);
  });

  it('an upstream answering 503: the last PATCH and HEAD are answered (503, Retry-After, the offset), the bytes kept; once it recovers, one file', async () => {
    const conversation = await newConversation('busy-upstream');
    const bytes = pattern(4000, 99);
    const created = await create(alice, conversation, 'busy.bin', bytes.length, 'busy-1');
    expect(created.status, created.text).toBe(201);
    const location = created.headers.get('location')!;
    expect((await patch(alice, location, 0, bytes.subarray(0, 1000))).status).toBe(204);
    const before = fileDeliveries(gate).length;
    // From now on every delivery is refused as busy, for as long as it takes.
    gate.decide = (method, path) => (method === 'POST' && path === '/v1/files' ? '503' : undefined);
    const last = await patch(alice, location, 1000, bytes.subarray(1000));
    expect(last.status, last.text).toBe(503);
    expect(last.body.code).toBe('service_unavailable');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fileDeliveries(gate).length).toBeGreaterThan(before); // it was tried, and is tried still
    const asked = await head(alice, location);
    expect(asked.status).toBe(503);
    expect(asked.headers.get('retry-after')).not.toBeNull();
    expect(asked.headers.get('upload-offset')).toBe(String(bytes.length));
    expect(await upstreamFiles(conversation)).toEqual([]);

    // The upstream recovers: the delivery that went on lands; a HEAD tells the file.
    gate.decide = null;
    let fileId: string | null = null;
    while (fileId === null) {
      const h = await head(alice, location);
      if (h.status === 200) fileId = h.headers.get('upload-file-id');
    }
    expect((await upstreamFiles(conversation)).map((f) => f.id)).toEqual([fileId]);
    expect((await bytesOf(fileId)).equals(bytes)).toBe(true);
    // A repeat of the last PATCH now tells the same file, and nothing more goes upstream.
    const deliveries = fileDeliveries(gate).length;
    const again = await patch(alice, location, 1000, bytes.subarray(1000));
    expect(again.headers.get('upload-file-id')).toBe(fileId);
    expect(fileDeliveries(gate).length).toBe(deliveries);
  });
});
