// @vitest-environment node
// The server's idempotency support is known up front, from the Idempotency header the embedded
// server sends on every /v1 response: the first upload then skips the snapshot GET that a server
// without keys needs (replay.ts, takeUploadSnapshot).
import { describe, expect, it } from 'vitest';
import { serverSupportsIdempotency } from '../../lib/sync/outbox/replay';
import { startTestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverFiles } from './harness';

const isSnapshotGet = (r: { method: string; path: string }) => r.method === 'GET' && /^\/v1\/files\?.*limit=1(&|$)/.test(r.path);

describe.each([
  { name: 'embedded server (advertises Idempotency: supported)', env: {} as Record<string, string>, snapshot: false },
  { name: 'plain server (no extensions)', env: { PARLEY_EXTENSIONS: 'none' }, snapshot: true },
])('first upload against the $name', ({ env, snapshot }) => {
  it(snapshot ? 'takes the snapshot first' : 'sends no snapshot GET', async () => {
    const server = await startTestServer({ env });
    try {
      const token = server.tokens.alice;
      const conv = await otherDevice(server.baseUrl, token).createConversation({ contact_id: 'first-upload' });
      const d = makeDevice(server.baseUrl, token);
      await d.settle(); // the first sync: a pull, never a replayed answer
      expect(await serverSupportsIdempotency(d.db)).toBe(!snapshot);

      await d.client.uploadFile({ conversationId: conv.id }, { name: 'first.txt', type: 'text/plain', bytes: new TextEncoder().encode('first') });
      const before = d.net.seen.length;
      await d.settle();
      const sent = d.net.seen.slice(before);
      expect(sent.filter(isSnapshotGet)).toHaveLength(snapshot ? 1 : 0);
      expect(sent.filter((r) => r.method === 'POST')).toHaveLength(1);
      expect((await serverFiles(server.baseUrl, token, conv.id)).map((f) => f.filename)).toEqual(['first.txt']);
      d.close();
    } finally {
      await server.stop();
    }
  });
});
