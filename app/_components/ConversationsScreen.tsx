'use client';
// The conversations list. It reads only the window of rows around what is on screen (and their
// number), through the index of the default order where the filters allow (lib/view/windows.ts),
// at most a few times a second however fast the sync writes.
import type { SortingState } from '@tanstack/react-table';
import { createContext, useCallback, useContext, useMemo, useState } from 'react';
import { hasConversations, type ConversationView, type ParleyDb } from '@/lib/sync/page';
import { conversationTitle, DEFAULT_FILTERS, syncMark, type ConversationFilters, type ConversationSortColumn } from '@/lib/view/conversations';
import { fullTime, humanTime, relativeTime } from '@/lib/view/format';
import { idFromSearch } from '@/lib/view/search';
import { conversationRange, readConversationWindow } from '@/lib/view/windows';
import { FilterChips, SortSelect } from './ConversationListControls';
import { firstRows, takeFirstRows } from './first-rows';
import { toggleOf, useConversationActions, useOpenRowMenu } from './conversation-actions';
import { Icon } from './Icon';
import { NewConversation, type NewConversationRequest } from './NewConversation';
import { hrefFor, navigate } from './router';
import { RowActions } from './RowActions';
import { RowMenu } from './RowMenu';
import { useSession, useSyncNow } from './session-context';
import { Snackbar } from './Snackbar';
import { SyncProgress } from './SyncProgress';
import { useNarrow } from './useNarrow';
import { useCollapsingHeader } from './useCollapsingHeader';
import { useRowTouch } from './useRowTouch';
import { useThrottledQuery } from './useThrottledQuery';
import { VirtualTable, type Column } from './VirtualTable';
import { useListWindow } from './useListWindow';
import { useSettled } from './useSettled';

/** Ids of the rows a search found only by forgiving typos: marked, so none is taken for the name typed. */
const CloseMatches = createContext<ReadonlySet<string>>(new Set());
/** The conversation open beside the list (two panes): its row's link is the current page. */
const Selected = createContext<string | null>(null);

function SyncMark({ state }: { state: ConversationView['syncState'] }) {
  const mark = syncMark(state);
  if (!mark) return null;
  return (
    <span className={`mark ${state}`} title={mark === 'unsynced' ? 'Not yet synced' : 'The server refused a change'}>
      {mark}
    </span>
  );
}

/**
 * A row as a messaging app shows it, legible at 390 px: the whole name (wrapping onto as many
 * lines as it needs) with what needs attention (unsynced, failed, archived) beside it, and below it the kind,
 * one time (the last activity as a relative time, or when it was created if nothing was sent in
 * it yet, said so; none where the row has the time columns: `withTime`), and pinned/muted marks.
 * By touch, swiped left it archives (or restores), right it pins (or unpins); a long press opens the row's menu.
 */
function ConversationSummary({ conversation: c, withTime }: { conversation: ConversationView; withTime: boolean }) {
  const title = conversationTitle(c);
  const closeMatch = useContext(CloseMatches).has(c.id);
  const current = useContext(Selected) === c.id;
  const openMenu = useOpenRowMenu();
  const { act, alert } = useConversationActions(c, { undoable: true });
  const { offset, handlers } = useRowTouch({ onSwipe: (direction) => void act(direction === 'left' ? 'archive' : 'pin'), onLongPress: () => openMenu(c) });
  // Nothing sent in it yet: its creation is its last activity.
  const lastActive = c.last_active_at ?? c.created_at;
  return (
    <span className="title-cell conversation-summary">
      {offset !== 0 && (
        <span className={`swipe-reveal ${offset < 0 ? 'archive' : 'pin'}`} aria-hidden="true">
          {toggleOf(c, offset < 0 ? 'archive' : 'pin').label}
        </span>
      )}
      <a
        href={hrefFor({ name: 'conversation', id: c.id })}
        aria-current={current ? 'page' : undefined}
        title={title}
        className={offset !== 0 ? 'swiping' : undefined}
        style={offset !== 0 ? { transform: `translateX(${offset}px)` } : undefined}
        {...handlers}
        onClick={(e) => {
          e.preventDefault();
          navigate({ name: 'conversation', id: c.id });
        }}
        // The keyboard's menu key, or a long press where the browser fires contextmenu for it too
        // (Chromium; useRowTouch has opened the menu already, opening it again changes nothing); a
        // mouse's right button keeps the browser's menu (open in a new tab…).
        onContextMenu={(e) => {
          if ((e.nativeEvent as PointerEvent).pointerType === 'mouse') return;
          e.preventDefault();
          openMenu(c);
        }}
      >
        <span className="summary-line">
          <span className="name">{title}</span>
          <SyncMark state={c.syncState} />
          {c.archived_at !== null && <span className="mark">archived</span>}
          {closeMatch && <span className="mark">close match</span>}
        </span>
        <span className="summary-line details">
          <span className="kind">{c.group_id !== null ? 'Group' : 'Contact'}</span>
          {withTime && (
            <>
              <span aria-hidden="true">·</span>
              {c.last_active_at === null && <span className="since">created</span>}
              <time
                dateTime={new Date(lastActive * 1000).toISOString()}
                // The exact time, made when pointed at: formatting it uses Intl, which the first
                // screen otherwise never loads (lib/view/format.ts relativeTime).
                onPointerEnter={(e) => {
                  e.currentTarget.title ||= `${c.last_active_at !== null ? 'Last active' : 'Created'} ${fullTime(lastActive)}`;
                }}
              >
                {relativeTime(lastActive)}
              </time>
            </>
          )}
          {c.is_pinned && (
            <span className="state-mark" title="Pinned">
              <Icon name="pin" size={14} />
              <span>Pinned</span>
            </span>
          )}
          {c.is_muted && (
            <span className="state-mark" title="Muted">
              <Icon name="mute" size={14} />
              <span>Muted</span>
            </span>
          )}
        </span>
      </a>
      {alert}
    </span>
  );
}

