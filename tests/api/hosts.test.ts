// file_url takes its origin from the Host header only when the operator allows that host
// (ALLOWED_HOSTS; by default the loopback names and this machine's name on the server's port).
// Every /v1 request with another Host is refused, so a misconfiguration shows at once, not only on
// the first file. With ASSET_URL set, the Host is not used for anything and not checked.
import http from 'node:http';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/api';
import { startTarget, type TargetOptions } from '../helpers/target';
import type { TestServer } from '../helpers/server';
import { field, filePart, rawMultipart } from './raw-multipart';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** A server with one conversation and one file in it, made through `host` (default: 127.0.0.1:port). */
async function start(options: TargetOptions = {}, host?: string) {
  const s = await startTarget(options);
  servers.push(s);
  const conversationId = (await send(s, 'POST', '/v1/conversations', { host, json: { contact_id: 'hosts' } })).body.id as string;
  const file = (await upload(s, conversationId, host)).body;
  expect(file.id).toMatch(/^[A-Za-z0-9]{16}$/);
  return { s, conversationId, fileId: file.id as string };
}

interface Answer {
  status: number;
  body: any;
}

/** One request over node:http, so the Host header is exactly what the test says. */
function send(s: TestServer, method: string, target: string, o: { host?: string; json?: unknown; raw?: { body: Uint8Array; contentType: string } } = {}): Promise<Answer> {
  const body = o.raw?.body ?? (o.json === undefined ? undefined : Buffer.from(JSON.stringify(o.json)));
  const headers: Record<string, string> = { authorization: `Bearer ${s.tokens.alice}`, host: o.host ?? `127.0.0.1:${s.port}` };
  if (body) {
    headers['content-type'] = o.raw?.contentType ?? 'application/json';
    headers['content-length'] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: s.port, method, path: target, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const upload = (s: TestServer, conversationId: string, host?: string) =>
  send(s, 'POST', '/v1/files', { host, raw: rawMultipart([field('conversation_id', conversationId), filePart('h.txt', 'h', 'text/plain')]) });

async function storedBlobs(s: TestServer): Promise<number> {
  return (await s.blobs.stored()).length;
}

/** The contract's 400 for a Host the server does not answer to, naming ALLOWED_HOSTS. */
function expectHostRefused(r: Answer) {
  expectError(r, 400, 'parameter_invalid', 'Host');
  expect(r.body.message).toContain('ALLOWED_HOSTS');
}

describe('Host and file_url', () => {
  it('by default, a Host outside the loopback names and this machine on the server port is refused on every /v1 request', async () => {
    const { s, conversationId, fileId } = await start();
    const blobs = await storedBlobs(s);
    for (const host of ['evil.example', `evil.example:${s.port}`, `localhost:${s.port + 1}`, 'localhost', '127.0.0.1']) {
      expectHostRefused(await send(s, 'GET', `/v1/files/${fileId}`, { host }));
      expectHostRefused(await send(s, 'GET', `/v1/files?conversation_id=${conversationId}`, { host }));
      expectHostRefused(await send(s, 'GET', '/v1/conversations', { host }));
      expectHostRefused(await send(s, 'PUT', `/v1/files/${fileId}`, { host, json: { filename: 'moved.txt' } }));
      expectHostRefused(await upload(s, conversationId, host));
    }
    expect(await storedBlobs(s)).toBe(blobs);
    expect((await send(s, 'GET', `/v1/files/${fileId}`)).body.filename).toBe('h.txt');
  });

  it('a malformed Host is refused, never echoed into a URL', async () => {
    const { s, fileId } = await start();
    for (const host of ['evil.example"><script>', 'a b', 'user@evil.example', 'evil.example/path']) {
      const r = await send(s, 'GET', `/v1/files/${fileId}`, { host });
      expectError(r, 400, 'parameter_invalid', 'Host');
      expect(JSON.stringify(r.body)).not.toContain('<script>');
    }
  });

  it('by default, the loopback names and the machine name on the server port build file_url', async () => {
    const { s, fileId } = await start();
    for (const host of [`localhost:${s.port}`, `127.0.0.1:${s.port}`, `[::1]:${s.port}`, `${os.hostname()}:${s.port}`, `LOCALHOST:${s.port}`]) {
      const r = await send(s, 'GET', `/v1/files/${fileId}`, { host });
      expect(r.status, host).toBe(200);
      expect(new URL(r.body.file_url).host, host).toBe(host.toLowerCase());
    }
  });

  it('ALLOWED_HOSTS replaces the default: a bare host on any port, host:port on that port only', async () => {
    const { s, conversationId, fileId } = await start({ edgeEnv: { ALLOWED_HOSTS: 'files.example.org, app.example:8443' } }, 'files.example.org');
    for (const host of ['files.example.org', 'files.example.org:9000', 'app.example:8443']) {
      const r = await send(s, 'GET', `/v1/files/${fileId}`, { host });
      expect(r.status, host).toBe(200);
      expect(r.body.file_url.startsWith(`http://${host}/files/`), host).toBe(true);
      expect((await upload(s, conversationId, host)).status, host).toBe(201);
    }
    for (const host of ['app.example', 'app.example:8080', `127.0.0.1:${s.port}`, 'evil.example']) {
      expectHostRefused(await send(s, 'GET', `/v1/files/${fileId}`, { host }));
    }
  });

  it('with ASSET_URL the Host is not used: any Host is answered and file_url is on ASSET_URL', async () => {
    const { s, fileId } = await start({ edgeEnv: { ASSET_URL: 'https://assets.example.org' } });
    const r = await send(s, 'GET', `/v1/files/${fileId}`, { host: 'evil.example' });
    expect(r.status).toBe(200);
    expect(r.body.file_url.startsWith('https://assets.example.org/files/h.txt?')).toBe(true);
  });

  it('/files (the asset host) is authorised by its signature alone, whatever the Host', async () => {
    const { s, fileId } = await start();
    const url = new URL((await send(s, 'GET', `/v1/files/${fileId}`)).body.file_url);
    const bytes = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: s.port, path: url.pathname + url.search, headers: { host: 'other.example' }, agent: false }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        })
        .on('error', reject);
    });
    expect(bytes).toEqual({ status: 200, text: 'h' });
  });
});
