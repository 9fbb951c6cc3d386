'use client';
// The file viewer: a screen of its own (`/?file=<id>`, with a back button), for a file on the
// server, one still waiting to upload (its queued bytes), and offline for one the device has
// (lib/view/viewer/bytes.ts). Which view: lib/view/viewer/kind.ts. The structured views and
// pdf.js load only when a file of their kind is opened. A file coming over the network shows how
// much has arrived, with Cancel (back where the user came from); offline, one the device does not
// hold says so, with no link to the server's copy (it could not open).
import './viewer.css';
import { useLiveQuery } from 'dexie-react-hooks';
import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { aliasOf, conversationById, fileById, type FileView } from '@/lib/sync/page';
import { conversationTitle } from '@/lib/view/conversations';
import { humanSize, humanTime, humanType } from '@/lib/view/format';
import { loadFileBytes, NOT_ON_DEVICE, type Loaded } from '@/lib/view/viewer/bytes';
import { kindOf, kindOfName, type ViewKind } from '@/lib/view/viewer/kind';
import { shownType } from '@/lib/view/viewer/shown-type';
import { decodeText, TEXT_LIMIT } from '@/lib/view/viewer/text';
import { isPendingUpload } from '../FileActions';
import { thumbnailFromBytes } from '../FileThumb';
import { Icon } from '../Icon';
import { canGoBack, followAlias, navigate } from '../router';
import { useSession } from '../session-context';
import { useSyncStatus } from '../StatusBar';
import { ImageView } from './ImageView';
import { Problem } from './Raw';
import { CsvView, TextView } from './TextView';
import { useObjectUrl } from '../useObjectUrl';

const PdfView = lazy(() => import('./PdfView').then((m) => ({ default: m.PdfView })));
const JsonView = lazy(() => import('./JsonView').then((m) => ({ default: m.JsonView })));
const Hl7View = lazy(() => import('./Hl7View').then((m) => ({ default: m.Hl7View })));

/** JSON up to this size is parsed for its summary; beyond, its beginning is shown as text. */
const JSON_LIMIT = 20 * 1024 * 1024;

