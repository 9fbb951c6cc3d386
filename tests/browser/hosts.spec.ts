// The Host rule through both real servers: npm start's node:http adapter and the Next route
// handlers (exchange.ts) must refuse the same Hosts and build file_url on the same ones. Raw
// node:http requests, so the Host header is exactly what the test says (API-level: no page).
import http from 'node:http';
import { expect, test } from '@playwright/test';
import { APP_PORT, ROUTE_HANDLER_PORT } from '../../playwright.config';
import { unique, userFor } from './helpers';

function send(port: number, method: string, path: string, host: string, auth: Record<string, string>, json?: unknown): Promise<{ status: number; body: any }> {
  const body = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
  const headers: Record<string, string> = { ...auth, host, ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}) };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

for (const [name, port] of [["npm start's server", APP_PORT], ['the route handlers (next start)', ROUTE_HANDLER_PORT]] as const) {
  test(`a Host the server does not allow is refused; an allowed one builds file_url: ${name}`, async ({ request }, info) => {
    const { auth } = userFor(info);
    const base = `http://127.0.0.1:${port}`;
    const conversation = await (await request.post(`${base}/v1/conversations`, { headers: auth, data: { contact_id: unique('hosts') } })).json();
    const upload = await request.post(`${base}/v1/files`, {
      headers: auth,
      multipart: { conversation_id: conversation.id, file: { name: 'host.txt', mimeType: 'text/plain', buffer: Buffer.from('h') } },
    });
    expect(upload.status()).toBe(201);
    const file = await upload.json();

    for (const host of ['evil.example', `evil.example:${port}`, `localhost:${port + 100}`, 'evil.example"><x']) {
      for (const [method, path, json] of [
        ['GET', `/v1/files/${file.id}`],
        ['GET', '/v1/conversations'],
        ['PUT', `/v1/files/${file.id}`, { filename: 'moved.txt' }],
      ] as const) {
        const r = await send(port, method, path, host, auth, json);
        expect(r.status, `${method} ${path} with Host ${host}`).toBe(400);
        expect(r.body).toMatchObject({ type: 'invalid_request', code: 'parameter_invalid', param: 'Host' });
        expect(r.body.message).toContain('ALLOWED_HOSTS');
      }
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const r = await send(port, 'GET', `/v1/files/${file.id}`, host, auth);
      expect(r.status, host).toBe(200);
      expect(new URL(r.body.file_url).host).toBe(host);
      expect(r.body.filename).toBe('host.txt'); // the refused rename changed nothing
    }
  });
}
