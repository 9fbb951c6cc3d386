'use client';
import { useLiveQuery } from 'dexie-react-hooks';
import { useMemo, useState } from 'react';
import type { ConversationView } from '@/lib/sync';
import { conversationTitle, DEFAULT_FILTERS, defaultOrder, filterConversations, type ConversationFilters, type TriState } from '@/lib/view/conversations';
import { humanTime } from '@/lib/view/format';
import { ConversationActions } from './ConversationActions';
import { NewConversation } from './NewConversation';
import { hrefFor, navigate } from './router';
import { useSession } from './session-context';
import { useNarrow } from './useNarrow';
import { VirtualTable, type Column } from './VirtualTable';

function SyncMark({ state }: { state: ConversationView['syncState'] }) {
  if (state === 'synced') return null;
  return (
    <span className={`mark ${state}`} title={state === 'pending' ? 'Not yet synced' : 'The server refused a change'}>
      {state === 'pending' ? 'unsynced' : 'failed'}
    </span>
  );
}

const yesNo = (v: boolean) => (v ? 'Yes' : '—');

const columns: Column<ConversationView>[] = [
  {
    id: 'title',
    header: 'Contact or group',
    accessorFn: (c) => conversationTitle(c),
    meta: { className: 'grow' },
    cell: ({ row }) => {
      const c = row.original;
      return (
        <span className="title-cell">
          <a
            href={hrefFor({ name: 'conversation', id: c.id })}
            onClick={(e) => {
              e.preventDefault();
              navigate({ name: 'conversation', id: c.id });
            }}
          >
            <span className="kind">{c.group_id !== null ? 'Group' : 'Contact'}</span> {conversationTitle(c)}
          </a>
          <SyncMark state={c.syncState} />
          {c.archived_at !== null && <span className="mark">archived</span>}
        </span>
      );
    },
  },
  { id: 'pinned', header: 'Pinned', accessorFn: (c) => Number(c.is_pinned), cell: ({ row }) => yesNo(row.original.is_pinned), meta: { className: 'wide-only', width: '4.5rem' } },
  { id: 'muted', header: 'Muted', accessorFn: (c) => Number(c.is_muted), cell: ({ row }) => yesNo(row.original.is_muted), meta: { className: 'wide-only', width: '4.5rem' } },
  { id: 'last_active', header: 'Last active', accessorFn: (c) => c.last_active_at ?? 0, cell: ({ row }) => humanTime(row.original.last_active_at), meta: { className: 'wide-only', width: '6.5rem' } },
  { id: 'last_opened', header: 'Last opened', accessorFn: (c) => c.last_opened_at ?? 0, cell: ({ row }) => humanTime(row.original.last_opened_at), meta: { className: 'wide-only', width: '6.5rem' } },
  { id: 'created', header: 'Created', accessorFn: (c) => c.created_at, cell: ({ row }) => humanTime(row.original.created_at), meta: { className: 'wide-only', width: '6.5rem' } },
  { id: 'actions', header: () => <span className="visually-hidden">Actions</span>, enableSorting: false, meta: { width: '11.5rem' }, cell: ({ row }) => <ConversationActions conversation={row.original} /> },
];

function TriSelect({ label, value, onChange, yes, no }: { label: string; value: TriState; onChange(v: TriState): void; yes: string; no: string }) {
  const id = `filter-${label.toLowerCase()}`;
  return (
    <span className="filter">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as TriState)}>
        <option value="any">All</option>
        <option value="yes">{yes}</option>
        <option value="no">{no}</option>
      </select>
    </span>
  );
}

export function ConversationsScreen() {
  const { connection } = useSession();
  const all = useLiveQuery(() => connection.db.conversations.toArray(), [connection.db]);
  const [filters, setFilters] = useState<ConversationFilters>(DEFAULT_FILTERS);
  const narrow = useNarrow();
  const set = <K extends keyof ConversationFilters>(key: K) => (value: ConversationFilters[K]) => setFilters((f) => ({ ...f, [key]: value }));
  const rows = useMemo(() => defaultOrder(filterConversations(all ?? [], filters)), [all, filters]);

  return (
    <section className="screen" aria-labelledby="conversations-title">
      <div className="screen-head">
        <h1 id="conversations-title">Conversations</h1>
        <NewConversation />
      </div>
      <div className="filters" role="search">
        <span className="filter grow">
          <label htmlFor="filter-text">Search</label>
          <input id="filter-text" type="search" placeholder="Contact or group id" value={filters.text} onChange={(e) => set('text')(e.target.value)} />
        </span>
        <details className="more-filters" open={narrow ? undefined : true}>
          <summary>Filters</summary>
          <div className="filters">
        <TriSelect label="Pinned" value={filters.pinned} onChange={set('pinned')} yes="Pinned" no="Not pinned" />
        <TriSelect label="Muted" value={filters.muted} onChange={set('muted')} yes="Muted" no="Not muted" />
        <TriSelect label="Archived" value={filters.archived} onChange={set('archived')} yes="Archived" no="Not archived" />
        <span className="filter">
          <label htmlFor="filter-kind">Kind</label>
          <select id="filter-kind" value={filters.kind} onChange={(e) => set('kind')(e.target.value as ConversationFilters['kind'])}>
            <option value="any">All</option>
            <option value="contact">Contacts</option>
            <option value="group">Groups</option>
          </select>
        </span>
          </div>
        </details>
      </div>
      {all === undefined ? (
        <p className="empty">Loading…</p>
      ) : (
        <VirtualTable
          label="Conversations"
          rows={rows}
          columns={columns}
          rowClassName={(c) => (c.syncState !== 'synced' ? `unsynced ${c.syncState}` : '')}
          empty={all.length === 0 ? 'No conversations yet. Start one with “New conversation”.' : 'No conversation matches these filters.'}
        />
      )}
    </section>
  );
}
