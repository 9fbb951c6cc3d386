'use client';
// A file's mark in the lists: its image thumbnail when one exists (made on the device, in a
// worker, from bytes the device has: lib/view/viewer/thumbnails.ts), else the icon of its kind.
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useMemo } from 'react';
import type { FileView, ParleyDb } from '@/lib/sync/db';
import type { ViewKind } from '@/lib/view/viewer/kind';
import { ensureThumbnail, openThumbnails, pruneThumbnails, THUMBNAIL_SIZE, type ThumbnailsDb } from '@/lib/view/viewer/thumbnails';
import { FileKindIcon } from './FileKindIcon';
import { useSession } from './session-context';
import { useObjectUrl } from './viewer/useObjectUrl';

type Made = { bytes: ArrayBuffer; type: string } | null;

let worker: Worker | null = null;
let nextId = 0;
const answers = new Map<number, (made: Made) => void>();

/** One worker for the page; a format it cannot decode gives null (the icon stays). */
function makeThumbnail(blob: Blob): Promise<Made> {
  if (!worker) {
    worker = new Worker(new URL('../../workers/thumbnail.worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (event: MessageEvent<{ id: number; bytes?: ArrayBuffer; type?: string }>) => {
      const { id, bytes, type } = event.data;
      answers.get(id)?.(bytes && type ? { bytes, type } : null);
      answers.delete(id);
    };
  }
  const id = ++nextId;
  return new Promise((resolve) => {
    answers.set(id, resolve);
    worker!.postMessage({ id, blob, size: THUMBNAIL_SIZE });
  });
}

// One at a time: a list of many images does not read all their bytes at once.
let queue: Promise<unknown> = Promise.resolve();
function enqueue<T>(task: () => Promise<T>): Promise<T> {
  const run = queue.then(task, task);
  queue = run.catch(() => {});
  return run;
}

const pruned = new Set<string>();
function thumbnailsOf(db: ParleyDb): ThumbnailsDb {
  const thumbs = openThumbnails(db.name);
  // Once per page and user: thumbnails of files gone from the mirror go.
  if (!pruned.has(db.name)) {
    pruned.add(db.name);
    void enqueue(() => pruneThumbnails(db, thumbs)).catch(() => {});
  }
  return thumbs;
}

/** The viewer has an image's bytes: its thumbnail is made from them (no second read). */
export function thumbnailFromBytes(db: ParleyDb, file: FileView, bytes: Uint8Array): void {
  const blob = new Blob([bytes as BlobPart]);
  void enqueue(() => ensureThumbnail(db, thumbnailsOf(db), file, null, async () => makeThumbnail(blob), blob)).catch(() => {});
}

export function FileThumb({ file, kind }: { file: FileView; kind: ViewKind }) {
  const { connection } = useSession();
  const { db } = connection;
  const image = kind === 'image';
  const thumbs = useMemo(() => (image ? thumbnailsOf(db) : null), [db, image]);
  const thumb = useLiveQuery(() => thumbs?.thumbnails.get(file.id), [thumbs, file.id]);
  useEffect(() => {
    if (!thumbs) return;
    void enqueue(() => ensureThumbnail(db, thumbs, file, 'caches' in window ? window.caches : null, makeThumbnail)).catch(() => {});
    // Per file and version of it (a rename is a new URL, the same picture).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [db, thumbs, file.id]);
  const bytes = useMemo(() => (thumb ? new Uint8Array(thumb.bytes) : null), [thumb]);
  const url = useObjectUrl(bytes, thumb?.type ?? 'image/webp');
  if (!thumb || !url) return <FileKindIcon kind={kind} />;
  return <img className="thumb" src={url} alt="" width={32} height={32} />;
}
