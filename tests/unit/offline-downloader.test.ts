// Files kept for offline (issue 18): the service worker's downloader (lib/offline/downloader.ts)
// against fake-indexeddb, an in-memory Cache and a fake network that honours Range and can cut a
// response mid-way. Injected clock, connection and quota.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { downloadFile, noteOpened, partialResponse, runPass, type DownloaderDeps } from '../../lib/offline/downloader';
import { cacheStorageFiles } from '../../lib/offline/file-bytes';
import { BUDGET_KEY, KEEP_PINNED_KEY, STATUS_KEY } from '../../lib/offline/settings';
import { openSyncDb, type FileView, type ParleyDb } from '../../lib/sync/mirror/db';
import { setMeta } from '../../lib/sync/mirror/meta';
import { OPENED_FILES_CACHE } from '../../lib/sync/session/removal';
import type { ConnectionLike } from '../../lib/offline/policy';

const ORIGIN = 'https://parley.example';

class MemoryCache {
  entries = new Map<string, Response>();
  async match(request: RequestInfo) {
    const hit = this.entries.get(typeof request === 'string' ? request : request.url);
    return hit?.clone();
  }
  async put(request: RequestInfo, response: Response) {
    this.entries.set(typeof request === 'string' ? request : request.url, response);
  }
  async delete(request: RequestInfo) {
    return this.entries.delete(typeof request === 'string' ? request : request.url);
  }
  async keys() {
    return [...this.entries.keys()].map((url) => new Request(url));
  }
}

function memoryCaches() {
  const cache = new MemoryCache();
  const storage = { open: async (name: string) => (name === OPENED_FILES_CACHE ? cache : new MemoryCache()) } as unknown as CacheStorage;
  return { cache, storage };
}

function bytesOf(size: number, seed: number) {
  return Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) % 251);
}

/** A server of file bytes: Range and If-Range as lib/api/http/assets.ts answers them; `cutAfter` ends the next response with an error after that many bytes. */
function fakeServer(bodies: Map<string, Uint8Array>) {
  const seen: Array<{ url: string; range: string | null; ifRange: string | null }> = [];
  const control = { cutAfter: null as number | null, down: false };
  const fetch = async (input: string, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    seen.push({ url: input, range: headers.get('range'), ifRange: headers.get('if-range') });
    if (control.down) throw new TypeError('Failed to fetch');
    const body = bodies.get(input);
    if (!body) return new Response(null, { status: 404 });
    const etag = `"e${body.length}"`;
    const m = /^bytes=(\d+)-$/.exec(headers.get('range') ?? '');
    const ifRange = headers.get('if-range');
    const start = m && (!ifRange || ifRange === etag) ? Number(m[1]) : null;
    const slice = body.slice(start ?? 0);
    const cut = control.cutAfter;
    control.cutAfter = null;
    // Small network packets, each read in turn; a cut errors the stream once those before it were read.
    const upTo = cut === null ? slice.length : Math.min(cut, slice.length);
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at < upTo) {
          controller.enqueue(slice.slice(at, Math.min(at + 16 * 1024, upTo)));
          at += 16 * 1024;
        } else if (cut !== null) controller.error(new TypeError('network error: connection reset'));
        else controller.close();
      },
    });
    const common = { 'content-type': 'application/pdf', etag, 'content-disposition': 'inline', 'x-content-type-options': 'nosniff' };
    return start === null
      ? new Response(stream, { status: 200, headers: { ...common, 'content-length': String(body.length) } })
      : new Response(stream, { status: 206, headers: { ...common, 'content-length': String(slice.length), 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } });
  };
  return { fetch, seen, control };
}

