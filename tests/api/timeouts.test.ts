// Clients that stall, on real sockets: the headers that never finish, a body that stops arriving,
// a body that trickles on past the whole-request limit. The server closes each such socket and
// removes the temporary bytes of the upload; the test waits on those events, not on time.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { client } from '../helpers/api';
import type { TestServer } from '../helpers/server';
import { objectStoreProject, tempFiles } from '../helpers/storage';
import { startTarget } from '../helpers/target';

interface RawConnection {
  socket: net.Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
}

function connect(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('error', () => {}); // a reset is one way of being closed
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

const BOUNDARY = 'stalled-upload-boundary';

/** The head of a multipart upload that announces 10 MB and sends the first `bytes` of the file. */
function uploadStart(port: number, token: string, conversationId: string, bytes: number): string {
  const body =
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="conversation_id"\r\n\r\n${conversationId}\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n` +
    'x'.repeat(bytes);
  return (
    `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 10000000\r\n\r\n${body}`
  );
}

async function untilTempFiles(s: TestServer, count: number) {
  await vi.waitFor(async () => expect((await tempFiles(s)).length).toBe(count), { timeout: 20_000, interval: 10 });
}

describe('headers and body idle timeouts (HEADERS_TIMEOUT_MS, BODY_IDLE_TIMEOUT_MS)', () => {
  let s: TestServer;
  let conversation: string;

  beforeAll(async () => {
    s = await startTarget({ env: { HEADERS_TIMEOUT_MS: '400', BODY_IDLE_TIMEOUT_MS: '400', REQUEST_TIMEOUT_MS: '600000' } });
    conversation = (await client(() => s.baseUrl, s.tokens.alice).post('/v1/conversations', { json: { contact_id: 'stall' } })).body.id;
  });
  afterAll(() => s?.stop());

  it('headers that never finish: 408 and the connection closes', async () => {
    const c = await connect(s.port);
    c.socket.write(`GET /v1/conversations HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.tokens.alice}\r\n`);
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  // Watches the upload's temporary file on disk (an object store buffers a small upload in memory).
  it.skipIf(objectStoreProject)('an upload whose body stops arriving: the connection closes and its temporary bytes are removed', async () => {
    const c = await connect(s.port);
    c.socket.write(uploadStart(s.port, s.tokens.alice, conversation, 64 * 1024));
    await untilTempFiles(s, 1);
    await c.closed;
    await untilTempFiles(s, 0);
    const files = await client(() => s.baseUrl, s.tokens.alice).get(`/v1/files?conversation_id=${conversation}`);
    expect(files.body.data).toEqual([]);
  });

  // Watches the upload's temporary file on disk (an object store buffers a small upload in memory).
  it.skipIf(objectStoreProject)('many stalled uploads at once: every connection closes, no temporary file stays', async () => {
    const connections = await Promise.all(Array.from({ length: 40 }, () => connect(s.port)));
    for (const c of connections) c.socket.write(uploadStart(s.port, s.tokens.alice, conversation, 1024));
    await Promise.all(connections.map((c) => c.closed));
    await untilTempFiles(s, 0);
  });

  it('a JSON body that stops arriving: the connection closes', async () => {
    const c = await connect(s.port);
    c.socket.write(
      `POST /v1/conversations HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.tokens.alice}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"contact_id":`,
    );
    await c.closed;
  });
});

describe('whole-request timeout (REQUEST_TIMEOUT_MS)', () => {
  let s: TestServer;
  let conversation: string;

  beforeAll(async () => {
    s = await startTarget({ env: { HEADERS_TIMEOUT_MS: '400', BODY_IDLE_TIMEOUT_MS: '600000', REQUEST_TIMEOUT_MS: '1500' } });
    conversation = (await client(() => s.baseUrl, s.tokens.alice).post('/v1/conversations', { json: { contact_id: 'trickle' } })).body.id;
  });
  afterAll(() => s?.stop());

  // Watches the upload's temporary file on disk (an object store buffers a small upload in memory).
  it.skipIf(objectStoreProject)('a body that keeps trickling is cut at the limit; its temporary bytes are removed', async () => {
    const c = await connect(s.port);
    c.socket.write(uploadStart(s.port, s.tokens.alice, conversation, 1024));
    await untilTempFiles(s, 1);
    // Never idle: a byte every 20 ms, for as long as the server keeps the connection.
    const trickle = setInterval(() => c.socket.write('y'), 20);
    try {
      await c.closed;
    } finally {
      clearInterval(trickle);
    }
    await untilTempFiles(s, 0);
  });
});