/**
 * The time columns only where the list has the screen's width to itself (not a phone, not a pane
 * beside a conversation): there the row's summary shows no time of its own (the columns say it).
 * On a phone the actions column holds only "More actions".
 */
const conversationColumns = (narrow: boolean, timeColumns: boolean): Column<ConversationView>[] => [
  {
    id: 'title',
    header: 'Contact or group',
    accessorFn: (c) => conversationTitle(c),
    meta: { className: 'grow' },
    cell: ({ row }) => <ConversationSummary conversation={row.original} withTime={!timeColumns} />,
  },
  // No Pinned/Muted columns: the marks are under the name, and pinned ones come first anyway.
  ...(timeColumns
    ? ([
        { id: 'last_active', header: 'Last active', accessorFn: (c) => c.last_active_at ?? 0, cell: ({ row }) => humanTime(row.original.last_active_at), meta: { width: '6.5rem' } },
        { id: 'last_opened', header: 'Last opened', accessorFn: (c) => c.last_opened_at ?? 0, cell: ({ row }) => humanTime(row.original.last_opened_at), meta: { width: '6.5rem' } },
        { id: 'created', header: 'Created', accessorFn: (c) => c.created_at, cell: ({ row }) => humanTime(row.original.created_at), meta: { width: '6.5rem' } },
      ] satisfies Column<ConversationView>[])
    : []),
  { id: 'actions', header: () => <span className="visually-hidden">Actions</span>, enableSorting: false, meta: { width: narrow ? '44px' : '11.5rem' }, cell: ({ row }) => <RowActions conversation={row.original} /> },
];

/** The rows first-rows.ts read for this database, as the list's throttled query takes them at mount. */
function useFirstRows(db: ParleyDb) {
  const [head] = useState(() => {
    const first = firstRows(db);
    return first && { ...first, taken: () => takeFirstRows(db) };
  });
  return head;
}

