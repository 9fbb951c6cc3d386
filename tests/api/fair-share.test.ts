// The per-user fair share on a real server (lib/api/http/fair-share.ts, ../shared/API.md "Limits"):
// while one user's requests fill their share and their queue, a further one of theirs is refused
// 429 rate_limited, another user is served at once, and long requests (uploads) take no turn.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError } from '../helpers/api';
import { startTestServer, TEST_TOKENS, type TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';

/** A POST /v1/conversations whose body has not all arrived: the request holds alice's one turn. */
function heldCreate(port: number, token: string) {
  const body = JSON.stringify({ contact_id: 'held-contact' });
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk) => (text += chunk));
  const answered = new Promise<number>((resolve, reject) => {
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('error', reject);
  });
  socket.write(
    `POST /v1/conversations HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  return { finish: () => socket.write(body.slice(5)), answered };
}

describe('fair share per user', () => {
  let s: TestServer;
  beforeAll(async () => {
    const env = { MAX_REQUESTS_IN_FLIGHT_PER_USER: '1', MAX_REQUESTS_QUEUED_PER_USER: '1' };
    // The share is per instance: with two, alice's requests would alternate between two shares.
    s = process.env.PARLEY_TEST_TWO_INSTANCES === '1' ? await startTestServer({ env }) : await startTarget({ env });
  });
  afterAll(() => s.stop());

  it("one user's turn taken and queue full: their next request is 429, another user is served, uploads pass", async () => {
    const alice = client(() => s.baseUrl, TEST_TOKENS.alice);
    const bob = client(() => s.baseUrl, TEST_TOKENS.bob);
    const held = heldCreate(s.port, TEST_TOKENS.alice);
    // The held request has its turn once the server answers anything after it for alice: the
    // one-slot queue then takes one of the next two, and the other is refused.
    const second = alice.get('/v1/conversations');
    const third = alice.get('/v1/conversations');
    const first = await Promise.race([second, third]);
    expectError(first, 429, 'rate_limited');
    expect(first.headers.get('retry-after')).toBe('1');

    // Bob is not behind alice.
    expect((await bob.get('/v1/conversations')).status).toBe(200);
    // A resumable upload's creation is a long request: it takes no turn, so it is not refused.
    const created = await fetch(`${s.baseUrl}/v1/uploads`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TEST_TOKENS.alice}`, 'Tus-Resumable': '1.0.0', 'Upload-Length': '3', 'Upload-Metadata': `filename ${Buffer.from('a.txt').toString('base64')}` },
    });
    expect(created.status, await created.clone().text()).not.toBe(429);

    // The held request ends: the queued one is served, and alice is served again.
    held.finish();
    expect(await held.answered).toBe(201);
    const statuses = [(await second).status, (await third).status].sort();
    expect(statuses).toEqual([200, 429]);
    expect((await alice.get('/v1/conversations')).status).toBe(200);
  });
});
