'use client';
// The files list: like the conversations list, it reads only the window of rows around what is on
// screen (newest first through an index, overall or per conversation), at most a few times a second.
import type { SortingState } from '@tanstack/react-table';
import { useCallback, useState } from 'react';
import { allConversations, conversationsByIds, fileCount } from '@/lib/sync/page';
import { conversationTitle } from '@/lib/view/conversations';
import { countOf, groupedNumber, humanSize, humanTime, humanType, relativeTime } from '@/lib/view/format';
import { readFileWindow, type FileFamily, type FileFilters, type FileRow, type FileSortColumn } from '@/lib/view/file-window';
import { FileActions, FileLink, OnDeviceMark } from './FileActions';
import { navigate } from './router';
import { useSession, useSyncNow } from './session-context';
import { SyncProgress } from './SyncProgress';
import { UploadProgressMark } from './UploadProgress';
import { useCollapsingHeader } from './useCollapsingHeader';
import { useListWindow } from './useListWindow';
import { useNarrow } from './useNarrow';
import { useThrottledQuery } from './useThrottledQuery';
import { VirtualTable, type Column } from './VirtualTable';

const columns: Column<FileRow>[] = [
  {
    id: 'name',
    header: 'Name',
    accessorFn: (f) => f.filename.toLowerCase(),
    meta: { className: 'grow' },
    // The name (ellipsised, in full in its title) and, below it, its conversation and date: on a
    // phone that line stands in for the Conversation and Date columns.
    cell: ({ row }) => (
      <span className="title-cell file-summary">
        <span className="summary-line">
          <FileLink file={row.original} />
          {row.original.syncState !== 'synced' && <span className={`mark ${row.original.syncState}`}>{row.original.syncState === 'pending' ? 'unsynced' : 'failed'}</span>}
          {row.original.syncState === 'pending' && <UploadProgressMark fileId={row.original.id} />}
          {row.original.onDevice && <OnDeviceMark />}
        </span>
        <span className="summary-line details narrow-only" title={row.original.conversationTitle}>
          <span className="in-conversation">{row.original.conversationTitle}</span>
          <span aria-hidden="true">·</span>
          <span>{relativeTime(row.original.created_at)}</span>
        </span>
      </span>
    ),
  },
  {
    id: 'conversation',
    header: 'Conversation',
    accessorFn: (f) => f.conversationTitle,
    cell: ({ row }) => <span title={row.original.conversationTitle}>{row.original.conversationTitle}</span>,
    meta: { className: 'wide-only', width: '12rem' },
  },
  { id: 'type', header: 'Type', accessorFn: (f) => humanType(f.file_type), meta: { className: 'wide-only', width: '7rem' } },
  { id: 'size', header: 'Size', accessorFn: (f) => f.file_size, cell: ({ row }) => humanSize(row.original.file_size), meta: { width: '5rem' } },
  { id: 'date', header: 'Date', accessorFn: (f) => f.created_at, cell: ({ row }) => humanTime(row.original.created_at), meta: { className: 'wide-only', width: '6.5rem' } },
  { id: 'actions', header: () => <span className="visually-hidden">Actions</span>, enableSorting: false, meta: { width: '6rem' }, cell: ({ row }) => <FileActions file={row.original} /> },
];

/**
 * The conversation filter. Its options are every conversation: read only once the user opens the
 * list (a <select> of 10,000 options is not something to rebuild on every sync commit).
 */
function ConversationFilter({ value }: { value: string }) {
  const { connection } = useSession();
  const { db } = connection;
  const [wanted, setWanted] = useState(false);
  const options = useThrottledQuery(
    db,
    ['conversations'],
    async () => (wanted ? allConversations(db) : value ? conversationsByIds(db, [value]) : []),
    [wanted, value],
    2_000,
  );
  return (
    <span className="filter">
      <label htmlFor="file-conversation">Conversation</label>
      <select
        id="file-conversation"
        value={value}
        onFocus={() => setWanted(true)}
        onPointerDown={() => setWanted(true)}
        onChange={(e) => navigate({ name: 'files', conversationId: e.target.value || undefined }, { replace: true })}
      >
        <option value="">All</option>
        {value && !(options ?? []).some((c) => c.id === value) && <option value={value}>…</option>}
        {(options ?? []).map((c) => (
          <option key={c.id} value={c.id}>
            {conversationTitle(c)}
          </option>
        ))}
      </select>
    </span>
  );
}

