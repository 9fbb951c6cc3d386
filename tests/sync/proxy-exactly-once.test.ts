// @vitest-environment node
// The app's own offline scenario through the proxy (issue 27, item 1): the sync engine (with its
// resumable uploads) in front of a proxy-mode server, in front of a PLAIN upstream that ignores
// Idempotency-Key, behind a gate that on a seeded schedule loses a quarter of the answers after
// the upstream acted and sends some 503s. A clinician works offline — new conversations, uploads
// (two of the same name and size into one conversation), a rename, a pin — then comes back over a
// link that loses answers too. Whatever the seeds: every change lands upstream exactly once.
import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { createHttpServer, listen } from '../../lib/api/http/node-server';
import { createProxy, type ApiProxy } from '../../lib/proxy/proxy';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import { pattern } from '../helpers/bytes';
import { startGate, type Fault, type Gate } from '../helpers/lossy-gate';
import { GENEROUS_RATE_LIMITS, startTestServer, tempDataDir, type TestServer } from '../helpers/server';
import { makeDevice, serverConversations, serverFiles } from './harness';

let upstream: TestServer;
let gate: Gate;
let proxy: ApiProxy;
let front: http.Server;
let baseUrl: string;

beforeAll(async () => {
  upstream = await startTestServer({ env: { PARLEY_EXTENSIONS: 'none' } });
  gate = await startGate(upstream.baseUrl);
  const config = readConfig({ UPSTREAM_BASE_URL: gate.url, DATA_DIR: tempDataDir(), ...GENEROUS_RATE_LIMITS });
  proxy = createProxy(config, { log: () => {}, error: () => {} }, { uploadRetry: { firstMs: 1, maxMs: 5 }, uploadAnswerWithinMs: 300 });
  front = createHttpServer((request) => proxy.dispatch(request), undefined, config);
  baseUrl = `http://127.0.0.1:${await listen(front, 0, '127.0.0.1')}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => {
    front?.close(() => resolve());
    front?.closeAllConnections();
  });
  await proxy?.close();
  await gate?.stop();
  await upstream?.stop();
});

/** One in four answers to a write (or to the proxy's look for what arrived) lost, some 503s. */
const UPSTREAM_FAULTS: Array<Fault | undefined> = [undefined, undefined, undefined, undefined, undefined, 'lose', 'lose', '503', '503-after'];
const WRITES = new Set(['POST', 'PUT', 'DELETE']);

describe("the app's offline work through the proxy, to an upstream that ignores Idempotency-Key and loses answers", () => {
  it('any seeds: each conversation, upload, rename and pin lands upstream exactly once', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...UPSTREAM_FAULTS), { minLength: 10, maxLength: 40 }),
        fc.array(fc.constantFrom('upload', 'write', 'none', 'none'), { minLength: 4, maxLength: 12 }),
        async (upstreamSchedule, deviceSchedule) => {
          run++;
          const token = upstream.tokens.alice;
          const d = makeDevice(baseUrl, token, { engine: { resumable: resumableUploads, uploadPatchBytes: 2048 } });
          try {
            await d.settle();
            // Offline: the clinician's work queues.
            d.net.offline = true;
            const contacts = [`ward-${run}-a`, `ward-${run}-b`];
            const convA = await d.client.createConversation({ contact_id: contacts[0]! });
            const convB = await d.client.createConversation({ contact_id: contacts[1]! });
            const bytes = [pattern(5000, run * 3 + 1), pattern(5000, run * 3 + 2), pattern(900, run * 3 + 3)];
            const photo1 = await d.client.uploadFile({ conversationId: convA }, { name: 'wound.jpg', type: 'image/jpeg', bytes: bytes[0]! });
            await d.client.uploadFile({ conversationId: convA }, { name: 'wound.jpg', type: 'image/jpeg', bytes: bytes[1]! });
            await d.client.uploadFile({ conversationId: convB }, { name: 'letter.pdf', type: 'application/pdf', bytes: bytes[2]! });
            await d.client.renameFile(photo1, 'wound-day1.jpg');
            await d.client.updateConversation(convB, { is_pinned: true });

            // Back online, over a lossy link, to a lossy upstream.
            d.net.offline = false;
            for (const fault of deviceSchedule) {
              if (fault === 'upload') d.net.inject('lose-response', undefined, /\/v1\/uploads/);
              if (fault === 'write') d.net.inject('lose-response', 'POST');
            }
            const faults = [...upstreamSchedule];
            gate.decide = (method, path) => (WRITES.has(method) || path === '/v1/files' ? faults.shift() : undefined);
            await d.settle(60);
            gate.decide = null;

            const conversations = (await serverConversations(upstream.baseUrl, token)).filter((c) => contacts.includes(c.contact_id ?? ''));
            expect(conversations.map((c) => c.contact_id).sort()).toEqual([...contacts].sort());
            const a = conversations.find((c) => c.contact_id === contacts[0])!;
            const b = conversations.find((c) => c.contact_id === contacts[1])!;
            expect(b.is_pinned).toBe(true);
            const filesA = await serverFiles(upstream.baseUrl, token, a.id);
            const filesB = await serverFiles(upstream.baseUrl, token, b.id);
            expect(filesA.map((f) => f.filename).sort()).toEqual(['wound-day1.jpg', 'wound.jpg']);
            expect(filesB.map((f) => f.filename)).toEqual(['letter.pdf']);
            expect(filesA.every((f) => f.file_size === 5000)).toBe(true);
            // The outbox is empty and nothing failed: every change was applied, once.
            expect(await d.db.outbox.count()).toBe(0);
          } finally {
            gate.decide = null;
            d.close();
          }
        },
      ),
      { numRuns: 10, endOnFailure: true },
    );
  });
});
