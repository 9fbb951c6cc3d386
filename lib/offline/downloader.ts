// Files kept for offline (issue 18): the downloads and the evictions, run by the SERVICE WORKER
// (workers/sw.ts) on a device without a lock, never the page's main thread. On a device with a
// lock (issue 28) the service worker holds no keys and keeps nothing: the same passes run in the
// sync worker (sealed-downloads.ts), with the bytes in the sealed database instead of Cache
// Storage (file-bytes.ts says where each store keeps them).
//
// Why the service worker and not the sync worker: the bytes must end up in the cache the service
// worker serves `/files/…` from, and it is the one place that sees every file the user opens
// (to track last-opened for eviction) whichever tab or screen opened it. There is exactly one per
// origin, so two tabs never download the same file twice (the sync worker exists once per tab).
// The browser may stop an idle service worker mid-download (Chromium: ~30 s without events, at
// most 5 min per extended event): nothing is lost — the bytes so far are in IndexedDB
// (`downloadChunks`, the Cache API cannot hold a partial body and append to it) and the next wake
// continues with `Range: bytes=<received>-` (+ `If-Range`), never restarting. It is woken by the
// page (a "Keep offline" toggle, the Device screen), by the app's own requests (every fetch event,
// at most every 30 s) and by connection changes while it runs.
//
// Everything lives in the user's own database (lib/sync/mirror/db.ts v7), so sign-out removes it; a
// database that disappears mid-pass (sign-out) stops the pass and is never created again. A pass
// never writes `meta` (an empty meta is how lib/view/mirror.ts tells a cleared database).
import type { DexieOptions } from 'dexie';
import { databaseExists, fileById, filesOfConversations, type OfflineFile, openSyncDb, type ParleyDb } from '../sync/page';
import { recordOpened } from './device-files';
import { DOWNLOAD_CHUNK_BYTES, type FileBytesStore, sealChunkBytes } from './file-bytes';
import { downloadQueue, effectiveBudget, pauseReason, planEviction, type CacheEntry, type ConnectionLike, type QueueFile } from './policy';
import { keptConversationIds, readBudgetSetting, readOfflineStatus, STATUS_KEY, type OfflineStatus } from './settings';

export { DOWNLOAD_CHUNK_BYTES };
const ATTEMPTS_PER_FILE = 3;

/** Headers of the server's response kept on the cached copy (never Content-Range/Length). */
const KEPT_HEADERS = ['content-type', 'content-disposition', 'etag', 'last-modified', 'x-content-type-options', 'content-security-policy', 'cross-origin-resource-policy', 'referrer-policy'];

export interface DownloaderDeps {
  fetch: (input: string, init?: RequestInit) => Promise<Response>;
  /** Where complete files' bytes go: Cache Storage (service worker, no lock) or the database's chunks (sealed; file-bytes.ts). */
  store: FileBytesStore;
  origin: string;
  connection(): ConnectionLike | null;
  quota(): Promise<number | null>;
  now(): number;
  /** Waits between attempts after a failure (tests: resolve at once). */
  wait(ms: number): Promise<void>;
  dexie?: DexieOptions;
}

export type PassResult = 'done' | 'paused' | 'gone';

/** Opens a database of the app without ever creating it; the pass stops if it is deleted. */
async function openExisting(database: string, deps: DownloaderDeps): Promise<ParleyDb | null> {
  if (!(await databaseExists(database, deps.dexie))) return null;
  const db = openSyncDb(database, { ...deps.dexie });
  // Sign-out deletes it, a new version upgrades it: let go at once and never reopen it by itself.
  db.on('versionchange', () => {
    db.close();
  });
  return db;
}

function entriesOf(rows: readonly OfflineFile[], kept: ReadonlySet<string>): CacheEntry[] {
  return rows.map((r) => ({ fileId: r.fileId, size: r.complete ? r.size : r.received, lastOpenedAt: r.lastOpenedAt, kept: r.conversationId !== null && kept.has(r.conversationId) }));
}

async function removeFile(db: ParleyDb, store: FileBytesStore, fileId: string): Promise<void> {
  const row = await db.offlineFiles.get(fileId);
  if (row) await store.remove(row);
  await db.transaction('rw', db.offlineFiles, db.downloadChunks, async () => {
    await db.downloadChunks.where('fileId').equals(fileId).delete();
    await db.offlineFiles.delete(fileId);
  });
}

