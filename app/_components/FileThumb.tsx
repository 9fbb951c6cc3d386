'use client';
// A file's mark in the lists: its thumbnail (an image, a PDF's first page) when one exists (made
// on the device, in a worker, from bytes the device has: lib/view/viewer/thumbnails.ts), else the
// icon of its kind. A file on the server the device has no bytes of has them fetched in the
// background for its thumbnail, one at a time, when the connection allows, and not kept
// (lib/view/viewer/thumbnail-fetch.ts). Loaded with the conversation and Files screens only.
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useMemo, useState } from 'react';
import type { ConnectionLike } from '@/lib/offline/policy';
import { fieldOf, isRecord, stringField } from '@/lib/records';
import type { FileView, ParleyDb } from '@/lib/sync/page';
import type { ViewKind } from '@/lib/view/viewer/kind';
import { thumbnailFetcher, type ThumbnailFetcher } from '@/lib/view/viewer/thumbnail-fetch';
import { ensureThumbnail, openThumbnails, pruneThumbnails, THUMBNAIL_SIZE, type ThumbnailsDb } from '@/lib/view/viewer/thumbnails';
import { fittingThumbnail, thumbnailMaker, type Made, type Thumbnailed } from '@/lib/view/viewer/thumbnail-workers';
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

/** A thumbnail of these bytes of at most 16 KB (a lower quality or a smaller box if need be), or null. */
const makeSmall = (kind: Thumbnailed, blob: Blob): Promise<Made> => fittingThumbnail((fit) => makeThumbnail(kind, blob, fit), THUMBNAIL_SIZE);

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
  void enqueue(() => ensureThumbnail(db, thumbnailsOf(db), file, null, async () => makeSmall(kind, blob), blob)).catch(() => {});
}

/** What the browser says of the connection (Chromium's navigator.connection), or null. */
function browserConnection(): ConnectionLike | null {
  const connection = typeof navigator === 'undefined' ? undefined : fieldOf(navigator, 'connection');
  if (!isRecord(connection)) return null;
  return { saveData: connection.saveData === true, effectiveType: stringField(connection, 'effectiveType'), type: stringField(connection, 'type'), metered: connection.metered === true };
}

/** Per user's database: the queue of files fetched for their thumbnail, and what failed, for this page's life. */
const fetchers = new Map<string, ThumbnailFetcher>();
function fetcherOf(db: ParleyDb): ThumbnailFetcher {
  const known = fetchers.get(db.name);
  if (known) return known;
  const fetcher = thumbnailFetcher({
    fetch: (url, init) => fetch(url, init),
    make: makeSmall,
    has: async (id) => (await thumbnailsOf(db).thumbnails.get(id)) !== undefined,
    store: async (id, made) => {
      await thumbnailsOf(db).thumbnails.put({ fileId: id, ...made });
    },
    connection: browserConnection,
    online: () => navigator.onLine,
    now: () => Date.now(),
  });
  // Back online, or a connection that is no longer metered or slow: what waits goes.
  window.addEventListener('online', () => fetcher.resume());
  const connection = fieldOf(navigator, 'connection');
  if (connection instanceof EventTarget) connection.addEventListener('change', () => fetcher.resume());
  fetchers.set(db.name, fetcher);
  return fetcher;
}

export function FileThumb({ file, kind }: { file: FileView; kind: ViewKind }) {
  const { connection } = useSession();
  const { db } = connection;
  const thumbnailed: Thumbnailed | null = kind === 'image' || kind === 'pdf' ? kind : null;
  const thumbs = useMemo(() => (thumbnailed ? thumbnailsOf(db) : null), [db, thumbnailed]);
  const thumb = useLiveQuery(() => thumbs?.thumbnails.get(file.id), [thumbs, file.id]);
  // Waiting for a connection that allows fetching it (said on the icon, for tests and tools).
  const [waiting, setWaiting] = useState(false);
  useEffect(() => {
    if (!thumbs || !thumbnailed) return;
    let listed = true;
    let unsubscribe = () => {};
    void enqueue(() => ensureThumbnail(db, thumbs, file, 'caches' in window ? window.caches : null, (blob) => makeSmall(thumbnailed, blob)))
      .then((made) => {
        if (made || !listed) return;
        // Not on the device: fetched for its thumbnail when its turn comes, if the connection
        // allows. The mark follows the fetcher: gone once the connection allows it, or the fetch failed.
        const fetcher = fetcherOf(db);
        setWaiting(fetcher.want(file, thumbnailed) === 'waiting');
        unsubscribe = fetcher.subscribe(() => setWaiting(fetcher.stateOf(file) === 'waiting'));
      })
      .catch(() => {});
    return () => {
      listed = false;
      unsubscribe();
      fetchers.get(db.name)?.forget(file.id);
    };
    // Per file and version of it (a rename is a new URL, the same picture).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [db, thumbs, thumbnailed, file.id]);
  const bytes = useMemo(() => (thumb ? new Uint8Array(thumb.bytes) : null), [thumb]);
  const url = useObjectUrl(bytes, thumb?.type ?? 'image/webp');
  if (!thumb || !url) return <FileKindIcon kind={kind} waiting={waiting} />;
  return <img className="thumb" src={url} alt="" width={32} height={32} />;
}
