'use client';
// A file's mark in the lists: its thumbnail (an image, a PDF's first page) when one exists (made
// on the device, in a worker, from bytes the device has: lib/view/viewer/thumbnails.ts), else the
// icon of its kind.
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useMemo } from 'react';
import type { FileView, ParleyDb } from '@/lib/sync/page';
import type { ViewKind } from '@/lib/view/viewer/kind';
import { ensureThumbnail, openThumbnails, pruneThumbnails, THUMBNAIL_SIZE, type ThumbnailsDb } from '@/lib/view/viewer/thumbnails';
import { thumbnailMaker, type Thumbnailed } from '@/lib/view/viewer/thumbnail-workers';
import { FileKindIcon } from './FileKindIcon';
import { useSession } from './session-context';
import { useObjectUrl } from './useObjectUrl';

// Started on the first thumbnail of its kind: pdf.js loads only when a PDF thumbnail is made.
const makeThumbnail = thumbnailMaker(
  (kind) =>
    kind === 'pdf'
      ? new Worker(new URL('../../workers/pdf-thumbnail.worker.ts', import.meta.url), { type: 'module' })
      : new Worker(new URL('../../workers/thumbnail.worker.ts', import.meta.url), { type: 'module' }),
  THUMBNAIL_SIZE,
);

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

/** The viewer has an image's or a PDF's bytes: its thumbnail is made from them (no second read). */
export function thumbnailFromBytes(db: ParleyDb, file: FileView, bytes: Uint8Array, kind: Thumbnailed = 'image'): void {
  const blob = new Blob([bytes as BlobPart]);
  void enqueue(() => ensureThumbnail(db, thumbnailsOf(db), file, null, async () => makeThumbnail(kind, blob), blob)).catch(() => {});
}

export function FileThumb({ file, kind }: { file: FileView; kind: ViewKind }) {
  const { connection } = useSession();
  const { db } = connection;
  const thumbnailed: Thumbnailed | null = kind === 'image' || kind === 'pdf' ? kind : null;
  const thumbs = useMemo(() => (thumbnailed ? thumbnailsOf(db) : null), [db, thumbnailed]);
  const thumb = useLiveQuery(() => thumbs?.thumbnails.get(file.id), [thumbs, file.id]);
  useEffect(() => {
    if (!thumbs || !thumbnailed) return;
    void enqueue(() => ensureThumbnail(db, thumbs, file, 'caches' in window ? window.caches : null, (blob) => makeThumbnail(thumbnailed, blob))).catch(() => {});
    // Per file and version of it (a rename is a new URL, the same picture).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [db, thumbs, thumbnailed, file.id]);
  const bytes = useMemo(() => (thumb ? new Uint8Array(thumb.bytes) : null), [thumb]);
  const url = useObjectUrl(bytes, thumb?.type ?? 'image/webp');
  if (!thumb || !url) return <FileKindIcon kind={kind} />;
  return <img className="thumb" src={url} alt="" width={32} height={32} />;
}