/** Evicts per the plan; returns whether the incoming bytes fit. */
async function makeRoom(db: ParleyDb, store: FileBytesStore, kept: ReadonlySet<string>, budget: number, incoming: number, except?: string): Promise<boolean> {
  const rows = (await db.offlineFiles.toArray()).filter((r) => r.fileId !== except);
  const plan = planEviction(entriesOf(rows, kept), budget, incoming);
  for (const fileId of plan.evict) await removeFile(db, store, fileId);
  return plan.fits;
}

/**
 * One pass over a database: evict down to the budget, then download what kept conversations
 * lack, newest first, until done or the connection says to wait.
 */
export async function runPass(database: string, deps: DownloaderDeps): Promise<PassResult> {
  const db = await openExisting(database, deps);
  if (!db) return 'gone';
  const status: OfflineStatus = { paused: null, waiting: 0, tooBig: 0, failure: null };
  try {
    const store = deps.store;
    await store.reconcile(db);
    const kept = await keptConversationIds(db);
    const budget = effectiveBudget(await readBudgetSetting(db), await deps.quota());
    await makeRoom(db, store, kept, budget, 0);

    const files = await filesOfConversations(db, kept);
    const rows = await db.offlineFiles.toArray();
    const queue = downloadQueue(
      files.map((f) => ({ id: f.id, conversationId: f.conversationId, created_at: f.created_at, file_size: f.file_size, file_url: f.file_url })),
      kept,
      new Map(rows.map((r) => [r.fileId, r])),
      deps.origin,
    );
    status.waiting = queue.length;
    for (const file of queue) {
      const reason = pauseReason(deps.connection());
      if (reason) {
        status.paused = reason;
        return 'paused';
      }
      if (!(await makeRoom(db, store, kept, budget, file.file_size, file.id))) {
        status.tooBig++;
        continue;
      }
      const result = await downloadFile(db, file, deps);
      if (result === 'complete') status.waiting--;
      else if (result === 'paused') {
        status.paused = pauseReason(deps.connection()) ?? 'slow';
        return 'paused';
      } else status.failure = result.failure;
    }
    status.waiting -= status.tooBig;
    return 'done';
  } catch (error) {
    if (error instanceof Error && error.name === 'DatabaseClosedError') return 'gone';
    throw error;
  } finally {
    // Written only when it changed: the Device screen watches it.
    if (db.isOpen()) {
      const before = await readOfflineStatus(db).catch(() => undefined);
      if (JSON.stringify(before) !== JSON.stringify(status)) await db.offlineState.put({ key: STATUS_KEY, value: status }).catch(() => {});
    }
    db.close();
  }
}

function contentRange(header: string | null): { start: number; total: number } | null {
  const m = /^bytes (\d+)-\d+\/(\d+)$/.exec(header ?? '');
  return m ? { start: Number(m[1]), total: Number(m[2]) } : null;
}

function concat(parts: Uint8Array[], length: number): ArrayBuffer {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out.buffer;
}

/**
 * Downloads one file into the store, continuing a partial download with Range. 'paused': the
 * connection turned slow or metered mid-way (the bytes so far are kept).
 */
