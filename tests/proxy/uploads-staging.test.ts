// Proxy mode's resumable uploads (lib/proxy/uploads.ts) in front of a PLAIN upstream: an embedded
// server with only the brief's contract (PARLEY_EXTENSIONS idempotency,me), behind a gate that
// answers 404 for /v1/uploads and /v1/events (so nothing of tus or the feed is the upstream's) and
// that can fail the deliveries: connection reset, 503, an answer lost after the upstream acted, an
// answer held back, the upstream down. The proxy stages the bytes in its own DATA_DIR and hands a
// finished upload upstream as one POST /v1/files with the creation's Idempotency-Key.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { createHttpServer, listen } from '../../lib/api/http/node-server';
import { createProxy, type ApiProxy } from '../../lib/proxy/proxy';
import { client, expectError } from '../helpers/api';
import { fileDeliveries, startGate, type Gate } from '../helpers/lossy-gate';
import { GENEROUS_RATE_LIMITS, startTestServer, tempDataDir, TEST_TOKENS, type TestServer } from '../helpers/server';

const MAX = 64 * 1024;
const OFFSET_STREAM = 'application/offset+octet-stream';
const TUS = { 'tus-resumable': '1.0.0' };
const PLAIN = { PARLEY_EXTENSIONS: 'idempotency,me' };

interface StagingProxy {
  baseUrl: string;
  proxy: ApiProxy;
  dir: string;
  stop(): Promise<void>;
}

/**
 * A proxy-mode server in front of `upstream`; `onDeliveryFailure` hears each failed delivery
 * attempt; `quiet`: other errors are kept, not printed (a test that stops a proxy mid-delivery).
 */
async function startStagingProxy(
  upstream: string,
  options: { dataDir?: string; onDeliveryFailure?: () => void; quiet?: boolean; answerWithinMs?: number } = {},
): Promise<StagingProxy> {
  const config = readConfig({ UPSTREAM_BASE_URL: upstream, DATA_DIR: options.dataDir ?? tempDataDir(), MAX_UPLOAD_BYTES: String(MAX), ...GENEROUS_RATE_LIMITS });
  const log = {
    log: () => {},
    error: (...args: unknown[]) => {
      if (String(args[0]).includes('delivering upload')) options.onDeliveryFailure?.();
      else if (!options.quiet) console.error(...args);
    },
  };
  // Deliveries retry quickly here; the order of events, not the clock, is what the tests look at.
  const proxy = createProxy(config, log, { uploadRetry: { firstMs: 2, maxMs: 10 }, uploadAnswerWithinMs: options.answerWithinMs });
  const server = createHttpServer((request) => proxy.dispatch(request), undefined, config);
  const port = await listen(server, 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    proxy,
    dir: proxy.uploads!.dir,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        proxy.close();
      }),
  };
}

const b64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');
const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');
const pattern = (size: number, seed = 1) => {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed) % 256;
  return bytes;
};

type Client = ReturnType<typeof client>;
const create = (c: Client, length: number, fields: Record<string, string>, o: { body?: Buffer; headers?: Record<string, string> } = {}) =>
  c.post('/v1/uploads', {
    headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': metadata(fields), ...(o.body ? { 'content-type': OFFSET_STREAM } : {}), ...o.headers },
    body: o.body as BodyInit | undefined,
  });
