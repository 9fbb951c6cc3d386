// Thumbnails of files on the server that the device has never had (issue 32 item 13): while a
// conversation's files or the Files tab are listed, an image or a PDF without a thumbnail has its
// bytes fetched in the background — one at a time, with the viewer's access (the file's signed
// URL) — its thumbnail made (thumbnail-workers.ts) and stored, and the bytes dropped. The fetch is
// `cache: 'no-store'`: the browser's HTTP cache keeps nothing (the server says no-store too) and
// the service worker, which keeps a copy of every file the page opens, leaves this one alone
// (workers/sw.ts). So no second copy of the file is kept, in Cache Storage or IndexedDB.
//
// Only when the connection allows (policy.ts backgroundFetchReason: not with Data Saver, not on
// 2G, not on a link the browser says is cellular or metered) and the browser is online; files over
// THUMBNAIL_SOURCE_MAX_BYTES are left out. A file that could not be made into a thumbnail (a
// damaged PDF, an answer of 404) is not asked again in this page's life; a lost connection leaves
// the file waiting until `resume` (back online, the connection changed) or a new ask 30 s later.
import { backgroundFetchReason, type ConnectionLike, MiB } from '../../offline/policy';
import type { FileView } from '../../sync/page';
import type { Made, Thumbnailed } from './thumbnail-workers';

/** Files larger than this are not fetched for a thumbnail (the user opens them, or keeps them offline). */
export const THUMBNAIL_SOURCE_MAX_BYTES = 20 * MiB;
/** After a lost connection, a new ask tries again no sooner than this. */
export const RETRY_AFTER_LOST_CONNECTION_MS = 30_000;

export type ThumbnailSource = Pick<FileView, 'id' | 'file_url' | 'file_size' | 'file_type' | 'filename'>;

/** Whether a file may be fetched for its thumbnail at all: on the server, not too large, a picture a worker can draw. */
export function fetchableForThumbnail(file: ThumbnailSource): boolean {
  if (!file.file_url) return false;
  if (!(file.file_size <= THUMBNAIL_SOURCE_MAX_BYTES)) return false;
  // SVG is drawn by the viewer in a sandbox, not decoded by the thumbnail worker.
  return !/svg/i.test(file.file_type) && !/\.svgz?$/i.test(file.filename);
}

export interface ThumbnailFetchDeps {
  fetch(url: string, init: RequestInit): Promise<Response>;
  /** The thumbnail of these bytes, within its size limit, or null (not readable, too heavy). */
  make(kind: Thumbnailed, blob: Blob): Promise<Made>;
  /** Whether the file has a thumbnail already. */
  has(fileId: string): Promise<boolean>;
  store(fileId: string, made: NonNullable<Made>): Promise<void>;
  connection(): ConnectionLike | null;
  online(): boolean;
  now(): number;
  /** Told each file's outcome (tests). */
  onOutcome?(fileId: string, outcome: Outcome): void;
}

export type Outcome = 'made' | 'had' | 'failed' | 'lost' | 'dropped';

