'use client';
import { useLiveQuery } from 'dexie-react-hooks';
import { useMemo, useState } from 'react';
import type { FileView } from '@/lib/sync';
import { conversationTitle } from '@/lib/view/conversations';
import { humanSize, humanTime, humanType, typeFamily } from '@/lib/view/format';
import { FileActions, FileLink } from './FileActions';
import { navigate } from './router';
import { useSession } from './session-context';
import { VirtualTable, type Column } from './VirtualTable';

type Row = FileView & { conversationTitle: string };

const columns: Column<Row>[] = [
  {
    id: 'name',
    header: 'Name',
    accessorFn: (f) => f.filename.toLowerCase(),
    meta: { className: 'grow' },
    cell: ({ row }) => (
      <span className="title-cell">
        <FileLink file={row.original} />
        {row.original.syncState !== 'synced' && <span className={`mark ${row.original.syncState}`}>{row.original.syncState === 'pending' ? 'unsynced' : 'failed'}</span>}
      </span>
    ),
  },
  { id: 'conversation', header: 'Conversation', accessorFn: (f) => f.conversationTitle, meta: { className: 'wide-only', width: '10rem' } },
  { id: 'type', header: 'Type', accessorFn: (f) => humanType(f.file_type), meta: { className: 'wide-only', width: '7rem' } },
  { id: 'size', header: 'Size', accessorFn: (f) => f.file_size, cell: ({ row }) => humanSize(row.original.file_size), meta: { width: '5rem' } },
  { id: 'date', header: 'Date', accessorFn: (f) => f.created_at, cell: ({ row }) => humanTime(row.original.created_at), meta: { className: 'wide-only', width: '6.5rem' } },
  { id: 'actions', header: () => <span className="visually-hidden">Actions</span>, enableSorting: false, meta: { width: '6rem' }, cell: ({ row }) => <FileActions file={row.original} /> },
];

export function FilesScreen({ conversationId }: { conversationId?: string }) {
  const { connection } = useSession();
  const files = useLiveQuery(() => connection.db.files.toArray(), [connection.db]);
  const conversations = useLiveQuery(() => connection.db.conversations.toArray(), [connection.db]);
  const [name, setName] = useState('');
  const [family, setFamily] = useState<'any' | ReturnType<typeof typeFamily>>('any');
  const inConversation = conversationId ?? '';

  const titles = useMemo(() => new Map((conversations ?? []).map((c) => [c.id, conversationTitle(c)])), [conversations]);
  const rows: Row[] = useMemo(() => {
    const needle = name.trim().toLowerCase();
    return (files ?? [])
      .filter((f) => (!inConversation || f.conversationId === inConversation) && (family === 'any' || typeFamily(f.file_type) === family) && (!needle || f.filename.toLowerCase().includes(needle)))
      .sort((a, b) => b.created_at - a.created_at)
      .map((f) => ({ ...f, conversationTitle: f.conversationId ? (titles.get(f.conversationId) ?? '') : '' }));
  }, [files, inConversation, family, name, titles]);

  return (
    <section className="screen" aria-labelledby="files-title">
      <div className="screen-head">
        <h1 id="files-title">Files</h1>
      </div>
      <div className="filters" role="search">
        <span className="filter grow">
          <label htmlFor="file-name">Name</label>
          <input id="file-name" type="search" value={name} onChange={(e) => setName(e.target.value)} placeholder="File name" />
        </span>
        <span className="filter">
          <label htmlFor="file-conversation">Conversation</label>
          <select id="file-conversation" value={inConversation} onChange={(e) => navigate({ name: 'files', conversationId: e.target.value || undefined }, { replace: true })}>
            <option value="">All</option>
            {(conversations ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {conversationTitle(c)}
              </option>
            ))}
          </select>
        </span>
        <span className="filter">
          <label htmlFor="file-type">Type</label>
          <select id="file-type" value={family} onChange={(e) => setFamily(e.target.value as typeof family)}>
            <option value="any">All</option>
            <option value="document">Documents</option>
            <option value="image">Images</option>
            <option value="data">Clinical data</option>
            <option value="other">Other</option>
          </select>
        </span>
      </div>
      {files === undefined ? (
        <p className="empty">Loading…</p>
      ) : (
        <VirtualTable label="Files" rows={rows} columns={columns} rowClassName={(f) => (f.syncState !== 'synced' ? `unsynced ${f.syncState}` : '')} empty={files.length === 0 ? 'No files yet.' : 'No file matches these filters.'} />
      )}
    </section>
  );
}
