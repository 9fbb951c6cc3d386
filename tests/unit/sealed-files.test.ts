// @vitest-environment node
// Documents kept offline on a device with a lock (issue 28): the downloader's passes with the
// database's chunks as the store (lib/offline/file-bytes.ts databaseChunkFiles), a file opened
// online kept there (lib/offline/device-files.ts), the viewer reading the device first
// (lib/view/viewer/bytes.ts), and the sync worker's runner (lib/offline/sealed-downloads.ts) —
// against fake-indexeddb with the rows sealed, and a fake network. Nothing of a file's bytes may
// be in IndexedDB in clear, and no Cache Storage is handed in at all.
import { Dexie } from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keepOpenedFile, readDeviceFile } from '../../lib/offline/device-files';
import { runPass, type DownloaderDeps, type PassResult } from '../../lib/offline/downloader';
import { databaseChunkFiles, DOWNLOAD_CHUNK_BYTES } from '../../lib/offline/file-bytes';
import { startSealedDownloads } from '../../lib/offline/sealed-downloads';
import { BUDGET_KEY, wakeDownloader } from '../../lib/offline/settings';
import { openSyncDb, type FileView, type ParleyDb } from '../../lib/sync/mirror/db';
import { setMeta } from '../../lib/sync/mirror/meta';
import { requireSealing, setSealer } from '../../lib/sync/mirror/seal';
import { createSealer, deriveMirrorKeys } from '../../lib/sync/mirror/sealer';
import { loadFileBytes } from '../../lib/view/viewer/bytes';
import { bytesOnDevice } from '../../lib/view/viewer/thumbnails';

const ORIGIN = 'https://parley.example';
const MARK = 'CREATININE 412 umol/L';

/** A body of `size` bytes that says MARK again and again (a scan of the raw rows looks for it). */
function bodyOf(size: number): Uint8Array {
  const text = `${MARK} `.repeat(Math.ceil(size / (MARK.length + 1))).slice(0, size);
  return new TextEncoder().encode(text);
}

/** Everything IndexedDB holds for the database, read past the app's middleware, as Latin-1 text. */
async function rawText(name: string, dexie: { indexedDB: IDBFactory; IDBKeyRange: typeof IDBKeyRange }): Promise<string> {
  const raw = new Dexie(name, { ...dexie, addons: [] });
  await raw.open();
  const parts: string[] = [];
  const text = (value: unknown): string =>
    value instanceof Uint8Array || value instanceof ArrayBuffer
      ? Buffer.from(value as ArrayBuffer).toString('latin1')
      : value && typeof value === 'object'
        ? Object.entries(value).map(([k, v]) => `${k}:${text(v)}`).join(',')
        : String(value);
  for (const table of raw.tables) for (const row of await table.toArray()) parts.push(text(row));
  raw.close();
  return parts.join('\n');
}

function setup(name: string) {
  const dexie = { indexedDB: new IDBFactory(), IDBKeyRange };
  const db = openSyncDb(name, dexie);
  const bodies = new Map<string, Uint8Array>();
  const seen: string[] = [];
  const fetch = async (input: string) => {
    seen.push(input);
    const body = bodies.get(input);
    if (!body) return new Response(null, { status: 404 });
    return new Response(body.slice(), { status: 200, headers: { 'content-type': 'text/plain', 'content-length': String(body.length), etag: `"e${body.length}"` } });
  };
  const deps: DownloaderDeps = {
    fetch,
    store: databaseChunkFiles(),
    origin: ORIGIN,
    connection: () => null,
    quota: async () => 10 * 1024 * 1024 * 1024,
    now: () => 1_000,
    wait: async () => {},
    dexie,
  };
  async function addFile(id: string, conversationId: string, size: number, created_at = 1): Promise<FileView> {
    const url = `${ORIGIN}/files/${id}.txt?id=${id}&sig=s`;
    bodies.set(url, bodyOf(size));
    const row = { id, message_id: `m${id}`, filename: `${id}.txt`, file_url: url, file_type: 'text/plain', file_size: size, created_at, conversationId, syncState: 'synced' } as FileView;
    await db.files.put(row);
    return row;
  }
  return { db, dexie, deps, bodies, seen, fetch, addFile };
}

const keep = (db: ParleyDb, conversationId: string) => db.offlineKeep.put({ conversationId, keep: true });