/** `conversationId`: opened from that conversation's page (the route's `in`, kept when the id changes). */
export function FileScreen({ id, conversationId }: { id: string; conversationId?: string }) {
  const { connection } = useSession();
  const { db } = connection;
  const file = useLiveQuery(() => fileById(db, id), [db, id], null);
  const alias = useLiveQuery(() => aliasOf(db, id), [db, id]);
  const conversation = useLiveQuery(() => (file?.conversationId ? conversationById(db, file.conversationId) : undefined), [db, file?.conversationId]);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [progress, setProgress] = useState<{ received: number; total: number | null } | null>(null);
  const [abort, setAbort] = useState<AbortController | null>(null);
  // Offline: the browser says so, or the last request could not reach the server (the sync status).
  const status = useSyncStatus();
  const offline = status?.online === false || (typeof navigator !== 'undefined' && !navigator.onLine);
  // What the file is read as: its name and type, then its first bytes once they are here.
  // By name and type only: a sync commit (a new row object, the same file) does not sniff again.
  const filename = file?.filename;
  const fileType = file?.file_type;
  const sniffed = useMemo(
    () => (filename === undefined || fileType === undefined ? null : loaded?.ok ? kindOf(filename, fileType, loaded.bytes.subarray(0, 4096)) : kindOfName(filename, fileType)),
    [filename, fileType, loaded],
  );

  // An upload that reached the server has its server id now: follow it (same bytes).
  useEffect(() => {
    if (alias) followAlias({ name: 'file', id, conversationId }, { name: 'file', id: alias.realId, conversationId });
  }, [alias, id, conversationId]);

  const present = file !== null && file !== undefined;
  useEffect(() => {
    if (!present || !file) return;
    let live = true;
    const controller = new AbortController();
    setLoaded(null);
    setProgress(null);
    setAbort(controller);
    loadFileBytes(db, file, { signal: controller.signal, onProgress: (received, total) => live && setProgress({ received, total: total ?? (file.file_size || null) }) }).then(
      (result) => live && setLoaded(result),
      (e: unknown) => live && setLoaded({ ok: false, reason: 'failed', message: `The file could not be read on this device (${e instanceof Error ? e.message : String(e)}).` }),
    );
    return () => {
      live = false;
      // Leaving the screen stops a file still arriving.
      controller.abort();
    };
    // Once per file: a rename (a new URL, the same bytes) or a sync commit does not reload it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [db, id, present]);

  function back() {
    if (canGoBack()) history.back();
    else if (file?.conversationId) navigate({ name: 'conversation', id: file.conversationId });
    else navigate({ name: 'files' });
  }

  if (file === null) return <p className="empty">Loading…</p>;
  return (
    <section className="screen viewer" aria-labelledby="file-title">
      <div className="screen-head">
        <a className="icon-button" href="/" aria-label="Back" onClick={(e) => { e.preventDefault(); back(); }}>
          <Icon name="back" />
        </a>
        <h1 id="file-title" title={file?.filename}>{file ? file.filename : 'File'}</h1>
        {loaded?.ok && file && <DownloadButton bytes={loaded.bytes} name={file.filename} />}
      </div>
      {file === undefined ? (
        <p className="empty">This file is not here (it may have been deleted).</p>
      ) : (
        <>
          <p className="viewer-meta">
            {shownType(sniffed ?? kindOfName(file.filename, file.file_type), file.file_type, loaded?.ok ? loaded.bytes : undefined)} · {humanSize(file.file_size)} · {humanTime(file.created_at)}
            {conversation && <> · in {conversationTitle(conversation)}</>}
            {isPendingUpload(file) && <span className="mark pending">waiting to upload</span>}
          </p>
          {loaded === null ? (
            <Opening progress={progress} onCancel={() => { abort?.abort(); back(); }} />
          ) : !loaded.ok ? (
            loaded.reason === 'cancelled' ? null : <>
              <Problem>{loaded.reason === 'failed' && offline ? NOT_ON_DEVICE : loaded.message}</Problem>
              {/* The server's own copy, as before the viewer: e.g. a store that redirects /files to another origin, which the app's CSP keeps the page from reading. Only when the server answered (with an error), never offline: it could not open. */}
              {loaded.reason === 'failed' && !offline && file.file_url && (
                <a className="touch-link" href={file.file_url} target="_blank" rel="noopener noreferrer">
                  Open the server’s copy in a new tab
                </a>
              )}
            </>
          ) : (
            <Suspense fallback={<p className="empty">Opening…</p>}>
              <Body file={file} bytes={loaded.bytes} sniffed={sniffed ?? 'other'} />
            </Suspense>
          )}
        </>
      )}
    </section>
  );
}

/** A file on its way: how much has arrived (once the server has answered), and Cancel. */
function Opening({ progress, onCancel }: { progress: { received: number; total: number | null } | null; onCancel: () => void }) {
  return (
    <div className="viewer-opening" role="status">
      <p>
        Opening…
        {progress && (
          <span data-testid="open-progress">
            {' '}
            {humanSize(progress.received)}
            {progress.total !== null && ` of ${humanSize(progress.total)}`}
          </span>
        )}
      </p>
      {progress && (
        <progress aria-label="Received" max={progress.total ?? undefined} value={progress.total === null ? undefined : Math.min(progress.received, progress.total)} />
      )}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

function Body({ file, bytes, sniffed }: { file: FileView; bytes: Uint8Array; sniffed: ViewKind }) {
  const { db } = useSession().connection;
  const [kind, setKind] = useState<ViewKind>(sniffed);
  useEffect(() => setKind(sniffed), [sniffed]);
  const limit = kind === 'json' || kind === 'fhir' ? JSON_LIMIT : TEXT_LIMIT;
  const decoded = useMemo(() => (['fhir', 'json', 'hl7', 'csv', 'text'].includes(kind) ? decodeText(bytes, limit) : null), [bytes, kind, limit]);
  const name = file.filename;
  return (
    <div className={`viewer-body kind-${kind}`} data-kind={kind}>
      {decoded && decoded.omitted > 0 && (
        <Problem>
          This file is large: the first {humanSize(bytes.length - decoded.omitted)} of {humanSize(bytes.length)} are shown. Download it for the rest.
        </Problem>
      )}
      {kind === 'image' ? (
        <ImageView bytes={bytes} name={name} onUnreadable={() => setKind('other')} onShown={(shown) => thumbnailFromBytes(db, file, shown)} />
      ) : kind === 'pdf' ? (
        <PdfView bytes={bytes} name={name} onOpened={() => thumbnailFromBytes(db, file, bytes, 'pdf')} />
      ) : (kind === 'fhir' || kind === 'json') && decoded ? (
        <JsonView text={decoded.text} name={name} complete={decoded.omitted === 0} />
      ) : kind === 'hl7' && decoded ? (
        <Hl7View text={decoded.text} name={name} />
      ) : kind === 'csv' && decoded ? (
        <CsvView text={decoded.text} name={name} />
      ) : kind === 'text' && decoded ? (
        <TextView text={decoded.text} name={name} />
      ) : (
        <Details file={file} unreadableImage={sniffed === 'image'} />
      )}
    </div>
  );
}

function Details({ file, unreadableImage }: { file: FileView; unreadableImage: boolean }) {
  return (
    <>
      <Problem>
        {unreadableImage
          ? 'This image could not be shown here (a format this browser does not read, or a damaged file). Download it to open it in another app.'
          : 'A file of this kind cannot be shown in the app. Download it to open it in another app.'}
      </Problem>
      <dl className="viewer-facts">
        <div><dt>Name</dt><dd>{file.filename}</dd></div>
        <div><dt>Type</dt><dd>{humanType(file.file_type)}</dd></div>
        <div><dt>Size</dt><dd>{humanSize(file.file_size)}</dd></div>
        <div><dt>Added</dt><dd>{humanTime(file.created_at)}</dd></div>
      </dl>
    </>
  );
}

/**
 * Saves the bytes the viewer has (also offline, also a queued upload). The blob is typed
 * application/octet-stream: a blob URL has the app's origin, and HTML in it must never render there.
 */
function DownloadButton({ bytes, name }: { bytes: Uint8Array; name: string }) {
  const url = useObjectUrl(bytes, 'application/octet-stream');
  if (!url) return null;
  return (
    <a className="button with-label" href={url} download={name}>
      <Icon name="download" />
      <span>Download</span>
    </a>
  );
}