function setup(name: string) {
  const indexedDB = new IDBFactory();
  const dexie = { indexedDB, IDBKeyRange };
  const db = openSyncDb(name, dexie);
  const bodies = new Map<string, Uint8Array>();
  const server = fakeServer(bodies);
  const { cache, storage } = memoryCaches();
  let connection: ConnectionLike | null = { saveData: false, effectiveType: '4g' };
  let clock = 1_000;
  const deps: DownloaderDeps = {
    fetch: server.fetch,
    store: cacheStorageFiles(storage, OPENED_FILES_CACHE),
    origin: ORIGIN,
    connection: () => connection,
    quota: async () => 10 * 1024 * 1024 * 1024,
    now: () => clock,
    wait: async () => {},
    dexie,
  };
  async function addFile(id: string, conversationId: string, size: number, created_at: number) {
    const url = `${ORIGIN}/files/${id}.pdf?id=${id}&sig=s`;
    bodies.set(url, bytesOf(size, created_at));
    const row = { id, message_id: `m${id}`, filename: `${id}.pdf`, file_url: url, file_type: 'application/pdf', file_size: size, created_at, conversationId, syncState: 'synced' } as FileView;
    await db.files.put(row);
    return row;
  }
  return {
    db,
    deps,
    cache,
    server,
    bodies,
    addFile,
    setConnection: (c: ConnectionLike | null) => (connection = c),
    tick: (ms: number) => (clock += ms),
  };
}

async function cachedBytes(cache: MemoryCache, url: string) {
  const hit = await cache.match(url);
  return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
}

async function keep(db: ParleyDb, conversationId: string) {
  await db.offlineKeep.put({ conversationId, keep: true });
}