beforeEach(async () => {
  setSealer(createSealer(await deriveMirrorKeys(new Uint8Array(32).fill(9))));
});
afterEach(() => {
  setSealer(null);
  requireSealing(false);
});

describe('sealed device: files kept offline live as sealed chunks in the database', () => {
  it('"Keep offline" downloads into the database: whole, readable with the keys, nothing of them in clear', async () => {
    const t = setup('parley-sync-sealed-keep');
    const size = 2 * DOWNLOAD_CHUNK_BYTES + 1234;
    const big = await t.addFile('big', 'kept', size, 2);
    const small = await t.addFile('small', 'kept', 300, 1);
    await keep(t.db, 'kept');
    expect(await runPass(t.db.name, t.deps)).toBe('done');
    expect(t.seen).toEqual([big.file_url, small.file_url]);
    for (const f of [big, small]) {
      const held = await readDeviceFile(t.db, f);
      expect(held?.bytes).toEqual(t.bodies.get(f.file_url!));
      expect(held?.row).toMatchObject({ complete: true, size: f.file_size, headers: expect.arrayContaining([['content-type', 'text/plain']]) });
    }
    // The chunks are the file's bytes now: they stay.
    for (const f of [big, small]) expect(await t.db.downloadChunks.where('fileId').equals(f.id).count()).toBeGreaterThan(0);
    const raw = await rawText(t.db.name, t.dexie);
    expect(raw).not.toContain(MARK.slice(0, 10));
    expect(raw).not.toContain('big.txt');
    // Sealed with WebCrypto before their transaction, beside the row's own (JavaScript) seal.
    const stored = new Dexie(t.db.name, { ...t.dexie, addons: [] });
    await stored.open();
    const chunks = (await stored.table('downloadChunks').toArray()) as Array<{ $b?: { bytes: ArrayBuffer } }>;
    stored.close();
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.reduce((n, c) => n + (c.$b?.bytes.byteLength ?? 0) - 28, 0)).toBe(size + 300);
    // A second pass has nothing to do.
    t.seen.length = 0;
    await runPass(t.db.name, t.deps);
    expect(t.seen).toEqual([]);
  });

  it('a complete row whose chunks are gone (kept in Cache Storage before the lock) is dropped and fetched again', async () => {
    const t = setup('parley-sync-sealed-reconcile');
    const f = await t.addFile('f', 'kept', 500);
    await keep(t.db, 'kept');
    await t.db.offlineFiles.put({ fileId: 'f', conversationId: 'kept', url: f.file_url!, size: 500, received: 500, complete: true, lastOpenedAt: null, etag: null, headers: [] });
    expect(await readDeviceFile(t.db, f)).toBeNull();
    await runPass(t.db.name, t.deps);
    expect(t.seen).toEqual([f.file_url]);
    expect((await readDeviceFile(t.db, f))?.bytes).toEqual(t.bodies.get(f.file_url!));
  });

  it('a file held under its old URL (renamed since) or still partial is not read as the file', async () => {
    const t = setup('parley-sync-sealed-stale');
    const f = await t.addFile('f', 'c', 100);
    await keepOpenedFile(t.db, f, t.bodies.get(f.file_url!)!.slice(), [], 5);
    expect(await readDeviceFile(t.db, { ...f, file_url: `${ORIGIN}/files/renamed.txt?id=f&sig=t` })).toBeNull();
    await t.db.offlineFiles.update('f', { complete: false });
    expect(await readDeviceFile(t.db, f)).toBeNull();
  });

  it('a file opened online is kept sealed, opens from the device next time, and is evicted first under the budget', async () => {
    const t = setup('parley-sync-sealed-opened');
    const opened = await t.addFile('opened', 'plain', 600, 1);
    const kept = await t.addFile('kept-file', 'kept', 600, 2);
    const fetcher = ((input: string) => t.fetch(input)) as unknown as typeof fetch;

    const first = await loadFileBytes(t.db, opened, { fetcher, caches: null });
    expect(first).toMatchObject({ ok: true, from: 'network' });
    // Kept while shown (not awaited by the viewer): wait for its row.
    await expect.poll(async () => (await t.db.offlineFiles.get('opened'))?.complete).toBe(true);
    const again = await loadFileBytes(t.db, opened, { fetcher: () => Promise.reject(new TypeError('Failed to fetch')), caches: null });
    expect(again).toEqual({ ok: true, bytes: t.bodies.get(opened.file_url!), from: 'device' });
    expect(t.seen).toEqual([opened.file_url]);
    expect(await rawText(t.db.name, t.dexie)).not.toContain(MARK.slice(0, 10));
    // The thumbnails read the same bytes, with no Cache Storage at all.
    const blob = await bytesOnDevice(t.db, opened, null);
    expect(new Uint8Array(await blob!.arrayBuffer())).toEqual(t.bodies.get(opened.file_url!));

    // Room for one file: keeping a conversation evicts the opened file, never the kept one.
    await setMeta(t.db, BUDGET_KEY, 1000);
    await keep(t.db, 'kept');
    await runPass(t.db.name, t.deps);
    expect(await readDeviceFile(t.db, opened)).toBeNull();
    expect(await t.db.downloadChunks.where('fileId').equals('opened').count()).toBe(0);
    expect((await readDeviceFile(t.db, kept))?.bytes).toEqual(t.bodies.get(kept.file_url!));
  });

  it('without a lock the viewer keeps nothing in the database (files are kept in Cache Storage, by the service worker or the page)', async () => {
    setSealer(null);
    requireSealing(false);
    const t = setup('parley-sync-unsealed-opened');
    const f = await t.addFile('f', 'c', 100);
    const fetcher = ((input: string) => t.fetch(input)) as unknown as typeof fetch;
    expect(await loadFileBytes(t.db, f, { fetcher, caches: null })).toMatchObject({ ok: true, from: 'network' });
    expect(await loadFileBytes(t.db, f, { fetcher, caches: null })).toMatchObject({ ok: true, from: 'network' });
    expect(t.seen).toEqual([f.file_url, f.file_url]);
    expect(await t.db.offlineFiles.count()).toBe(0);
  });
});