/** `selected`: the list is a pane beside that conversation (null: none open yet); undefined: the list is the screen. */
export function ConversationsScreen({ selected }: { selected?: string | null }) {

  const { connection } = useSession();
  const { db } = connection;
  const [filters, setFilters] = useState<ConversationFilters>(DEFAULT_FILTERS);
  const [sorting, setSorting] = useState<SortingState>([]);
  const narrow = useNarrow();
  const pane = selected !== undefined;
  const header = useCollapsingHeader(narrow);
  const columns = useMemo(() => conversationColumns(narrow, !narrow && !pane), [narrow, pane]);
  const set = <K extends keyof ConversationFilters>(key: K) => (value: ConversationFilters[K]) => setFilters((f) => ({ ...f, [key]: value }));
  const sort = sorting[0] ? { id: sorting[0].id as ConversationSortColumn, desc: sorting[0].desc } : null;
  const { windowStart, windowSize, onVisibleRange } = useListWindow();
  const indexed = conversationRange(filters, sort) !== null;
  // The pass for typos runs once typing pauses (and only when the search finds few rows).
  const settled = useSettled(filters.text, 400);
  const list = useThrottledQuery(
    db,
    ['conversations'],
    () => readConversationWindow(db, filters, sort, windowStart, windowSize, { near: settled }),
    [JSON.stringify(filters), JSON.stringify(sort), windowStart, windowSize, settled],
    // A filter no index covers reads every row: less often.
    indexed ? 250 : 2_000,
    // Plain rows (no blobs): the same JSON is the same list, and is not rendered again.
    JSON.stringify,
    // Its mount's window is the default one, which first-rows.ts may have read already.
    useFirstRows(db),
  );
  const anything = useThrottledQuery(db, ['conversations'], () => hasConversations(db), [], 1_000);
  const onSortingChange = useCallback((next: SortingState) => setSorting(next), []);
  // Pull to refresh is "Sync now".
  const onRefresh = useSyncNow();
  const [request, setRequest] = useState<NewConversationRequest | null>(null);
  const requestTaken = useCallback(() => setRequest(null), []);
  // No match is not a dead end: first the ids it may have meant, then clearing the filters; starting
  // a conversation with what was typed (a typo would misfile a patient's data) comes last.
  const offerId = idFromSearch(filters.text);
  const typedText = filters.text.trim();
  const closeMatches = useMemo(() => new Set(list?.closeMatches ?? []), [list?.closeMatches]);
  const startOffer = offerId && (
    <button type="button" onClick={() => setRequest({ id: offerId, group: filters.kind === 'group' })}>
      Start a conversation with ‘{offerId}’
    </button>
  );
  const didYouMean = list && list.didYouMean.length > 0 && (
    <div className="did-you-mean">
      <p role="status">
        No conversation matches ‘{typedText}’. Did you mean…
      </p>
      <span className="actions">
        {list.didYouMean.map((id, i) => (
          <button key={id} type="button" className={i === 0 ? 'primary' : undefined} onClick={() => set('text')(id)}>
            {id}
          </button>
        ))}
        {startOffer}
      </span>
    </div>
  );
  const noMatch =
    offerId && list && !list.nearPass ? (
      <>Looking for close matches to ‘{typedText}’…</>
    ) : (
      <>
        No conversation matches {offerId ? `‘${typedText}’` : 'these filters'}.
        <span className="actions">
          <button type="button" onClick={() => setFilters(DEFAULT_FILTERS)}>
            Clear filters
          </button>
          {startOffer}
        </span>
      </>
    );

  return (
    <section className={`screen list-screen conversations-screen${pane ? ' pane' : ''}${header.collapsed ? ' collapsed' : ''}`} aria-labelledby="conversations-title">
      {/* Folds away while scrolling down on a phone (more rows in view), back on scrolling up. */}
      <div className="collapsible">
        <div>
          <div className="screen-head">
            <h1 id="conversations-title">Conversations</h1>
            <NewConversation request={request} onRequestTaken={requestTaken} />
          </div>
          <div className="filters" role="search">
            <span className="filter grow">
              <label htmlFor="filter-text" className="narrow-hidden">
                Search
              </label>
              <input
                id="filter-text"
                type="search"
                placeholder="Contact or group"
                // Patient identifiers: never kept in the browser's autofill store.
                autoComplete="off"
                autoCapitalize="off"
                autoCorrect="off"
                spellCheck={false}
                enterKeyHint="search"
                value={filters.text}
                onChange={(e) => set('text')(e.target.value)}
              />
            </span>
            <SortSelect sorting={sorting} onChange={setSorting} />
            <FilterChips filters={filters} onChange={setFilters} />
          </div>
        </div>
      </div>
      <SyncProgress />
      {didYouMean}
      {list === undefined ? (
        <p className="empty">Loading…</p>
      ) : (
        <CloseMatches.Provider value={closeMatches}>
        <Selected.Provider value={selected ?? null}>
        <RowMenu rows={list.rows}>
          <VirtualTable
            label="Conversations"
            rows={list.rows}
            start={list.start}
            total={list.total}
            columns={columns}
            sorting={sorting}
            onSortingChange={onSortingChange}
            onVisibleRange={onVisibleRange}
            onScroll={header.onScroll}
            onRefresh={onRefresh}
            rowClassName={(c) => `${syncMark(c.syncState) ? `unsynced ${c.syncState}` : ''}${c.id === selected ? ' selected' : ''}`}
            // Denser beside a conversation: as tall as the row's buttons, two lines of text.
            rowHeight={pane ? 44 : undefined}
            empty={anything === false && !offerId ? 'No conversations yet. Start one with “New conversation” above.' : noMatch}
          />
        </RowMenu>
        </Selected.Provider>
        </CloseMatches.Provider>
      )}
      <Snackbar />
    </section>
  );
}