export function thumbnailFetcher(deps: ThumbnailFetchDeps) {
  /** Asked for and not done yet, by file id, in the order asked. */
  const waiting = new Map<string, { file: ThumbnailSource; kind: Thumbnailed }>();
  /** URLs (one version of one file) that gave no thumbnail: not asked again. */
  const failed = new Set<string>();
  let running: Promise<void> | null = null;
  /** The file being fetched now. */
  let current: string | null = null;
  let lostAt: number | null = null;
  /** Told whenever a file's state may have changed (an outcome, a lost or resumed connection). */
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };

  const mayRun = () => lostAt === null && deps.online() && backgroundFetchReason(deps.connection()) === null;

  async function one(file: ThumbnailSource, kind: Thumbnailed): Promise<Outcome> {
    const url = file.file_url;
    if (await deps.has(file.id).catch(() => true)) return 'had';
    let response: Response;
    try {
      response = await deps.fetch(url, { cache: 'no-store', credentials: 'same-origin' });
    } catch {
      return 'lost';
    }
    if (!response.ok) {
      void response.body?.cancel().catch(() => {});
      failed.add(url);
      return 'failed';
    }
    const length = Number(response.headers.get('content-length'));
    if (Number.isFinite(length) && length > THUMBNAIL_SOURCE_MAX_BYTES) {
      void response.body?.cancel().catch(() => {});
      failed.add(url);
      return 'failed';
    }
    let blob: Blob | null;
    try {
      blob = await response.blob();
    } catch {
      return 'lost';
    }
    const made = await deps.make(kind, blob).catch(() => null);
    // The bytes go now: only the thumbnail is kept.
    blob = null;
    if (!made) {
      failed.add(url);
      return 'failed';
    }
    try {
      await deps.store(file.id, made);
    } catch {
      // The device locked, or the user signed out, meanwhile: asked again when listed again.
      return 'dropped';
    }
    return 'made';
  }

  function pump(): Promise<void> {
    if (running) return running;
    if (waiting.size === 0 || !mayRun()) return Promise.resolve();
    running = (async () => {
      try {
        for (let next = waiting.entries().next(); !next.done && mayRun(); next = waiting.entries().next()) {
          const [fileId, job] = next.value;
          waiting.delete(fileId);
          current = fileId;
          const outcome = await one(job.file, job.kind).finally(() => (current = null));
          deps.onOutcome?.(fileId, outcome);
          if (outcome === 'lost') {
            // No network (or the server cannot be reached): it waits, and so does the rest.
            lostAt = deps.now();
            if (!waiting.has(fileId)) waiting.set(fileId, job);
          }
          changed();
        }
      } finally {
        running = null;
      }
    })();
    return running;
  }

  /** Where a file stands: as `want` says, or 'done' once nothing is pending for it (made, or had). */
  function stateOf(file: ThumbnailSource): 'queued' | 'waiting' | 'skipped' | 'done' {
    if (!fetchableForThumbnail(file) || failed.has(file.file_url)) return 'skipped';
    if (current === file.id) return 'queued';
    if (!waiting.has(file.id)) return 'done';
    return mayRun() ? 'queued' : 'waiting';
  }

  return {
    /**
     * A listed file: its thumbnail is fetched when its turn comes, if it may be. Says which:
     * 'queued' (it goes), 'waiting' (for the connection to allow it: offline, Data Saver, 2G,
     * metered), or 'skipped' (never: not on the server, too large, an SVG, or it failed before).
     */
    want(file: ThumbnailSource, kind: Thumbnailed): 'queued' | 'waiting' | 'skipped' {
      if (!fetchableForThumbnail(file) || failed.has(file.file_url)) return 'skipped';
      const queued = waiting.get(file.id);
      // A new version (a rename is a new URL) replaces the one asked for.
      if (!queued || queued.file.file_url !== file.file_url) waiting.set(file.id, { file, kind });
      if (lostAt !== null && deps.now() - lostAt >= RETRY_AFTER_LOST_CONNECTION_MS) lostAt = null;
      void pump();
      return mayRun() ? 'queued' : 'waiting';
    },
    stateOf,
    /** `listener` is told when a file's state may have changed (read it with stateOf); returns the unsubscribe. */
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** The file is no longer listed: not fetched for it (one being fetched finishes). */
    forget(fileId: string): void {
      waiting.delete(fileId);
    },
    /** Back online, or the connection changed: what waits may go. */
    resume(): void {
      lostAt = null;
      void pump();
      changed();
    },
    /** Settles when nothing runs (tests). */
    idle(): Promise<void> {
      return running ?? Promise.resolve();
    },
    waiting: () => [...waiting.keys()],
    failed: (url: string) => failed.has(url),
  };
}

export type ThumbnailFetcher = ReturnType<typeof thumbnailFetcher>;
