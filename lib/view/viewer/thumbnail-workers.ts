// The page's side of the thumbnail workers (workers/thumbnail.worker.ts for images,
// workers/pdf-thumbnail.worker.ts for a PDF's first page): one worker per kind, started on the
// first thumbnail of that kind, asked one question per thumbnail. A worker that fails (its script
// could not load — offline before it was cached — or it crashed) answers every question it holds
// with null, so the list keeps the icon and the queue of thumbnails goes on; the next thumbnail of
// that kind starts a new worker.

export type Made = { bytes: ArrayBuffer; type: string } | null;
export type Thumbnailed = 'image' | 'pdf';

/** What the maker needs of a Worker. */
export interface WorkerLike {
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  postMessage(message: unknown): void;
  terminate(): void;
}

export function thumbnailMaker(spawn: (kind: Thumbnailed) => WorkerLike, size: number) {
  const workers = new Map<Thumbnailed, { worker: WorkerLike; answers: Map<number, (made: Made) => void> }>();
  let nextId = 0;

  function workerFor(kind: Thumbnailed) {
    let entry = workers.get(kind);
    if (entry) return entry;
    const worker = spawn(kind);
    const answers = new Map<number, (made: Made) => void>();
    entry = { worker, answers };
    worker.onmessage = (event: MessageEvent<{ id: number; bytes?: ArrayBuffer; type?: string }>) => {
      const { id, bytes, type } = event.data ?? {};
      answers.get(id)?.(bytes && type ? { bytes, type } : null);
      answers.delete(id);
    };
    worker.onerror = () => {
      if (workers.get(kind)?.worker === worker) workers.delete(kind);
      worker.terminate();
      for (const answer of answers.values()) answer(null);
      answers.clear();
    };
    workers.set(kind, entry);
    return entry;
  }

  /** `fit`: a smaller box or a lower WebP quality than the default (0.75) for this one. */
  return function make(kind: Thumbnailed, blob: Blob, fit: { size?: number; quality?: number } = {}): Promise<Made> {
    const { worker, answers } = workerFor(kind);
    const id = ++nextId;
    return new Promise((resolve) => {
      answers.set(id, resolve);
      worker.postMessage(fit.quality === undefined ? { id, blob, size: fit.size ?? size } : { id, blob, size: fit.size ?? size, quality: fit.quality });
    });
  };
}

/** The most a thumbnail may weigh: a list of photos stays light on the device. */
export const THUMBNAIL_MAX_BYTES = 16 * 1024;

/**
 * Tries in turn until a thumbnail fits `limit` bytes: the default, a lower quality, then a smaller
 * box at a lower quality still. None fits (a very busy picture): null, the list keeps the icon.
 */
export async function fittingThumbnail(
  make: (fit: { size?: number; quality?: number }) => Promise<Made>,
  size: number,
  limit = THUMBNAIL_MAX_BYTES,
): Promise<Made> {
  const tries = [{}, { quality: 0.5 }, { size: Math.round((size * 2) / 3), quality: 0.4 }];
  for (const fit of tries) {
    const made = await make(fit);
    if (!made) return null;
    if (made.bytes.byteLength <= limit) return made;
  }
  return null;
}
