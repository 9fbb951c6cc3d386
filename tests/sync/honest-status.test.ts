// @vitest-environment node
// One honest connection state (issue 32 item 4), as the engine records it: bytes moving or an
// answer arriving mean the server is reachable now, whatever the last run said — the status reads
// online at once (never "Offline" beside a climbing upload), and after an outage the changes that
// waited out a backoff go in the same run, not ~18 s later.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { UploadLike } from '../../lib/sync/core/http';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { statusLabel } from '../../lib/view/status-label';
import { readUploadProgress, UPLOAD_PROGRESS_KEY } from '../../lib/sync/engine/upload-progress';
import { setMeta } from '../../lib/sync/mirror/meta';
import { startTestServer, type TestServer } from '../helpers/server';
import { byId, makeDevice, mirrorState, otherDevice, serverConversations, serverFiles, serverFilesWithConversation, type Device } from './harness';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.stop());

/** What a browser's fetch throws when it got no answer: reached or not, nobody knows. */
const browserNetworkError = {
  before: async () => {
    throw new TypeError('Failed to fetch');
  },
};

it('bytes moving after a run that could not reach the server: the status reads online, "Sending", during the transfer', async () => {
  const token = server.tokens.alice;
  const conv = await otherDevice(server.baseUrl, token).createConversation({ contact_id: 'honest-moving' });
  let d!: Device;
  const seen: { online: boolean; label: string }[] = [];
  const upload: UploadLike = async (url, init, onProgress) => {
    if (d.net.offline) return d.net.fetch(url, init); // no byte leaves
    onProgress(5_000, 10_000);
    // The status as the page reads it while the bytes move (the write is not the upload's to wait for).
    await vi.waitFor(async () => expect((await readSyncStatus(d.db)).online).toBe(true), { timeout: 2_000 }).catch(() => {});
    const status = await readSyncStatus(d.db);
    seen.push({ online: status.online, label: statusLabel(status, { now: d.clock.now(), uploads: await readUploadProgress(d.db) }).label });
    return d.net.fetch(url, init);
  };
  d = makeDevice(server.baseUrl, token, { engine: { upload } });
  await d.settle();
  await d.client.uploadFile({ conversationId: conv.id }, { name: 'moving.bin', type: 'application/octet-stream', bytes: new Uint8Array(10_000) });
  d.net.offline = true;
  await d.engine.syncOnce();
  expect(await readSyncStatus(d.db)).toMatchObject({ online: false, pendingCount: 1 });

  d.net.offline = false;
  d.clock.advance(10_000);
  expect((await d.engine.syncOnce()).push).toEqual({ kind: 'done' });
  expect(seen).toEqual([{ online: true, label: 'Sending' }]);
  expect(await serverFiles(server.baseUrl, token, conv.id)).toHaveLength(1);
  d.close();
});

it('a server answer after an outage ends the waits: a change held by its backoff goes in the same run', async () => {
  const token = server.tokens.bob;
  const d = makeDevice(server.baseUrl, token);
  await d.settle();
  await d.client.createConversation({ contact_id: 'honest-answer' });
  d.net.inject(browserNetworkError, 'POST');
  await d.engine.syncOnce();
  const [op] = await d.db.outbox.toArray();
  expect(op!.nextAttemptAt).toBeGreaterThan(d.clock.now()); // it waits out a backoff
  // The outage goes on: the next run's pull gets no answer either.
  d.net.inject(browserNetworkError, 'GET');
  expect((await d.engine.syncOnce()).pull).toMatchObject({ kind: 'network' });
  expect(await readSyncStatus(d.db)).toMatchObject({ online: false, pendingCount: 1 });

  // The next run, before that backoff is over: the pull's answers say the server is back.
  await d.engine.syncOnce();
  expect(await d.db.outbox.count()).toBe(0);
  expect((await serverConversations(server.baseUrl, token)).some((c) => c.contact_id === 'honest-answer')).toBe(true);
  expect(await readSyncStatus(d.db)).toMatchObject({ online: true, nextRetryAt: null, pendingCount: 0 });
  d.close();
});

/** The mirror equals the server: conversations (their last_active_at too) and files. */
async function expectMirrorCurrent(d: Device, token: string) {
  const mirror = await mirrorState(d.db);
  expect(mirror.conversations.sort(byId)).toEqual((await serverConversations(server.baseUrl, token)).sort(byId));
  const files = [...(await serverFilesWithConversation(server.baseUrl, token)).values()].map(({ file, conversationId }) => ({ ...file, conversationId }));
  expect(mirror.files.sort(byId)).toEqual(files.sort(byId));
}

