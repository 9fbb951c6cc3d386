// @vitest-environment node
// The file row's progress after a cut (issue 18): a resumable upload cut mid-transfer keeps its
// place on the row through the wait ("Resuming — X of Y": `resumed`, the bytes the server
// confirmed — never the ones that were in flight when it was cut, issue 32), then reports from the
// server's offset when it goes on; a finished one leaves nothing behind.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FetchLike, UploadLike } from '../../lib/sync/core/http';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import { readUploadProgress } from '../../lib/sync/engine/upload-progress';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverFiles, type Device } from './harness';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.stop());

const KiB = 1024;

it('a cut upload shows where it stands, as resuming, until it goes on; nothing once it is done', async () => {
  let patches = 0;
  let d!: Device;
  // The second PATCH is cut halfway through its body (the server keeps what arrived).
  const fetchThrough: FetchLike = async (input, init) => {
    const body = init?.body;
    if (init?.method !== 'PATCH' || !(body instanceof Blob) || ++patches !== 2) return d.net.fetch(input, init);
    const bytes = new Uint8Array(await body.arrayBuffer());
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(bytes.slice(0, bytes.length >> 1));
        setTimeout(() => controller.error(new TypeError('network connection lost')), 30);
      },
    });
    return d.net.fetch(input, { ...init, body: stream, duplex: 'half' } as RequestInit);
  };
  // The transport reports half of each body sent before it goes (as XMLHttpRequest would): the cut
  // PATCH's half was in flight, never confirmed.
  const upload: UploadLike = async (url, init, onProgress) => {
    if (init.body instanceof Blob) onProgress(init.body.size >> 1, init.body.size);
    return fetchThrough(url, init);
  };
  d = makeDevice(server.baseUrl, server.tokens.alice, { engine: { fetch: fetchThrough, upload, resumable: resumableUploads, uploadPatchBytes: 256 * KiB } });
  const conv = await otherDevice(server.baseUrl, server.tokens.alice).createConversation({ contact_id: 'progress-resume' });
  await d.settle();
  const size = 900 * KiB;
  const fileId = await d.client.uploadFile({ conversationId: conv.id }, { name: 'resume.bin', type: 'application/octet-stream', bytes: new Uint8Array(size).fill(3) });

  await d.engine.syncOnce(); // the first PATCH arrives, the second is cut: the sync ends waiting
  expect(await d.db.outbox.count()).toBe(1);
  const waiting = (await readUploadProgress(d.db))[fileId];
  // What the server confirmed (the first PATCH's Upload-Offset), not 384 KiB sent.
  expect(waiting).toEqual({ sent: 256 * KiB, onServer: 256 * KiB, total: size, resumed: true });

  d.clock.advance(10 * 60_000);
  await d.settle();
  expect(await serverFiles(server.baseUrl, server.tokens.alice, conv.id)).toHaveLength(1);
  expect(await readUploadProgress(d.db)).toEqual({});
  d.close();
});