export function FilesScreen({ conversationId }: { conversationId?: string }) {
  const { connection } = useSession();
  const { db } = connection;
  const [name, setName] = useState('');
  const [family, setFamily] = useState<FileFamily>('any');
  const [onDevice, setOnDevice] = useState(false);
  const [sorting, setSorting] = useState<SortingState>([]);
  const filters: FileFilters = { conversationId: conversationId ?? '', family, name, onDevice };
  const sort = sorting[0] ? { id: sorting[0].id as FileSortColumn, desc: sorting[0].desc } : null;
  const indexed = !sort && family === 'any' && name.trim() === '' && !onDevice;
  const { windowStart, windowSize, onVisibleRange } = useListWindow();
  const list = useThrottledQuery(
    db,
    ['files', 'conversations', 'offlineFiles'],
    () => readFileWindow(db, filters, sort, windowStart, windowSize),
    [JSON.stringify(filters), JSON.stringify(sort), windowStart, windowSize],
    indexed ? 250 : 2_000,
  );
  // Every file on the device, for "N of M files" when a filter narrows the list.
  const all = useThrottledQuery(db, ['files'], () => fileCount(db), [], 1_000);
  const onSortingChange = useCallback((next: SortingState) => setSorting(next), []);
  const header = useCollapsingHeader(useNarrow());
  // Pull to refresh is "Sync now".
  const onRefresh = useSyncNow();
  const shown = list?.total;
  const count = all === undefined || shown === undefined ? '' : shown === all ? countOf(all, 'file') : `${groupedNumber(shown)} of ${countOf(all, 'file')}`;

  return (
    <section className={`screen list-screen${header.collapsed ? ' collapsed' : ''}`} aria-labelledby="files-title">
      {/* Folds away while scrolling down on a phone (more rows in view), back on scrolling up. */}
      <div className="collapsible">
        <div>
      <div className="screen-head">
        <h1 id="files-title">Files</h1>
        <p className="list-count" data-testid="file-count">
          {count}
        </p>
      </div>
      <div className="filters" role="search">
        <span className="filter grow">
          <label htmlFor="file-name">Name</label>
          <input id="file-name" type="search" autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} placeholder="File name" />
        </span>
        <ConversationFilter value={conversationId ?? ''} />
        <span className="filter">
          <label htmlFor="file-type">Type</label>
          <select id="file-type" value={family} onChange={(e) => setFamily(e.target.value as FileFamily)}>
            <option value="any">All</option>
            <option value="document">Documents</option>
            <option value="image">Images</option>
            <option value="data">Clinical data</option>
            <option value="other">Other</option>
          </select>
        </span>
        {/* The label holds the box: the whole label (44 px tall) is what a finger hits. */}
        <label className="filter check">
          <input id="file-on-device" type="checkbox" checked={onDevice} onChange={(e) => setOnDevice(e.target.checked)} />
          On this device
        </label>
      </div>
        </div>
      </div>
      <SyncProgress />
      {list === undefined ? (
        <p className="empty">Loading…</p>
      ) : (
        <VirtualTable
          label="Files"
          rows={list.rows}
          start={list.start}
          total={list.total}
          columns={columns}
          sorting={sorting}
          onSortingChange={onSortingChange}
          onVisibleRange={onVisibleRange}
          onScroll={header.onScroll}
          onRefresh={onRefresh}
          rowClassName={(f) => (f.syncState !== 'synced' ? `unsynced ${f.syncState}` : '')}
          empty={
            all === 0
              ? 'No files yet. Files are added from a conversation: open one and choose “Upload files”.'
              : onDevice && family === 'any' && name.trim() === ''
                ? 'No file of this list is on this device yet. A file is kept once opened, and a conversation’s files with “Keep offline”.'
                : 'No file matches these filters.'
          }
        />
      )}
    </section>
  );
}