export async function downloadFile(db: ParleyDb, file: QueueFile, deps: DownloaderDeps): Promise<'complete' | 'paused' | { failure: string }> {
  let row = await db.offlineFiles.get(file.id);
  if (row && row.url !== file.file_url) {
    // Renamed since: the old URL no longer works and its bytes may differ in name only; start over.
    await removeFile(db, deps.store, file.id);
    row = undefined;
  }
  if (!row) {
    row = { fileId: file.id, conversationId: file.conversationId, url: file.file_url, size: file.file_size, received: 0, complete: false, lastOpenedAt: null, etag: null, headers: [] };
    await db.offlineFiles.put(row);
  }
  const current = row;
  const restart = async () => {
    await db.transaction('rw', db.offlineFiles, db.downloadChunks, async () => {
      await db.downloadChunks.where('fileId').equals(file.id).delete();
      current.received = 0;
      await db.offlineFiles.put(current);
    });
  };
  let failures = 0;
  let failure = '';
  while (current.received < current.size || current.size === 0) {
    if (failures >= ATTEMPTS_PER_FILE) return { failure };
    const headers: Record<string, string> = { Range: `bytes=${current.received}-` };
    if (current.received > 0 && current.etag) headers['If-Range'] = current.etag;
    let response: Response;
    try {
      response = await deps.fetch(current.url, { headers, cache: 'no-store', credentials: 'same-origin' });
    } catch (error) {
      failures++;
      failure = `network: ${error instanceof Error ? error.message : String(error)}`;
      await deps.wait(1000 * failures);
      continue;
    }
    if (response.status === 200) {
      // The whole file (Range ignored, or If-Range said it changed): from the start.
      if (current.received > 0) await restart();
    } else if (response.status === 206) {
      const range = contentRange(response.headers.get('content-range'));
      if (!range || range.start !== current.received) {
        await response.body?.cancel();
        await restart();
        failures++;
        failure = 'the server answered another range';
        continue;
      }
      current.size = range.total;
    } else if (response.status === 416 && current.received > 0) {
      await restart();
      failures++;
      failure = 'the server refused the range';
      continue;
    } else {
      await response.body?.cancel();
      return { failure: `the server answered ${response.status}` };
    }
    if (current.received === 0) {
      current.headers = KEPT_HEADERS.flatMap((name) => {
        const value = response.headers.get(name);
        return value === null ? [] : [[name, value] satisfies [string, string]];
      });
      if (response.status === 200) current.size = Number(response.headers.get('content-length') ?? current.size);
    }
    current.etag = response.headers.get('etag') ?? current.etag;
    if (current.size === 0) break;

    const before = current.received;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const plain = concat(pending, pendingBytes);
      const offset = current.received;
      pending = [];
      pendingBytes = 0;
      const bytes = await sealChunkBytes(plain);
      await db.transaction('rw', db.offlineFiles, db.downloadChunks, async () => {
        await db.downloadChunks.put({ fileId: file.id, offset, bytes });
        current.received = offset + plain.byteLength;
        await db.offlineFiles.put(current);
      });
    };
    const reader = response.body!.getReader();
    let paused = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        pending.push(value);
        pendingBytes += value.byteLength;
        if (pendingBytes >= DOWNLOAD_CHUNK_BYTES) await flush();
        if (pauseReason(deps.connection())) {
          paused = true;
          await reader.cancel().catch(() => {});
          break;
        }
      }
    } catch (error) {
      // A cut mid-way: what arrived is kept, and continued from there.
      failure = `network: ${error instanceof Error ? error.message : String(error)}`;
      failures++;
    }
    await flush();
    if (paused) return 'paused';
    if (current.received === before && current.received < current.size) {
      failures++;
      failure ||= 'no bytes arrived';
      await deps.wait(1000 * failures);
    }
  }
  // Complete: the whole response becomes the file's bytes in the store.
  const chunks = await db.downloadChunks.where('fileId').equals(file.id).sortBy('offset');
  if (chunks.reduce((n, c) => n + c.bytes.byteLength, 0) !== current.size) {
    await restart();
    return { failure: 'the bytes did not add up; starting over' };
  }
  await deps.store.complete(db, current, chunks);
  return 'complete';
}

/**
 * A file was opened (served by the service worker, from the cache or the network): record when,
 * in whichever of the app's databases holds it, and adopt it if it was just cached.
 */
export async function noteOpened(database: string, url: string, cached: { size: number } | null, deps: DownloaderDeps): Promise<boolean> {
  const fileId = new URL(url).searchParams.get('id');
  if (!fileId) return false;
  const db = await openExisting(database, deps);
  if (!db) return false;
  try {
    const file = await fileById(db, fileId);
    if (!file) return false;
    await recordOpened(db, file, url, cached, deps.now());
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'DatabaseClosedError') return false;
    throw error;
  } finally {
    db.close();
  }
}

/** A single byte range of a cached file (RFC 9110), as the server would answer it. */
export async function partialResponse(request: Request, cached: Response): Promise<Response> {
  const blob = await cached.blob();
  const m = /^bytes=(\d*)-(\d*)$/.exec(request.headers.get('range') ?? '');
  if (!m || (m[1] === '' && m[2] === '')) return new Response(blob, { status: 200, headers: cached.headers });
  const start = m[1] === '' ? Math.max(0, blob.size - Number(m[2])) : Number(m[1]);
  const end = m[1] === '' || m[2] === '' ? blob.size - 1 : Math.min(Number(m[2]), blob.size - 1);
  if (start >= blob.size || start > end) return new Response(null, { status: 416, headers: { 'content-range': `bytes */${blob.size}` } });
  const headers = new Headers(cached.headers);
  headers.set('content-range', `bytes ${start}-${end}/${blob.size}`);
  headers.set('content-length', String(end - start + 1));
  return new Response(blob.slice(start, end + 1), { status: 206, headers });
}
