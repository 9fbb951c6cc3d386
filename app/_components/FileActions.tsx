'use client';
import { useState, type FormEvent } from 'react';
import { filenameProblem } from '@/lib/name-rules';
import type { FileView } from '@/lib/sync/page';
import { failureText, useAction } from './ActionAlert';
import { Dialog } from './Dialog';
import { kindOfName } from '@/lib/view/viewer/kind';
import { FileThumb } from './FileThumb';
import { Icon } from './Icon';
import { hrefFor, navigate } from './router';
import { useSession } from './session-context';

/** Why a file name would be refused, in words for the person renaming it; null when it is fine. */
function filenameAdvice(name: string): string | null {
  const problem = filenameProblem(name);
  if (problem === null) return null;
  if (problem.startsWith('can’t contain') || problem.startsWith("can't contain")) {
    return 'A file name can’t contain / or \\, nor hidden characters that change how the name looks.';
  }
  return `The name ${problem}.`;
}

/** A row of an upload the server does not have yet (queued, on its way, or refused): it can be cancelled. */
export function isPendingUpload(file: FileView): boolean {
  return file.syncState !== 'synced' && file.file_url === '';
}

/** Rename, delete — for one file; an upload on its way: cancel. */
export function FileActions({ file }: { file: FileView }) {
  const { connection } = useSession();
  const [renaming, setRenaming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const upload = isPendingUpload(file);
  const [name, setName] = useState(file.filename);
  const [error, setError] = useState<string | null>(null);
  const { run, alert } = useAction();

  async function rename(event: FormEvent) {
    event.preventDefault();
    // The server's rule (lib/name-rules.ts filenameProblem), in plain words.
    const problem = filenameAdvice(name);
    if (problem) return setError(problem);
    try {
      await connection.client.renameFile(file.id, name);
      setRenaming(false);
    } catch (e) {
      setError(`Couldn’t rename: ${failureText(e)}`);
    }
  }

  return (
    <span className="row-actions">
      <button type="button" className="icon-button" aria-label={`Rename ${file.filename}`} title="Rename" onClick={() => { setName(file.filename); setError(null); setRenaming(true); }}>
        <Icon name="edit" />
      </button>
      {upload ? (
        <button type="button" className="icon-button" aria-label={`Cancel upload of ${file.filename}`} title="Cancel upload" onClick={() => setCancelling(true)}>
          <Icon name="trash" />
        </button>
      ) : (
        <button type="button" className="icon-button" aria-label={`Delete ${file.filename}`} title="Delete" onClick={() => setDeleting(true)}>
          <Icon name="trash" />
        </button>
      )}
      <Dialog title="Rename file" open={renaming} onClose={() => setRenaming(false)}>
        <form onSubmit={rename} noValidate>
          <label htmlFor={`rename-${file.id}`}>New name</label>
          <input id={`rename-${file.id}`} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} spellCheck={false} aria-invalid={error ? true : undefined} />
          {error && <p className="error" role="alert">{error}</p>}
          <div className="actions">
            <button type="button" onClick={() => setRenaming(false)}>Cancel</button>
            <button type="submit" className="primary">Rename</button>
          </div>
        </form>
      </Dialog>
      <Dialog title={`Delete “${file.filename}”?`} open={deleting} onClose={() => setDeleting(false)}>
        <p>The file is removed from the server for everyone. This cannot be undone.</p>
        <div className="actions">
          <button type="button" onClick={() => setDeleting(false)}>Cancel</button>
          <button type="button" className="danger" onClick={() => { setDeleting(false); void run(`delete “${file.filename}”`, () => connection.client.deleteFile(file.id)); }}>
            Delete file
          </button>
        </div>
      </Dialog>
      <Dialog title={`Cancel the upload of “${file.filename}”?`} open={cancelling} onClose={() => setCancelling(false)}>
        <p>The file will not be sent: what this device has queued is removed, and whatever part already reached the server is removed there too.</p>
        <p>If it finishes arriving before the cancel does, the file is deleted from the server instead.</p>
        <div className="actions">
          <button type="button" onClick={() => setCancelling(false)}>Keep uploading</button>
          <button
            type="button"
            className="danger"
            onClick={() => {
              setCancelling(false);
              // An upload that completes meanwhile is deleted instead (the dialog says so).
              void run(`cancel the upload of “${file.filename}”`, () => connection.client.cancelUpload(file.id));
            }}
          >
            Cancel upload
          </button>
        </div>
      </Dialog>
      {alert}
    </span>
  );
}

/** Beside a file's name when the device holds its bytes: it opens with no network. */
export function OnDeviceMark() {
  return (
    <span className="mark on-device" title="Opens with no network">
      On this device
    </span>
  );
}

/**
 * The file name as a link to the viewer (app/_components/viewer): an in-app screen with a URL and
 * a back button, also for an upload still waiting (its queued bytes) and offline. From its
 * conversation's page (`conversationId`, that page's) the address says so: a wide screen keeps
 * the list beside it (ParleyApp).
 */
export function FileLink({ file, conversationId }: { file: FileView; conversationId?: string }) {
  const route = { name: 'file', id: file.id, conversationId } as const;
  return (
    <a
      className="file-link"
      href={hrefFor(route)}
      title={file.filename}
      // The name alone (not the thumbnail's text, if a thumbnail ever had any).
      aria-label={file.filename}
      onClick={(e) => {
        // A modified click (new tab, new window) goes to the same URL the browser's way.
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || e.button !== 0) return;
        e.preventDefault();
        navigate(route);
      }}
    >
      <FileThumb file={file} kind={kindOfName(file.filename, file.file_type)} />
      {/* The whole name, wrapping onto as many lines as it needs (as a conversation's name). */}
      <span className="name">{file.filename}</span>
    </a>
  );
}
