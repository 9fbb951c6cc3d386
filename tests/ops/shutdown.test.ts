// Graceful shutdown of a real server process on a real SIGTERM: no new connections, idle
// kept-alive ones closed, live event streams ended cleanly, an upload in flight finished (201, its
// row and bytes there after a restart), then exit 0. And the bound: a request that does not finish
// in SHUTDOWN_TIMEOUT_MS is cut, its temporary bytes removed, and the process still exits 0.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { client } from '../helpers/api';
import { openSse } from '../helpers/sse';
import { tempDataDir, TEST_TOKENS } from '../helpers/server';
import { startServerProcess, type ServerProcess } from '../helpers/server-process';
import { field, filePart, rawMultipart } from '../api/raw-multipart';

const started: ServerProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.kill()));
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const p = await startServerProcess(env);
  started.push(p);
  return p;
}

function dataDir(): string {
  const dir = tempDataDir();
  dirs.push(dir);
  return dir;
}

/** A multipart upload whose body the test sends piece by piece. */
function slowUpload(baseUrl: string, conversationId: string, content: Buffer) {
  const { body, contentType } = rawMultipart([field('conversation_id', conversationId), filePart('slow.bin', new Uint8Array(content), 'application/octet-stream')]);
  const request = http.request(`${baseUrl}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKENS.alice}`, 'content-type': contentType, 'content-length': body.length },
  });
  const answer = new Promise<{ status: number; connection: string | undefined; body: any }>((resolve, reject) => {
    request.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      response.once('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection, body: text ? JSON.parse(text) : null }));
    });
    request.once('error', reject);
  });
  return { body: Buffer.from(body), request, answer };
}

/** Polls `check` until it holds (the condition itself, not a time). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
}

const tempFiles = (dir: string) => fs.readdirSync(path.join(dir, 'tmp'));

/** Resolves with the error code of a request that could not even connect. */
function connectError(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      reject(new Error(`answered ${response.statusCode}`));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
}

