// Failure paths at the edges: aborted uploads, oversized bodies, hostile Host headers, stray queries.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 'edges' } })).body.id;
});
afterAll(() => s.stop());

/** What unfinished writes left: temp files on disk, incomplete multipart uploads in a bucket. */
const unfinishedWrites = () => s.blobs.unfinished();

/** Sends raw bytes over a socket and returns what came back (until the server closes or `ms`). */
function raw(request: string | Buffer, { closeAfterSend = false, ms = 1500 } = {}): Promise<string> {
  return new Promise((resolve) => {
    const url = new URL(s.baseUrl);
    const socket = net.connect(Number(url.port), url.hostname);
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(answer));
    socket.write(request, () => {
      if (closeAfterSend) socket.destroy();
    });
    setTimeout(() => socket.destroy(), ms);
  });
}

describe('edges', () => {
  it('an upload cut off mid-body leaves no row and no temporary bytes', async () => {
    const before = (await alice.get(`/v1/files?conversation_id=${conversationId}&limit=100`)).body.data.length;
    const boundary = 'cutcutcut';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="conversation_id"\r\n\r\n${conversationId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`;
    const body = Buffer.concat([Buffer.from(head), Buffer.alloc(256 * 1024, 1)]);
    await raw(
      Buffer.concat([
        Buffer.from(
          `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.tokens.alice}\r\n` +
            `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length + 1_000_000}\r\n\r\n`,
        ),
        body,
      ]),
      { closeAfterSend: true },
    );
    await expect.poll(() => unfinishedWrites(), { timeout: 5000 }).toEqual([]);
    const after = (await alice.get(`/v1/files?conversation_id=${conversationId}&limit=100`)).body.data.length;
    expect(after).toBe(before);
  });

  it('a JSON body over 1 MiB is refused with 400 and changes nothing', async () => {
    const big = JSON.stringify({ contact_id: 'x', padding: 'y'.repeat(1024 * 1024) });
    expectError(await alice.post('/v1/conversations', { body: big, headers: { 'content-type': 'application/json' } }), 400, 'parameter_invalid');
    expect((await alice.get('/v1/conversations?limit=100')).body.data.some((c: any) => c.contact_id === 'x')).toBe(false);
  });

  it('a hostile Host header never reaches file_url: 400, whichever server answers', async () => {
    await alice.upload({ conversation_id: conversationId }, { name: 'host.txt', bytes: 'h' });
    const answer = await raw(
      `GET /v1/files?conversation_id=${conversationId} HTTP/1.1\r\nHost: evil.example"><script>\r\nAuthorization: Bearer ${s.tokens.alice}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 400/);
    expect(answer).toContain('"param":"Host"');
    expect(answer).not.toContain('evil.example');
  });

  it('query parameters on a retrieve are refused, not ignored', async () => {
    expectError(await alice.get(`/v1/conversations/${conversationId}?expand=files`), 400, 'parameter_unknown', 'expand');
  });
});
