'use client';
import { useState, type FormEvent } from 'react';
import { filenameProblem } from '@/lib/schemas';
import type { FileView } from '@/lib/sync';
import { Dialog } from './Dialog';
import { Icon } from './Icon';
import { useSession } from './session-context';

/** Open (once synced), rename, delete — for one file. */
export function FileActions({ file }: { file: FileView }) {
  const { connection } = useSession();
  const [renaming, setRenaming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [name, setName] = useState(file.filename);
  const [error, setError] = useState<string | null>(null);

  function rename(event: FormEvent) {
    event.preventDefault();
    const problem = filenameProblem(name);
    if (problem) return setError(`The name ${problem}.`);
    void connection.client.renameFile(file.id, name).then(
      () => setRenaming(false),
      (e) => setError(e instanceof Error ? e.message : String(e)),
    );
  }

  return (
    <span className="row-actions">
      <button type="button" className="icon-button" aria-label={`Rename ${file.filename}`} title="Rename" onClick={() => { setName(file.filename); setError(null); setRenaming(true); }}>
        <Icon name="edit" />
      </button>
      <button type="button" className="icon-button" aria-label={`Delete ${file.filename}`} title="Delete" onClick={() => setDeleting(true)}>
        <Icon name="trash" />
      </button>
      <Dialog title="Rename file" open={renaming} onClose={() => setRenaming(false)}>
        <form onSubmit={rename} noValidate>
          <label htmlFor={`rename-${file.id}`}>New name</label>
          <input id={`rename-${file.id}`} value={name} onChange={(e) => setName(e.target.value)} spellCheck={false} aria-invalid={error ? true : undefined} />
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
          <button type="button" className="danger" onClick={() => { setDeleting(false); void connection.client.deleteFile(file.id); }}>
            Delete file
          </button>
        </div>
      </Dialog>
    </span>
  );
}

/** The file name as a link that opens it — once the server has it (an unsynced upload has no URL yet). */
export function FileLink({ file }: { file: FileView }) {
  if (file.syncState === 'pending' && file.file_url === '') return <span>{file.filename}</span>;
  if (!/^https?:\/\//.test(file.file_url) || file.id.startsWith('local_')) return <span title="Available once synced">{file.filename}</span>;
  return (
    <a href={file.file_url} target="_blank" rel="noopener noreferrer">
      <Icon name="file" size={16} /> {file.filename}
    </a>
  );
}