const patch = (c: Client, location: string, offset: number, bytes: Buffer) =>
  c.call('PATCH', location, { headers: { ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': String(offset) }, body: bytes as BodyInit });
const head = (c: Client, location: string) => c.call('HEAD', location, { headers: TUS });

/** A PATCH over a raw connection, for cutting it: the request, and its answer's status (null: none). */
function rawPatch(baseUrl: string, location: string, offset: number, length: number) {
  const url = new URL(baseUrl + location);
  const request = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'PATCH',
    headers: { authorization: `Bearer ${TEST_TOKENS.alice}`, ...TUS, 'content-type': OFFSET_STREAM, 'upload-offset': String(offset), 'content-length': String(length) },
  });
  const answer = new Promise<number | null>((resolve) => {
    request.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    request.on('error', () => resolve(null));
  });
  return { request, answer };
}

/** The proxy's staging database, read as it is now (white-box). */
function stagedRows(dir: string): Array<Record<string, any>> {
  const file = path.join(dir, 'parley.sqlite');
  if (!fs.existsSync(file)) return [];
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('select * from uploads').all() as Array<Record<string, any>>;
  } finally {
    db.close();
  }
}
const stagedRow = (dir: string, id: string) => stagedRows(dir).find((r) => r.id === id);
/** Staged bytes: stored chunks and unfinished writes. */
function stagedFiles(dir: string): string[] {
  const found: string[] = [];
  for (const sub of ['files', 'tmp']) {
    const root = path.join(dir, sub);
    if (!fs.existsSync(root)) continue;
    for (const entry of fs.readdirSync(root, { recursive: true }).map(String)) if (fs.statSync(path.join(root, entry)).isFile()) found.push(`${sub}/${entry}`);
  }
  return found.sort();
}
/** Until `condition` holds: a condition on state, polled (nothing here waits for a time to pass). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

let upstream: TestServer;
let gate: Gate;
let p: StagingProxy;
let alice: Client;
let bob: Client;
let onDeliveryFailure: () => void = () => {};

beforeAll(async () => {
  upstream = await startTestServer({ env: { ...PLAIN, MAX_UPLOAD_BYTES: String(MAX) } });
  gate = await startGate(upstream.baseUrl);
  p = await startStagingProxy(gate.url, { onDeliveryFailure: () => onDeliveryFailure() });
  alice = client(() => p.baseUrl, TEST_TOKENS.alice);
  bob = client(() => p.baseUrl, TEST_TOKENS.bob);
});
afterAll(async () => {
  await p?.stop();
  await gate?.stop();
  await upstream?.stop();
});
beforeEach(() => {
  gate.faults = [];
  gate.noMe = false;
  gate.decide = null;
  onDeliveryFailure = () => {};
});

async function newConversation(c: Client, contact: string): Promise<string> {
  const r = await c.post('/v1/conversations', { json: { contact_id: contact } });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}
const upstreamFiles = async (conversation: string) =>
  (await client(() => upstream.baseUrl, TEST_TOKENS.alice).get(`/v1/files?conversation_id=${conversation}&limit=100`)).body.data as Array<{ id: string; file_url: string }>;
async function bytesOf(fileId: string): Promise<Buffer> {
  const file = (await alice.get(`/v1/files/${fileId}`)).body;
  const u = new URL(file.file_url);
  const r = await fetch(p.baseUrl + u.pathname + u.search);
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}

describe('proxy mode: resumable uploads staged by the proxy, in front of an upstream without them', () => {
  it('the proxy offers /v1/uploads; the upstream has none', async () => {
    const direct = await fetch(`${gate.url}/v1/uploads`, { method: 'OPTIONS' });
    expect(direct.status).toBe(404);
    const r = await alice.call('OPTIONS', '/v1/uploads', { token: null });
    expect(r.status).toBe(204);
    expect(r.headers.get('tus-version')).toBe('1.0.0');
    expect(r.headers.get('tus-max-size')).toBe(String(MAX));
  });

  it('an upload cut mid-PATCH and resumed arrives byte for byte upstream, as exactly one file', async () => {
    const conversation = await newConversation(alice, 'staging-cut');
    const before = gate.requests.length;
    const bytes = pattern(40_000);
    const created = await create(alice, bytes.length, { filename: 'a "quoted" name.bin', conversation_id: conversation });
    expect(created.status, created.text).toBe(201);
    const location = created.headers.get('location')!;
    const id = location.split('/').pop()!;
    expect(location).toMatch(/^\/v1\/uploads\/[A-Za-z0-9]{16}$/);

    // 10,000 bytes arrive, then the connection ends 30,000 short of what it announced.
    const cut = rawPatch(p.baseUrl, location, 0, bytes.length);
    cut.request.write(bytes.subarray(0, 10_000));
    await until(() => stagedRow(p.dir, id)?.writer != null);
    cut.request.socket!.end();
    await until(() => stagedRow(p.dir, id)?.writer == null);
    await cut.answer;
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('10000');
    expect(stagedFiles(p.dir).filter((f) => f.startsWith('files/'))).toHaveLength(1);
    expect(fileDeliveries(gate)).toHaveLength(0);

    const rest = await patch(alice, location, 10_000, bytes.subarray(10_000));
    expect(rest.status, rest.text).toBe(204);
    const fileId = rest.headers.get('upload-file-id')!;
    expect(fileId).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(rest.headers.get('upload-offset')).toBe(String(bytes.length));

    // Exactly one file upstream, with these bytes, the declared name, sniffed there.
    const files = await upstreamFiles(conversation);
    expect(files.map((f) => f.id)).toEqual([fileId]);
    expect((await alice.get(`/v1/files/${fileId}`)).body).toMatchObject({ filename: 'a "quoted" name.bin', file_size: bytes.length });
    expect((await bytesOf(fileId)).equals(bytes)).toBe(true);
    // One POST /v1/files, keyed by the upload id (no key at creation); nothing else of tus upstream.
    const sent = gate.requests.slice(before);
    expect(sent.filter((r) => r.path.startsWith('/v1/uploads'))).toEqual([]);
    expect(fileDeliveries({ ...gate, requests: sent })).toEqual([{ method: 'POST', path: '/v1/files', key: id }]);
    // The staged bytes went once the file was made.
    expect(stagedFiles(p.dir)).toEqual([]);
    expect((await head(alice, location)).headers.get('upload-file-id')).toBe(fileId);
  });

  it('the upstream down, resetting, 503 and losing its answer at completion: retried until it answers; one file', async () => {
    const conversation = await newConversation(alice, 'staging-retry');
    const key = `staging-retry-${Math.random()}`;
    const bytes = pattern(5000, 7);
    const created = await create(alice, bytes.length, { filename: 'retried.bin', conversation_id: conversation }, { body: bytes.subarray(0, 1000), headers: { 'idempotency-key': key } });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('upload-offset')).toBe('1000');
    const location = created.headers.get('location')!;
    const before = fileDeliveries(gate).length;

    // The upstream goes down as the delivery starts, and is back after two refused connections;
    // then a reset, a 503, and an answer lost after the upstream made the file.
    let failures = 0;
    onDeliveryFailure = () => {
      failures++;
      if (failures === 3) void gate.up();
    };
    gate.faults = ['down', 'reset', '503', 'lose'];
    const done = await patch(alice, location, 1000, bytes.subarray(1000));
    expect(done.status, done.text).toBe(204);
    const fileId = done.headers.get('upload-file-id')!;
    expect(fileId).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(failures).toBe(6); // going down, refused twice (then back), a reset, a 503, a lost answer

    // Four attempts reached the gate (down, reset, 503, lost), all with the creation's key; the
    // lost answer's file was found upstream before a fifth went (delivered.ts): it is the one.
    const attempts = fileDeliveries(gate).slice(before);
    expect(attempts).toHaveLength(4);
    expect(new Set(attempts.map((a) => a.key))).toEqual(new Set([key]));
    expect((await upstreamFiles(conversation)).map((f) => f.id)).toEqual([fileId]);
    expect((await bytesOf(fileId)).equals(bytes)).toBe(true);
    expect(stagedFiles(p.dir)).toEqual([]);
  });

  it('a lost completion answer: the repeated last PATCH and a HEAD tell the same file; none is made twice', async () => {
    const conversation = await newConversation(alice, 'staging-lost');
    const bytes = pattern(3000, 3);
    const created = await create(alice, bytes.length, { filename: 'lost.bin', conversation_id: conversation });
    const location = created.headers.get('location')!;
    const id = location.split('/').pop()!;
    expect((await patch(alice, location, 0, bytes.subarray(0, 1000))).status).toBe(204);
    const before = fileDeliveries(gate).length;

    // The last PATCH reaches the proxy whole; the phone's connection dies before the answer.
    gate.faults = ['hold'];
    const last = rawPatch(p.baseUrl, location, 1000, 2000);
    last.request.end(bytes.subarray(1000));
    await gate.held;
    last.request.destroy();
    expect(await last.answer).toBeNull();
    // While the file is still being made upstream, the phone asks again: both wait for it.
    const repeat = patch(alice, location, 1000, bytes.subarray(1000));
    const asked = head(alice, location);
    gate.release();
    const [again, state] = await Promise.all([repeat, asked]);
    expect(again.status, again.text).toBe(204);
    const fileId = again.headers.get('upload-file-id')!;
    expect(fileId).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(again.headers.get('upload-offset')).toBe(String(bytes.length));
    expect(state.headers.get('upload-file-id')).toBe(fileId);
    expect(stagedRow(p.dir, id)?.file_id).toBe(fileId);
    // Later repeats too, and still one delivery, one file.
    expect((await patch(alice, location, 1000, bytes.subarray(1000))).headers.get('upload-file-id')).toBe(fileId);
    expect((await head(alice, location)).headers.get('upload-file-id')).toBe(fileId);
    expect(fileDeliveries(gate).slice(before)).toHaveLength(1);
    expect((await upstreamFiles(conversation)).map((f) => f.id)).toEqual([fileId]);
    expect((await bytesOf(fileId)).equals(bytes)).toBe(true);
  });

  for (const noMe of [false, true]) {
    it(`uploads belong to the token's user (${noMe ? 'an upstream without /v1/me: the token' : 'GET /v1/me'}): another's is a missing one`, async () => {
      gate.noMe = noMe;
      const conversation = await newConversation(alice, `staging-iso-${noMe}`);
      const created = await create(alice, 8, { filename: 'mine.txt', conversation_id: conversation });
      expect(created.status, created.text).toBe(201);
      const location = created.headers.get('location')!;
      expect((await patch(alice, location, 0, Buffer.from('mine'))).status).toBe(204);
      expect((await head(bob, location)).status).toBe(404);
      expectError(await patch(bob, location, 4, Buffer.from('bob!')), 404, 'resource_missing');
      expectError(await bob.del(location, { headers: TUS }), 404, 'resource_missing');
      expect((await head(alice, location)).headers.get('upload-offset')).toBe('4');
      // A token the upstream refuses: 401 before anything else.
      expect((await client(() => p.baseUrl, 'not-a-token').call('HEAD', location, { headers: TUS })).status).toBe(401);
      const stranger = await create(client(() => p.baseUrl, 'not-a-token'), 4, { filename: 'x.txt', conversation_id: conversation }, { body: Buffer.from('abcd') });
      expectError(stranger, 401, 'unauthenticated');
      expect((await alice.del(location, { headers: TUS })).status).toBe(204);
      expect((await head(alice, location)).status).toBe(404);
    });
  }

  it('refuses before any byte is accepted: nothing is staged, nothing goes upstream', async () => {
    const conversation = await newConversation(alice, 'staging-refuse');
    const bobs = await newConversation(bob, 'staging-refuse-bob');
    const rowsBefore = stagedRows(p.dir).length;
    const filesBefore = stagedFiles(p.dir);
    const deliveriesBefore = fileDeliveries(gate).length;
    const body = Buffer.from('some bytes');
    const cases: Array<[Promise<Awaited<ReturnType<Client['call']>>>, number, string, string | undefined]> = [
      [create(alice, body.length, { filename: 'x.txt', conversation_id: 'AAAAAAAAAAAAAAAA' }, { body }), 404, 'resource_missing', 'conversation_id'],
      [create(alice, body.length, { filename: 'x.txt', conversation_id: bobs }, { body }), 404, 'resource_missing', 'conversation_id'],
      [create(alice, body.length, { filename: 'x.txt', conversation_id: 'not an id' }, { body }), 404, 'resource_missing', 'conversation_id'],
      [create(alice, body.length, { filename: 'x.txt' }, { body }), 400, 'parameter_missing', 'conversation_id'],
      [create(alice, body.length, { filename: 'x.txt', conversation_id: conversation, message_id: 'AAAAAAAAAAAAAAAA' }, { body }), 400, 'parameter_invalid', 'message_id'],
      [create(alice, body.length, { conversation_id: conversation }, { body }), 400, 'parameter_missing', 'filename'],
      [create(alice, body.length, { filename: 'evil\u202Etxt.exe', conversation_id: conversation }, { body }), 400, 'parameter_invalid', 'filename'],
      [create(alice, body.length, { filename: 'dir/', conversation_id: conversation }, { body }), 400, 'parameter_invalid', 'filename'],
      [create(alice, MAX + 1, { filename: 'big.bin', conversation_id: conversation }, { body }), 413, 'file_too_large', 'Upload-Length'],
      [create(client(() => p.baseUrl), body.length, { filename: 'x.txt', conversation_id: conversation }, { body }), 401, 'unauthenticated', undefined],
    ];
    for (const [i, [pending, status, code, param]] of cases.entries()) {
      const r = await pending;
      expect(r.status, `case ${i}: ${r.text}`).toBe(status);
      expectError(r, status, code, param);
    }
    expect(stagedRows(p.dir)).toHaveLength(rowsBefore);
    expect(stagedFiles(p.dir)).toEqual(filesBefore);
    expect(fileDeliveries(gate)).toHaveLength(deliveriesBefore);
  });

  it('a message_id is checked by the upstream at completion: its 404 is the answer, once; the upload ends', async () => {
    // The contract has no way to ask for a message without sending bytes (see lib/proxy/uploads.ts).
    const before = fileDeliveries(gate).length;
    const rowsBefore = stagedRows(p.dir).length;
    const filesBefore = stagedFiles(p.dir);
    const r = await create(alice, 5, { filename: 'x.txt', message_id: 'AAAAAAAAAAAAAAAA' }, { body: Buffer.from('12345') });
    expectError(r, 404, 'resource_missing', 'message_id');
    expect(r.headers.get('tus-resumable')).toBe('1.0.0');
    expect(fileDeliveries(gate).slice(before)).toHaveLength(1); // a 4xx is final: not retried
    expect(stagedRows(p.dir)).toHaveLength(rowsBefore);
    expect(stagedFiles(p.dir)).toEqual(filesBefore);
  });

  it('an upload whose conversation went meanwhile: the upstream 404 is final; its bytes are removed', async () => {
    const conversation = await newConversation(alice, 'staging-gone');
    const filesBefore = stagedFiles(p.dir);
    const created = await create(alice, 10, { filename: 'late.txt', conversation_id: conversation }, { body: Buffer.from('01234') });
    const location = created.headers.get('location')!;
    expect(stagedFiles(p.dir)).toHaveLength(filesBefore.length + 1);
    expect((await alice.del(`/v1/conversations/${conversation}`)).status).toBe(204);
    const before = fileDeliveries(gate).length;
    expectError(await patch(alice, location, 5, Buffer.from('56789')), 404, 'resource_missing', 'conversation_id');
    // The snapshot before the first POST (GET /v1/files of the conversation) already says so: no POST.
    expect(fileDeliveries(gate).slice(before)).toHaveLength(0);
    expect((await head(alice, location)).status).toBe(404);
    expect(stagedFiles(p.dir)).toEqual(filesBefore);
  });

  it('an upload terminated while its delivery is retried: the delivery stops, the last PATCH answers 404; nothing stays staged or arrives upstream', async () => {
    const conversation = await newConversation(alice, 'staging-terminated');
    const filesBefore = stagedFiles(p.dir);
    const bytes = pattern(5000, 13);
    const created = await create(alice, bytes.length, { filename: 'terminated.bin', conversation_id: conversation }, { body: bytes.subarray(0, 1000) });
    expect(created.status, created.text).toBe(201);
    const location = created.headers.get('location')!;
    const before = fileDeliveries(gate).length;
    // The upstream is busy (503) for as long as this test lasts: the delivery is retried.
    gate.faults = Array.from({ length: 100_000 }, () => '503' as const);
    const last = patch(alice, location, 1000, bytes.subarray(1000));
    await until(() => fileDeliveries(gate).length >= before + 2);
    const terminated = await alice.del(location, { headers: TUS });
    expect(terminated.status, terminated.text).toBe(204);
    // The delivery gives up at its next turn (the upload is gone), and the PATCH answers.
    expectError(await last, 404, 'resource_missing');
    gate.faults = [];
    const delivered = fileDeliveries(gate).length;
    expect((await head(alice, location)).status).toBe(404);
    expect(fileDeliveries(gate)).toHaveLength(delivered); // not tried again
    expect(stagedFiles(p.dir)).toEqual(filesBefore);
    expect(await upstreamFiles(conversation)).toEqual([]);
  });

  it('expiry removes the staged bytes of an unfinished upload', async () => {
    const conversation = await newConversation(alice, 'staging-expiry');
    const filesBefore = stagedFiles(p.dir);
    const created = await create(alice, 50, { filename: 'expiring.txt', conversation_id: conversation }, { body: Buffer.alloc(20, 1) });
    const location = created.headers.get('location')!;
    expect(stagedFiles(p.dir)).toHaveLength(filesBefore.length + 1);
    // Its expiry as HEAD tells it: counted from its last write, which may be a second after the creation's answer.
    const state = await head(alice, location);
    expect(state.headers.get('upload-offset')).toBe('20');
    const expiresAt = Math.floor(Date.parse(state.headers.get('upload-expires')!) / 1000);
    expect(await p.proxy.uploads!.expire(expiresAt - 3600)).toBe(0);
    expect((await head(alice, location)).headers.get('upload-offset')).toBe('20');
    expect(await p.proxy.uploads!.expire(expiresAt)).toBeGreaterThanOrEqual(1);
    expect((await head(alice, location)).status).toBe(404);
    expect(stagedFiles(p.dir)).toEqual([]);
    expect(filesBefore).toEqual([]);
    expect(fileDeliveries(gate).filter((r) => r.key === location.split('/').pop())).toEqual([]);
  });
  it('a proxy that stops while delivering: after its restart a HEAD finds the file the lost POST made, sending nothing again', async () => {
    const upstream2 = await startTestServer({ env: { ...PLAIN, MAX_UPLOAD_BYTES: String(MAX) } });
    const gate2 = await startGate(upstream2.baseUrl);
    const dataDir = tempDataDir();
    let first: StagingProxy | null = await startStagingProxy(gate2.url, { dataDir, quiet: true });
    let second: StagingProxy | null = null;
    try {
      const c = client(() => first!.baseUrl, TEST_TOKENS.alice);
      const conversation = (await c.post('/v1/conversations', { json: { contact_id: 'staging-restart' } })).body.id as string;
      const bytes = pattern(6000, 9);
      const created = await create(c, bytes.length, { filename: 'restart.bin', conversation_id: conversation }, { body: bytes.subarray(0, 2000) });
      const location = created.headers.get('location')!;
      const id = location.split('/').pop()!;
      // The last PATCH: every byte staged, the delivery under way (held at the gate); the proxy stops.
      gate2.faults = ['hold'];
      const last = rawPatch(first.baseUrl, location, 2000, 4000);
      last.request.end(bytes.subarray(2000));
      await gate2.held;
      await first.stop();
      first = null;
      expect(await last.answer).toBeNull();
      // The held request still reaches the upstream, which makes the file; nobody hears of it.
      gate2.release();
      const direct = client(() => upstream2.baseUrl, TEST_TOKENS.alice);
      await until(async () => (await direct.get(`/v1/files?conversation_id=${conversation}`)).body.data.length === 1);
      const made = (await direct.get(`/v1/files?conversation_id=${conversation}`)).body.data[0].id as string;

      second = await startStagingProxy(gate2.url, { dataDir });
      const c2 = client(() => second!.baseUrl, TEST_TOKENS.alice);
      expect(stagedRow(second.dir, id)?.file_id).toBeNull();
      // The phone resumes: HEAD. Every byte is staged and a POST went out before the stop, so the
      // restarted proxy looks upstream first, finds the file it made, and finishes the upload.
      const state = await head(c2, location);
      expect(state.status, state.text).toBe(200);
      expect(state.headers.get('upload-offset')).toBe(String(bytes.length));
      expect(state.headers.get('upload-file-id')).toBe(made);
      expect(stagedRow(second.dir, id)?.file_id).toBe(made);
      // A repeat of the last PATCH tells the same file.
      const again = await patch(c2, location, 2000, bytes.subarray(2000));
      expect(again.status, again.text).toBe(204);
      expect(again.headers.get('upload-file-id')).toBe(made);
      const deliveries = fileDeliveries(gate2);
      expect(deliveries).toHaveLength(1);
      expect(deliveries.map((d) => d.key)).toEqual([id]);
      expect((await direct.get(`/v1/files?conversation_id=${conversation}`)).body.data.map((f: { id: string }) => f.id)).toEqual([made]);
      expect(stagedFiles(second.dir)).toEqual([]);
    } finally {
      await first?.stop();
      await second?.stop();
      await gate2.stop();
      await upstream2.stop();
    }
  });
});