// The first answer after an outage comes while the push is settling the operations it sent. What
// waited out the outage goes in the same run — after that push has settled, and before the pull,
// so the run that ends done leaves the mirror current (an upload moves its conversation's
// last_active_at on the server). Ending the waits from inside the request, as the answer came,
// raced the settling push: the waiting upload went after the pull, and the mirror missed it.
it('an answer after an outage, while the push settles: what waited goes before the pull, and the mirror ends current', async () => {
  const token = server.tokens.bob;
  const conv = await otherDevice(server.baseUrl, token).createConversation({ contact_id: 'honest-settling' });
  const d = makeDevice(server.baseUrl, token);
  await d.settle();
  await d.client.uploadFile({ conversationId: conv.id }, { name: 'waited.txt', type: 'text/plain', bytes: new TextEncoder().encode('waited') });
  d.net.inject(browserNetworkError, 'POST');
  await d.engine.syncOnce(); // the upload's answer is lost: it backs off
  const [upload] = await d.db.outbox.toArray();
  expect(upload!.nextAttemptAt).toBeGreaterThan(d.clock.now());
  d.net.offline = true;
  expect((await d.engine.syncOnce()).pull).toMatchObject({ kind: 'network', unreachable: true }); // the outage
  d.net.offline = false;

  // Back, before the upload's backoff is over: a new change goes first, and its answer ends the outage.
  await d.client.createConversation({ contact_id: 'honest-settling-new' });
  expect(await d.engine.syncOnce()).toEqual({ push: { kind: 'done' }, pull: { kind: 'done', feed: true } });
  expect(await d.db.outbox.count()).toBe(0);
  expect(await serverFiles(server.baseUrl, token, conv.id)).toHaveLength(1);
  await expectMirrorCurrent(d, token);
  d.close();
});

it('the first answer after an outage comes in the pull: what waited goes in the same run, and a pull after it leaves the mirror current', async () => {
  const token = server.tokens.bob;
  const conv = await otherDevice(server.baseUrl, token).createConversation({ contact_id: 'honest-pull-first' });
  const d = makeDevice(server.baseUrl, token);
  await d.settle();
  await d.client.uploadFile({ conversationId: conv.id }, { name: 'waited.txt', type: 'text/plain', bytes: new TextEncoder().encode('waited') });
  d.net.inject(browserNetworkError, 'POST');
  await d.engine.syncOnce();
  d.net.offline = true;
  await d.engine.syncOnce();
  d.net.offline = false;

  // Nothing can go before the backoff is over: the pull is the first to hear the server.
  expect(await d.engine.syncOnce()).toEqual({ push: { kind: 'done' }, pull: { kind: 'done', feed: true } });
  expect(await d.db.outbox.count()).toBe(0);
  await expectMirrorCurrent(d, token);
  d.close();
});

it('one lost answer is no outage: the next run, answered, leaves the operation its backoff', async () => {
  const token = server.tokens.bob;
  const d = makeDevice(server.baseUrl, token);
  await d.settle();
  await d.client.createConversation({ contact_id: 'honest-one-loss' });
  d.net.inject(browserNetworkError, 'POST');
  await d.engine.syncOnce();
  const [op] = await d.db.outbox.toArray();
  expect(op!.nextAttemptAt).toBeGreaterThan(d.clock.now());
  // The server answers the next run's pull; the operation waits on (the server may be slow, not gone).
  expect((await d.engine.syncOnce()).push).toMatchObject({ kind: 'waiting', reason: 'backoff', until: op!.nextAttemptAt });
  expect(await d.db.outbox.count()).toBe(1);
  expect(await readSyncStatus(d.db)).toMatchObject({ online: true });
  d.close();
});

it('a flush (Background Sync, under the lock an open page waits on) shows as syncing while it sends', async () => {
  const token = server.tokens.alice;
  const seen: boolean[] = [];
  const d: Device = makeDevice(server.baseUrl, token, {
    engine: {
      fetch: async (input, init) => {
        if (init?.method === 'POST') seen.push((await readSyncStatus(d.db)).syncing);
        return d.net.fetch(input, init);
      },
    },
  });
  await d.settle();
  await d.client.createConversation({ contact_id: 'honest-flush' });
  expect(await d.engine.flushOnce()).toEqual({ kind: 'done' });
  expect(seen).toEqual([true]);
  expect(await readSyncStatus(d.db)).toMatchObject({ syncing: false, pendingCount: 0 });
  d.close();
});

it('the progress a worker left when it ended mid-transfer never reads "Stalled" in the next run', async () => {
  const token = server.tokens.alice;
  const labels: string[] = [];
  const d: Device = makeDevice(server.baseUrl, token, {
    engine: {
      fetch: async (input, init) => {
        labels.push(statusLabel(await readSyncStatus(d.db), { now: d.clock.now(), uploads: await readUploadProgress(d.db) }).label);
        return d.net.fetch(input, init);
      },
    },
  });
  // A reload mid-transfer: the row still says it moved a minute ago; no upload is queued any more.
  await setMeta(d.db, UPLOAD_PROGRESS_KEY, { gone: { sent: 5_000, total: 10_000, onServer: 4_000, movedAt: d.clock.now() - 60_000, abandonAt: d.clock.now() - 30_000 } });
  await d.settle();
  expect(labels.length).toBeGreaterThan(0);
  expect(labels.filter((label) => label !== 'Syncing…')).toEqual([]);
  expect(await readUploadProgress(d.db)).toEqual({});
  d.close();
});