describe('SIGTERM', () => {
  it('finishes the upload in flight, refuses new connections, closes idle ones, ends live streams; exits 0', async () => {
    const dir = dataDir();
    const server = await start({ DATA_DIR: dir });
    const alice = client(() => server.url, TEST_TOKENS.alice);
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'shutdown' } })).body;

    // A live stream, and a kept-alive connection that is idle.
    const stream = await openSse(`${server.url}/v1/events/stream`, { authorization: `Bearer ${TEST_TOKENS.alice}` });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // (In an object: a promise resolved with a promise would wait for it.)
    const idle = await new Promise<{ closed: Promise<void> }>((resolve, reject) => {
      http
        .get(`${server.url}/healthz`, { agent }, (response) => {
          const socket = response.socket;
          response.resume();
          response.once('end', () => resolve({ closed: new Promise<void>((closed) => socket.once('close', () => closed())) }));
        })
        .once('error', reject);
    });

    // An upload whose body is half sent: the server is writing its temporary file.
    const content = Buffer.alloc(512 * 1024, 3);
    content.write('bytes that arrive across a shutdown');
    const upload = slowUpload(server.url, c.id, content);
    const half = upload.body.length >> 1;
    upload.request.write(upload.body.subarray(0, half));
    await until(() => tempFiles(dir).length > 0);

    server.child.kill('SIGTERM');
    await server.waitFor(/SIGTERM: shutting down/);
    // Not accepted any more: the listening socket is closed (refused; or reset, when the attempt
    // reached the accept queue just as it closed) — either way, no answer.
    const refusedCode = await connectError(`${server.url}/healthz`);
    expect(['ECONNREFUSED', 'ECONNRESET']).toContain(refusedCode);
    // The idle kept-alive connection is closed by the server; the live stream ends (not cut).
    await idle.closed;
    await stream.comment('server shutting down');
    await stream.ended();
    expect(server.child.exitCode).toBeNull(); // still finishing the upload

    upload.request.end(upload.body.subarray(half));
    const answer = await upload.answer;
    expect(answer.status).toBe(201);
    expect(answer.connection).toBe('close');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('[parley] stopped');
    const record = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .find((r) => r.msg === 'request' && r.route === '/v1/files');
    expect(record).toMatchObject({ method: 'POST', status: 201, user_id: 'alice' });
    agent.destroy();

    // After a restart: the row and the bytes are there.
    const again = await start({ DATA_DIR: dir });
    const after = client(() => again.url, TEST_TOKENS.alice);
    expect((await after.get(`/v1/files/${answer.body.id}`)).body).toMatchObject({ id: answer.body.id, file_size: content.length });
    const url = new URL(answer.body.file_url);
    const bytes = await fetch(again.url + url.pathname + url.search);
    expect(bytes.status).toBe(200);
    expect(Buffer.from(await bytes.arrayBuffer()).equals(content)).toBe(true);
  });

  it('a request still running after SHUTDOWN_TIMEOUT_MS is cut, its temporary bytes removed; the process exits 0', async () => {
    const dir = dataDir();
    const server = await start({ DATA_DIR: dir, SHUTDOWN_TIMEOUT_MS: '300' });
    const alice = client(() => server.url, TEST_TOKENS.alice);
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'cut' } })).body;
    const upload = slowUpload(server.url, c.id, Buffer.alloc(256 * 1024, 1));
    const cut = upload.answer.then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code ?? 'error',
    );
    upload.request.write(upload.body.subarray(0, 1000)); // and never the rest
    await until(() => tempFiles(dir).length > 0);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(await cut).toBe('ECONNRESET');
    expect(server.output()).toMatch(/"level":"error","msg":"shutdown: 1 request\(s\) still running after 300 ms were cut off"/);
    expect(tempFiles(dir)).toEqual([]);
  });

  it('a request that arrives after SIGTERM on a connection already open is not carried out', async () => {
    const dir = dataDir();
    const server = await start({ DATA_DIR: dir });
    const alice = client(() => server.url, TEST_TOKENS.alice);
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'pipelined' } })).body;
    const { body, contentType } = rawMultipart([field('conversation_id', c.id), filePart('first.txt', 'the request in flight', 'text/plain')]);
    const port = Number(new URL(server.url).port);
    const head = (method: string, target: string, type: string, length: number) =>
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TEST_TOKENS.alice}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(head('POST', '/v1/files', contentType, body.length));
    const split = body.length - 10; // all but the end of the closing boundary: the file is being written
    socket.write(Buffer.from(body).subarray(0, split));
    await until(() => tempFiles(dir).length > 0);

    server.child.kill('SIGTERM');
    await server.waitFor(/SIGTERM: shutting down/);
    // The upload's last bytes, and right behind them on the same connection, a new write.
    const late = JSON.stringify({ contact_id: 'after-sigterm' });
    socket.write(Buffer.concat([Buffer.from(body).subarray(split), Buffer.from(head('POST', '/v1/conversations', 'application/json', late.length) + late)]));
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 201 /);
    expect(received).toMatch(/\r\nConnection: close\r\n/i);
    expect(received.match(/HTTP\/1\.1 201 /g)).toHaveLength(1);
    expect(await server.exited).toBe(0);

    const again = await start({ DATA_DIR: dir });
    const contacts = (await client(() => again.url, TEST_TOKENS.alice).get('/v1/conversations?limit=100')).body.data.map((x: any) => x.contact_id);
    expect(contacts).toContain('pipelined');
    expect(contacts).not.toContain('after-sigterm');
  });

  it('SIGINT shuts down the same way', async () => {
    const server = await start({ DATA_DIR: dataDir() });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('SIGINT: shutting down');
  });
});

// The ops project runs only where PostgreSQL is (vitest.config.ts).
describe('SIGTERM with PostgreSQL', () => {
  it('exits while a cut request still waits in the database (a row lock held elsewhere): the close has a deadline too', async () => {
    const { createTestDatabase } = await import('../helpers/postgres');
    const pg = (await import('pg')).default;
    const database = await createTestDatabase();
    const locker = new pg.Client({ connectionString: database.url });
    try {
      const server = await start({ DATA_DIR: dataDir(), DATABASE_URL: database.url, SHUTDOWN_TIMEOUT_MS: '300' });
      const alice = client(() => server.url, TEST_TOKENS.alice);
      const c = (await alice.post('/v1/conversations', { json: { contact_id: 'locked-row' } })).body;
      // Another session holds the row: the server's update waits on it (no lock_timeout on a plain write).
      await locker.connect();
      await locker.query('begin');
      await locker.query('select id from conversations where id = $1 for update', [c.id]);
      const stuck = alice.put(`/v1/conversations/${c.id}`, { json: { is_muted: true } }).then(
        () => 'answered',
        () => 'cut',
      );
      const waiting = async () =>
        (await locker.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rowCount! > 0;
      await until(waiting);

      server.child.kill('SIGTERM');
      // The drain cuts the request after 300 ms; its query still waits on the lock, holding a
      // pooled connection that closing the pool would wait for — for ever, while the lock is held.
      expect(await server.exited).toBe(1);
      expect(await stuck).toBe('cut');
      expect(server.output()).toMatch(/"level":"error","msg":"shutdown: closing .* did not finish within \d+ ms/);
    } finally {
      await locker.end().catch(() => {});
      await database.drop();
    }
  }, 60_000);
});
