// @vitest-environment node
// Push-side progress: bytes sent of a pending upload, stored (throttled) where the UI reads it;
// and the stuck-queue watchdog, which says so when changes pending against a reachable server
// have not moved for a while.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { UploadLike } from '../../lib/sync/core/http';
import { readUploadProgress, UPLOAD_PROGRESS_KEY, type UploadProgress } from '../../lib/sync/engine/upload-progress';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverFiles, type Device } from './harness';
import { TimerClock } from './timer-clock';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.stop());

/** Counts writes of the progress row (Dexie hooks see every put). */
function countProgressWrites(d: Device): () => number {
  let writes = 0;
  const count = (key: string) => {
    if (key === UPLOAD_PROGRESS_KEY) writes++;
  };
  d.db.meta.hook('creating', (key) => count(key as string));
  d.db.meta.hook('updating', (_changes, key) => count(key as string));
  return () => writes;
}

describe('upload progress', () => {
  it('a pending upload shows bytes sent, written at most twice a second, cleared once it is done', async () => {
    const token = server.tokens.alice;
    const conv = await otherDevice(server.baseUrl, token).createConversation({ contact_id: 'progress' });
    const seenDuring: UploadProgress[] = [];
    let d!: Device;
    const clock = new TimerClock();
    // The transport reports 100 progress events 10 ms apart (1 s in all), then sends for real.
    const upload: UploadLike = async (url, init, onProgress) => {
      for (let i = 1; i <= 100; i++) {
        await clock.advance(10);
        onProgress(i * 100, 10_000);
      }
      await clock.advance(500); // the trailing write of the burst is due
      // It is written without blocking the upload: wait until the burst's last event is stored (without
      // the trailing write this never happens and the test fails), then record what a reader sees.
      await vi.waitFor(async () => expect(Object.values(await readUploadProgress(d.db))[0]?.sent).toBe(10_000));
      seenDuring.push(await readUploadProgress(d.db));
      return d.net.fetch(url, init);
    };
    d = makeDevice(server.baseUrl, token, { engine: { upload, clock } });
    await d.settle();
    const fileId = await d.client.uploadFile({ conversationId: conv.id }, { name: 'big.bin', type: 'application/octet-stream', bytes: new Uint8Array(10_000) });
    const writes = countProgressWrites(d);
    expect((await d.engine.syncOnce()).push).toEqual({ kind: 'done' });

    expect(seenDuring).toHaveLength(1);
    expect(seenDuring[0]![fileId]!.total).toBe(10_000);
    expect(seenDuring[0]![fileId]!.sent).toBe(10_000); // the burst's last event is written too
    // 1 s of events: 2 or 3 throttled writes (not 100), plus the one that clears the row at the end.
    expect(writes()).toBeGreaterThanOrEqual(3);
    expect(writes()).toBeLessThanOrEqual(4);
    expect(await readUploadProgress(d.db)).toEqual({});
    expect((await serverFiles(server.baseUrl, token, conv.id)).map((f) => f.filename)).toEqual(['big.bin']);
    d.close();
  });
});

describe('stuck-queue watchdog', () => {
  const down = { status: 503, body: { type: 'api_error', code: 'internal', message: 'the server is overloaded' } };

  it('pending changes that do not move for 3 minutes while the server answers: the status says so, with the error', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob, { engine: { stuckAfterMs: 180_000 } });
    await d.settle();
    await d.client.createConversation({ contact_id: 'stuck' });
    for (let i = 0; i < 20; i++) d.net.inject(down, 'POST');
    await d.engine.syncOnce();
    const start = d.clock.now();
    while (d.clock.now() - start < 170_000) {
      d.clock.advance(60_000);
      await d.engine.syncOnce();
      if (d.clock.now() - start < 180_000) expect((await readSyncStatus(d.db)).stalled).toBeNull();
    }
    d.clock.advance(20_000);
    await d.engine.syncOnce();
    expect(await readSyncStatus(d.db)).toMatchObject({ pendingCount: 1, online: true, stalled: { since: start, error: 'the server is overloaded' } });

    // The server recovers: the change goes, and the warning with it.
    d.net.clear();
    d.clock.advance(60_000);
    await d.engine.syncOnce();
    expect(await readSyncStatus(d.db)).toMatchObject({ pendingCount: 0, stalled: null });
    d.close();
  });

  it('offline is not stuck', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob, { engine: { stuckAfterMs: 180_000 } });
    await d.settle();
    await d.client.createConversation({ contact_id: 'stuck-offline' });
    d.net.offline = true;
    for (let i = 0; i < 6; i++) {
      await d.engine.syncOnce();
      d.clock.advance(60_000);
    }
    expect(await readSyncStatus(d.db)).toMatchObject({ pendingCount: 1, online: false, stalled: null });
    d.close();
  });
});