describe('keep offline: downloads', () => {
  it('downloads the files of kept conversations into the file cache, newest first, and nothing else', async () => {
    const t = setup('dl-order');
    const old = await t.addFile('old', 'kept', 1000, 100);
    const fresh = await t.addFile('new', 'kept', 1000, 300);
    const other = await t.addFile('other', 'elsewhere', 1000, 500);
    await keep(t.db, 'kept');
    expect(await runPass(t.db.name, t.deps)).toBe('done');
    expect(t.server.seen.map((s) => s.url)).toEqual([fresh.file_url, old.file_url]);
    expect(await cachedBytes(t.cache, fresh.file_url)).toEqual(t.bodies.get(fresh.file_url));
    expect(await cachedBytes(t.cache, old.file_url)).toEqual(t.bodies.get(old.file_url));
    expect(await t.cache.match(other.file_url)).toBeUndefined();
    const response = (await t.cache.match(fresh.file_url))!;
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe('1000');
    expect((await t.db.offlineFiles.toArray()).map((r) => [r.fileId, r.complete])).toEqual([
      ['new', true],
      ['old', true],
    ]);
    expect(await t.db.downloadChunks.count()).toBe(0);
    // A second pass has nothing to do.
    t.server.seen.length = 0;
    await runPass(t.db.name, t.deps);
    expect(t.server.seen).toEqual([]);
  });

  it('pinned conversations are kept by default, not when the setting is off', async () => {
    const t = setup('dl-pinned');
    const file = await t.addFile('p', 'pinned-conv', 100, 1);
    await t.db.conversations.put({ id: 'pinned-conv', contact_id: 'x', group_id: null, is_pinned: true, is_muted: false, archived_at: null, last_active_at: null, last_opened_at: null, pinned_message_id: null, created_at: 1, syncState: 'synced' } as never);
    await setMeta(t.db, KEEP_PINNED_KEY, false);
    await runPass(t.db.name, t.deps);
    expect(await t.cache.match(file.file_url)).toBeUndefined();
    await setMeta(t.db, KEEP_PINNED_KEY, true);
    await runPass(t.db.name, t.deps);
    expect(await cachedBytes(t.cache, file.file_url)).toEqual(t.bodies.get(file.file_url));
  });

  it('a download cut mid-way keeps its bytes and continues with Range (and If-Range), never from the start', async () => {
    const t = setup('dl-resume');
    const size = 1024 * 1024 + 123;
    const file = await t.addFile('big', 'kept', size, 1);
    await keep(t.db, 'kept');
    t.server.control.cutAfter = 600 * 1024;
    const result = await downloadFile(t.db, { id: file.id, conversationId: 'kept', created_at: 1, file_size: size, file_url: file.file_url }, t.deps);
    expect(result).toBe('complete');
    expect(t.server.seen.map((s) => [s.range, s.ifRange])).toEqual([
      ['bytes=0-', null],
      [`bytes=${600 * 1024}-`, `"e${size}"`],
    ]);
    expect(await cachedBytes(t.cache, file.file_url)).toEqual(t.bodies.get(file.file_url));
    expect(await t.db.downloadChunks.count()).toBe(0);
  });

  it('a pass stopped by a dead network leaves the partial bytes; the next pass continues them', async () => {
    const t = setup('dl-resume-later');
    const size = 700 * 1024;
    const file = await t.addFile('big', 'kept', size, 1);
    await keep(t.db, 'kept');
    t.server.control.cutAfter = 300 * 1024;
    // After the cut the network is gone: every retry fails; the pass ends with the bytes kept.
    const realFetch = t.deps.fetch;
    let calls = 0;
    t.deps.fetch = async (input, init) => {
      if (calls++ > 0) t.server.control.down = true;
      return realFetch(input, init);
    };
    await runPass(t.db.name, t.deps);
    const row = (await t.db.offlineFiles.get('big'))!;
    expect(row).toMatchObject({ complete: false, received: 300 * 1024 });
    expect((await t.db.downloadChunks.where('fileId').equals('big').toArray()).reduce((n, c) => n + c.bytes.byteLength, 0)).toBe(300 * 1024);
    expect(await t.db.offlineState.get(STATUS_KEY)).toMatchObject({ value: { waiting: 1, failure: expect.stringContaining('network') } });

    t.server.control.down = false;
    t.deps.fetch = realFetch;
    t.server.seen.length = 0;
    await runPass(t.db.name, t.deps);
    expect(t.server.seen.map((s) => s.range)).toEqual([`bytes=${300 * 1024}-`]);
    expect(await cachedBytes(t.cache, file.file_url)).toEqual(t.bodies.get(file.file_url));
  });

  it('a file changed meanwhile (If-Range fails: 200) starts over instead of mixing bytes', async () => {
    const t = setup('dl-changed');
    const file = await t.addFile('f', 'kept', 500 * 1024, 1);
    await keep(t.db, 'kept');
    t.server.control.cutAfter = 300 * 1024;
    t.server.control.down = false;
    const realFetch = t.deps.fetch;
    let calls = 0;
    t.deps.fetch = async (input, init) => (calls++ > 0 ? Promise.reject(new TypeError('offline')) : realFetch(input, init));
    await runPass(t.db.name, t.deps);
    expect((await t.db.offlineFiles.get('f'))!.received).toBe(300 * 1024);
    // The server's copy changed: new ETag, new bytes.
    t.bodies.set(file.file_url, bytesOf(500 * 1024 + 1, 77));
    t.deps.fetch = realFetch;
    await runPass(t.db.name, t.deps);
    expect(await cachedBytes(t.cache, file.file_url)).toEqual(t.bodies.get(file.file_url));
  });

  it('pauses on a slow or metered connection, keeping what arrived, and resumes when it changes', async () => {
    const t = setup('dl-pause');
    const a = await t.addFile('a', 'kept', 1000, 2);
    const b = await t.addFile('b', 'kept', 1000, 1);
    await keep(t.db, 'kept');
    t.setConnection({ saveData: true });
    expect(await runPass(t.db.name, t.deps)).toBe('paused');
    expect(t.server.seen).toEqual([]);
    expect((await t.db.offlineState.get(STATUS_KEY))!.value).toMatchObject({ paused: 'save-data', waiting: 2 });
    t.setConnection({ effectiveType: 'slow-2g' });
    expect(await runPass(t.db.name, t.deps)).toBe('paused');
    expect((await t.db.offlineState.get(STATUS_KEY))!.value).toMatchObject({ paused: 'slow' });
    t.setConnection({ effectiveType: '4g' });
    expect(await runPass(t.db.name, t.deps)).toBe('done');
    expect(await cachedBytes(t.cache, a.file_url)).not.toBeNull();
    expect(await cachedBytes(t.cache, b.file_url)).not.toBeNull();
    expect((await t.db.offlineState.get(STATUS_KEY))!.value).toMatchObject({ paused: null, waiting: 0 });
  });
});