describe("sealed device: the sync worker's downloader", () => {
  it("waits while the user's changes are being sent, and not for ever when they are stuck", async () => {
    const t = setup('parley-sync-sealed-yield');
    const f = await t.addFile('f', 'kept', 100);
    await keep(t.db, 'kept');
    let sending = true;
    let checks = 0;
    const results: PassResult[] = [];
    const busy = async () => {
      checks++;
      return sending;
    };
    const runner = startSealedDownloads({ database: t.db.name, deps: t.deps, onPass: (r) => results.push(r), busy, busyPollMs: 5 });
    try {
      // Queued changes: no download yet, however often it looks.
      await expect.poll(() => checks).toBeGreaterThanOrEqual(4);
      expect(t.seen).toEqual([]);
      expect(results).toEqual([]);
      sending = false;
      await expect.poll(() => results.length).toBe(1);
      expect(t.seen).toEqual([f.file_url]);
    } finally {
      await runner.stop();
    }
    // A queue that never empties holds a pass back only `yieldMs`.
    const u = setup('parley-sync-sealed-stuck');
    const g = await u.addFile('g', 'kept', 100);
    await keep(u.db, 'kept');
    const stuck = startSealedDownloads({ database: u.db.name, deps: u.deps, busy: async () => true, busyPollMs: 5, yieldMs: 30 });
    try {
      await expect.poll(() => u.seen).toEqual([g.file_url]);
    } finally {
      await stuck.stop();
    }
  });

  it('passes at start and when the page wakes it (a "Keep offline" toggle), one at a time', async () => {
    const t = setup('parley-sync-sealed-runner');
    const f = await t.addFile('f', 'kept', 100);
    const results: PassResult[] = [];
    const runner = startSealedDownloads({ database: t.db.name, deps: t.deps, onPass: (r) => results.push(r) });
    try {
      await runner.idle();
      expect(results).toEqual(['done']);
      expect(t.seen).toEqual([]);
      await keep(t.db, 'kept');
      // What settings.ts setKeepOffline does after writing the choice.
      wakeDownloader(t.db.name);
      await expect.poll(() => results.length).toBe(2);
      await runner.idle();
      expect(t.seen).toEqual([f.file_url]);
      expect((await readDeviceFile(t.db, f))?.bytes).toEqual(t.bodies.get(f.file_url!));
    } finally {
      await runner.stop();
    }
    // Stopped (the device locked): a wake does nothing.
    wakeDownloader(t.db.name);
    runner.wake();
    await runner.idle();
    expect(results).toHaveLength(2);
  });
});
