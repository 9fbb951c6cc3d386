// /v1 through Next's App Router route handlers (plain `next start`): the second adapter onto the core.
// API-level, so it runs in the desktop project only.
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { E2E_TOKENS, ROUTE_HANDLER_PORT } from '../../playwright.config';
import { appEnv, CHECKOUT, startApp, tempDir } from './app-process';

const base = `http://127.0.0.1:${ROUTE_HANDLER_PORT}`;
const auth = { authorization: `Bearer ${E2E_TOKENS.alice}` };

test('route handlers serve /v1 and /files to the contract', async ({ request }) => {
  const contact = `rh-${Date.now()}`;
  const created = await request.post(`${base}/v1/conversations`, { headers: auth, form: { contact_id: contact } });
  expect(created.status()).toBe(201);
  const conversation = await created.json();
  const again = await request.post(`${base}/v1/conversations`, { headers: auth, data: { contact_id: contact } });
  expect(again.status()).toBe(409);
  expect((await again.json()).existing_id).toBe(conversation.id);

  const upload = await request.post(`${base}/v1/files`, {
    headers: auth,
    multipart: { conversation_id: conversation.id, file: { name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('via next') } },
  });
  expect(upload.status()).toBe(201);
  const file = await upload.json();
  const bytes = await request.get(file.file_url);
  expect(bytes.status()).toBe(200);
  expect(await bytes.text()).toBe('via next');
  expect(bytes.headers()['content-security-policy']).toBe('sandbox');

  const unauth = await request.get(`${base}/v1/conversations`);
  expect(unauth.status()).toBe(401);
  const patch = await request.patch(`${base}/v1/conversations`, { headers: auth });
  expect(patch.status()).toBe(405);
  expect(patch.headers()['allow']).toBe('GET, POST');
  expect((await request.delete(`${base}/v1/conversations/${conversation.id}`, { headers: auth })).status()).toBe(204);
});

test('single sign-on reaches the core through its route handler (not configured here: 404 in the contract’s shape)', async ({ request }) => {
  for (const path of ['/auth/oidc', '/auth/oidc/start']) {
    const r = await request.get(`${base}${path}`, { maxRedirects: 0 });
    expect(r.status(), path).toBe(404);
    expect((await r.json()).code, path).toBe('resource_missing');
  }
  const handoff = await request.post(`${base}/auth/oidc/handoff`, { data: { id: 'x' } });
  expect(handoff.status()).toBe(404);
});

/** A port nothing listens on now (the kernel's pick, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

test('the audit trail keeps its writer thread under next start: no fall back to the request thread', async () => {
  // The thread found better-sqlite3 by a path resolved in the main thread, which Turbopack had
  // rewritten into its own module id: under `next start` it stopped on the first row, and every
  // read's audit row was written on the request thread from then on (logged as an error).
  const scratch = tempDir('parley-next-audit-');
  const nextCli = createRequire(path.join(CHECKOUT, 'package.json')).resolve('next/dist/bin/next');
  const port = await freePort();
  const app = await startApp([nextCli, 'start', '-p', String(port), '-H', '127.0.0.1'], CHECKOUT, appEnv(path.join(scratch.dir, 'data')), /Local:\s+http:\/\/[^:\s]+:(\d+)[\s\S]*Ready in/);
  try {
    // Reads: each answer waits for its audit row to be committed (by the thread, or the fallback).
    for (let i = 0; i < 3; i++) expect((await fetch(`${app.url}/v1/conversations`, { headers: auth })).status).toBe(200);
    // The request log's lines come after the audit writer's; once all three are read, so is any complaint.
    await expect.poll(() => app.output().match(/"route":"\/v1\/conversations","status":200/g)?.length ?? 0).toBe(3);
    expect(app.output()).not.toMatch(/audit (trail|writer)/);
  } finally {
    await app.stop();
    scratch.remove();
  }
});