describe('keep offline: budget and eviction', () => {
  it('evicts the least recently opened file not kept offline to stay within the budget', async () => {
    const t = setup('evict');
    const opened1 = await t.addFile('o1', 'plain', 400, 1);
    const opened2 = await t.addFile('o2', 'plain', 400, 2);
    const kept = await t.addFile('k', 'kept', 400, 3);
    await setMeta(t.db, BUDGET_KEY, 1000);
    // The user opened o1, then o2 (the service worker cached them and records the openings).
    for (const f of [opened1, opened2]) {
      await t.cache.put(f.file_url, new Response(t.bodies.get(f.file_url)!.slice()));
      expect(await noteOpened(t.db.name, f.file_url, { size: 400 }, t.deps)).toBe(true);
      t.tick(1000);
    }
    // o1 opened again, later than o2: o2 is now the least recently opened.
    await noteOpened(t.db.name, opened1.file_url, { size: 400 }, t.deps);
    expect(await runPass(t.db.name, t.deps)).toBe('done');
    expect(await t.cache.match(opened2.file_url)).toBeDefined(); // 800 of 1000: nothing to do

    await keep(t.db, 'kept');
    await runPass(t.db.name, t.deps);
    expect(await cachedBytes(t.cache, kept.file_url)).toEqual(t.bodies.get(kept.file_url));
    expect(await t.cache.match(opened2.file_url)).toBeUndefined();
    expect(await t.cache.match(opened1.file_url)).toBeDefined();
    expect((await t.db.offlineFiles.toArray()).map((r) => r.fileId).sort()).toEqual(['k', 'o1']);

    // A smaller budget: the other opened file goes too, the kept one never.
    await setMeta(t.db, BUDGET_KEY, 500);
    await runPass(t.db.name, t.deps);
    expect(await t.cache.match(opened1.file_url)).toBeUndefined();
    expect(await t.cache.match(kept.file_url)).toBeDefined();
  });

  it('a kept file that cannot fit is skipped and said so, not downloaded', async () => {
    const t = setup('too-big');
    await t.addFile('huge', 'kept', 5000, 1);
    await keep(t.db, 'kept');
    await setMeta(t.db, BUDGET_KEY, 1000);
    await runPass(t.db.name, t.deps);
    expect(t.server.seen).toEqual([]);
    expect((await t.db.offlineState.get(STATUS_KEY))!.value).toMatchObject({ tooBig: 1 });
  });

  it('a pass writes nothing into meta: an empty meta is how a database the browser cleared is told (lib/view/mirror.ts)', async () => {
    const t = setup('no-meta');
    await t.addFile('f', 'kept', 10, 1);
    await keep(t.db, 'kept');
    t.setConnection({ saveData: true });
    await runPass(t.db.name, t.deps);
    t.setConnection(null);
    await runPass(t.db.name, t.deps);
    expect(await t.db.meta.count()).toBe(0);
    expect(await t.db.offlineState.get(STATUS_KEY)).toMatchObject({ value: { paused: null, waiting: 0 } });
  });

  it('never creates a database that is gone (signed out)', async () => {
    const t = setup('gone');
    const factory = t.deps.dexie!.indexedDB as IDBFactory;
    await t.db.delete();
    expect(await runPass('gone', t.deps)).toBe('gone');
    expect(await noteOpened('gone', `${ORIGIN}/files/x?id=x&sig=s`, { size: 1 }, t.deps)).toBe(false);
    expect((await factory.databases()).map((d) => d.name)).toEqual([]);
  });
});

describe('keep offline: ranges of a cached file', () => {
  const cached = () => new Response(new TextEncoder().encode('0123456789'), { headers: { 'content-type': 'application/pdf', 'content-length': '10' } });
  const ask = (range: string) => new Request(`${ORIGIN}/files/a.pdf?id=a&sig=s`, { headers: { range } });
  it('answers a byte range from the cached copy, as the server would', async () => {
    const middle = await partialResponse(ask('bytes=2-5'), cached());
    expect([middle.status, middle.headers.get('content-range'), middle.headers.get('content-length'), await middle.text()]).toEqual([206, 'bytes 2-5/10', '4', '2345']);
    const open = await partialResponse(ask('bytes=7-'), cached());
    expect([open.status, await open.text()]).toEqual([206, '789']);
    const suffix = await partialResponse(ask('bytes=-3'), cached());
    expect([suffix.headers.get('content-range'), await suffix.text()]).toEqual(['bytes 7-9/10', '789']);
    const past = await partialResponse(ask('bytes=10-'), cached());
    expect([past.status, past.headers.get('content-range')]).toEqual([416, 'bytes */10']);
    const several = await partialResponse(ask('bytes=0-1,4-5'), cached());
    expect([several.status, await several.text()]).toEqual([200, '0123456789']);
  });
});
