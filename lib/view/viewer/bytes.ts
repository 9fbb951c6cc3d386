// The bytes of a file to show: a queued upload's from IndexedDB (they stay there until sent, so a
// photo just taken opens with no network), else what the device holds, read here directly, else
// the network.
// What the device holds is read by the page itself, never left to the service worker: in the first
// session after installing, the worker does not control the page (it does from the next load), so
// a fetch would go to the network and fail offline although the device has the file.
// - Without a lock: the opened-files cache (Cache Storage). A file fetched is kept there — by the
//   service worker when it controls the page (it sees the fetch), else by the page — so a file
//   opened once opens offline the next time, in this session too.
// - With a lock (this realm holds the keys) the service worker keeps nothing: the sealed database,
//   where a file fetched is kept (lib/offline/device-files.ts).
// The fetch reports its progress (bytes received of the total) and stops on `signal`.
import { keepOpenedFile, keptFileHeaders, keepOpenedInCache, noteDeviceFileOpened, readCachedFile, readDeviceFile, recordOpened } from '../../offline/device-files';
import { currentSealer, type FileView, OPENED_FILES_CACHE, type ParleyDb, queuedUploadBytes } from '../../sync/page';

export type Loaded =
  | { ok: true; bytes: Uint8Array; from: 'queue' | 'device' | 'network' }
  | { ok: false; reason: 'offline' | 'gone' | 'failed' | 'cancelled'; message: string };

export interface LoadOptions {
  fetcher?: typeof fetch;
  /** The opened-files cache's storage (null: none here, e.g. an insecure origin). */
  caches?: CacheStorage | null;
  /** Whether a service worker controls the page (it then keeps what the page fetches). */
  controlled?: () => boolean;
  /** Aborts the fetch: the result is `cancelled`. */
  signal?: AbortSignal;
  /** Bytes received so far, of the total (null when the server does not say). */
  onProgress?: (received: number, total: number | null) => void;
}

/** Said when a file is not on the device and the network cannot be reached. */
export const NOT_ON_DEVICE = 'Not on this device — available when you’re back online.';


async function queued(db: ParleyDb, fileId: string): Promise<Uint8Array | null> {
  const chunks = await queuedUploadBytes(db, fileId);
  if (!chunks) return null;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(new Uint8Array(c), at);
    at += c.byteLength;
  }
  return out;
}

/** The body, read as it arrives, reporting each step. */
async function readBody(response: Response, onProgress: LoadOptions['onProgress']): Promise<Uint8Array<ArrayBuffer>> {
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : null;
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let received = 0;
  onProgress?.(0, total);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    received += value.byteLength;
    onProgress?.(received, total);
  }
  const out = new Uint8Array(received);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const isAbort = (e: unknown) => e instanceof DOMException && e.name === 'AbortError';
const CANCELLED: Loaded = { ok: false, reason: 'cancelled', message: 'Opening was cancelled.' };

export async function loadFileBytes(db: ParleyDb, file: FileView, options: LoadOptions = {}): Promise<Loaded> {
  const fetcher = options.fetcher ?? fetch;
  const storage = options.caches === undefined ? (typeof caches === 'undefined' ? null : caches) : options.caches;
  const controlled = options.controlled ?? (() => typeof navigator !== 'undefined' && navigator.serviceWorker?.controller != null);
  // An upload not yet on the server (or one whose bytes are still queued): read them here.
  const local = await queued(db, file.id);
  if (local) return { ok: true, bytes: local, from: 'queue' };
  if (!file.file_url) return { ok: false, reason: 'gone', message: 'The bytes of this upload are no longer on this device, and the server does not have it yet.' };
  const sealed = currentSealer() !== null;
  if (sealed) {
    const held = await readDeviceFile(db, file).catch(() => null);
    if (held) {
      await noteDeviceFileOpened(db, file.id, Date.now()).catch(() => {});
      return { ok: true, bytes: held.bytes, from: 'device' };
    }
  } else if (storage) {
    const held = await readCachedFile(storage, OPENED_FILES_CACHE, file.file_url).catch(() => null);
    if (held) {
      // The service worker records the openings it serves; this one it did not see.
      await recordOpened(db, file, file.file_url, { size: held.byteLength }, Date.now()).catch(() => {});
      return { ok: true, bytes: held, from: 'device' };
    }
  }
  let response: Response;
  try {
    response = await fetcher(file.file_url, { signal: options.signal });
  } catch (e) {
    if (isAbort(e) || options.signal?.aborted) return CANCELLED;
    return { ok: false, reason: 'offline', message: NOT_ON_DEVICE };
  }
  if (response.status === 404) return { ok: false, reason: 'gone', message: 'The server no longer has this file (it may have been deleted or renamed; the list updates with the next sync).' };
  if (!response.ok) return { ok: false, reason: 'failed', message: `The server could not send this file (HTTP ${response.status}). Try again later.` };
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await readBody(response, options.onProgress);
  } catch (e) {
    if (isAbort(e) || options.signal?.aborted) return CANCELLED;
    return { ok: false, reason: 'offline', message: `The connection was lost while the file was arriving. ${NOT_ON_DEVICE}` };
  }
  if (response.status === 200) {
    // Kept for offline, while the file is shown: a failure to keep (a full disk, the device
    // locking) does not stop the showing.
    if (sealed) {
      const headers = keptFileHeaders(response.headers);
      void keepOpenedFile(db, file, bytes, headers, Date.now()).catch(() => {});
    } else if (storage && !controlled()) {
      void keepOpenedInCache(db, storage, OPENED_FILES_CACHE, file, bytes, response.headers, Date.now()).catch(() => {});
    }
  }
  return { ok: true, bytes, from: 'network' };
}
