// Which conversations a list shows and in what order, before any column sort the user picks.
import type { Conversation } from '../schemas';
import type { SyncState } from '../sync/page';
import { indexWords, matchesSearch, searchTier, searchWords } from './search';

export type TriState = 'any' | 'yes' | 'no';

export interface ConversationFilters {
  muted: TriState;
  pinned: TriState;
  /** Archived ones are hidden unless asked for. */
  archived: TriState;
  kind: 'any' | 'contact' | 'group';
  text: string;
}

export const DEFAULT_FILTERS: ConversationFilters = { muted: 'any', pinned: 'any', archived: 'no', kind: 'any', text: '' };

const matches = (state: TriState, value: boolean) => state === 'any' || (state === 'yes') === value;

export function conversationTitle(c: Pick<Conversation, 'contact_id' | 'group_id'>): string {
  return c.contact_id ?? c.group_id ?? '';
}

export function filterConversations<C extends Conversation>(rows: readonly C[], f: ConversationFilters): C[] {
  const typed = searchWords(f.text);
  return rows.filter(
    (c) =>
      matches(f.muted, c.is_muted) &&
      matches(f.pinned, c.is_pinned) &&
      matches(f.archived, c.archived_at !== null) &&
      (f.kind === 'any' || (f.kind === 'contact' ? c.contact_id !== null : c.group_id !== null)) &&
      (typed.length === 0 || matchesSearch(typed, indexWords(conversationTitle(c)))),
  );
}

/** Pinned first, then most recently active (or created), newest first. */
export function defaultOrder<C extends Conversation>(rows: readonly C[]): C[] {
  const activity = (c: Conversation) => c.last_active_at ?? c.created_at;
  return [...rows].sort(
    (a, b) => Number(b.is_pinned) - Number(a.is_pinned) || activity(b) - activity(a) || b.created_at - a.created_at,
  );
}

/** The columns a user can sort the list by (the header buttons). */
export type ConversationSortColumn = 'title' | 'last_active' | 'last_opened' | 'created';
export type ListSort<Column extends string> = { id: Column; desc: boolean } | null;

export function conversationSortValue(c: Conversation, column: ConversationSortColumn): string | number {
  switch (column) {
    case 'title':
      return conversationTitle(c).toLowerCase();
    case 'last_active':
      return c.last_active_at ?? 0;
    case 'last_opened':
      return c.last_opened_at ?? 0;
    case 'created':
      return c.created_at;
  }
}

/** Sorts by one column (ties keep the default order). */
export function sortConversations<C extends Conversation>(rows: readonly C[], sort: ListSort<ConversationSortColumn>): C[] {
  const ordered = defaultOrder(rows);
  if (!sort) return ordered;
  const sign = sort.desc ? -1 : 1;
  return ordered
    .map((c, i) => ({ c, i, v: conversationSortValue(c, sort.id) }))
    .sort((a, b) => (a.v < b.v ? -sign : a.v > b.v ? sign : a.i - b.i))
    .map((x) => x.c);
}

/**
 * What a list shows for these filters: the matching rows in the order picked; while searching with
 * no column picked, the ids every typed word names exactly before those it only begins
 * ("amelia hughes" lists `amelia-hughes` before `amelia-hughesdon`).
 */
export function listConversations<C extends Conversation>(rows: readonly C[], f: ConversationFilters, sort: ListSort<ConversationSortColumn>): C[] {
  const ordered = sortConversations(filterConversations(rows, f), sort);
  const typed = searchWords(f.text);
  if (sort || typed.length === 0) return ordered;
  const exact = ordered.map((c) => searchTier(typed, indexWords(conversationTitle(c))) === 'exact');
  return [...ordered.filter((_, i) => exact[i]), ...ordered.filter((_, i) => !exact[i])];
}

/**
 * The mark a row's sync state earns, if any: the user's own change not yet on the server, or one
 * the server refused. The app's bookkeeping (`reporting`: that the user opened it) earns none.
 */
export function syncMark(state: SyncState): 'unsynced' | 'failed' | null {
  return state === 'pending' ? 'unsynced' : state === 'failed' ? 'failed' : null;
}
