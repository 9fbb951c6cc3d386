// Windowed reads for the virtualised lists: the screens ask for the rows on screen (plus a margin)
// and the number of rows, never for the whole table. The default views — conversations in their
// default order with the archived/pinned filters, files newest first overall or per conversation —
// are ranges of an index (lib/sync/mirror/list-keys.ts, db.ts version 5): a count of keys and `limit` rows
// after an offset. Filters and column sorts no index covers (text search, muted, kind, type, a
// column header) read the matching rows and sort them in memory; the screens re-run those at a
// slower pace (see useThrottledQuery). The files list's reads: file-window.ts (not on the first screen).
import { BY_ARCHIVED_INDEX, type ConversationView, ORDER_INDEX, type ParleyDb, WORDS_INDEX } from '../sync/page';
import { conversationTitle, listConversations, type ConversationFilters, type ConversationSortColumn, type ListSort } from './conversations';
import { searchWords } from './search';

export interface ListWindow<T> {
  /** Rows in the whole (filtered) list. */
  total: number;
  /** Index of rows[0] in the list. */
  start: number;
  rows: T[];
  /** True when read through an index: only the window's rows were read. */
  indexed: boolean;
}

/** Keys of an index from `prefix` (inclusive) up to the end of that prefix. */
function prefixRange(prefix: Array<number | string>): [unknown[], unknown[]] {
  // IndexedDB orders arrays after numbers: [...prefix, []] sorts after every [...prefix, n, …].
  return [prefix, [...prefix, []]];
}

/** The index range that holds exactly the rows these filters keep, when one does. */
export function conversationRange(filters: ConversationFilters, sort: ListSort<ConversationSortColumn>): { index: string; range: [unknown, unknown] | null } | null {
  if (sort || filters.muted !== 'any' || filters.kind !== 'any' || filters.text.trim() !== '') return null;
  const pinned = filters.pinned === 'any' ? [] : [filters.pinned === 'yes' ? 0 : 1];
  if (filters.archived === 'any') return { index: ORDER_INDEX, range: pinned.length ? prefixRange(pinned) : null };
  return { index: BY_ARCHIVED_INDEX, range: prefixRange([filters.archived === 'yes' ? 1 : 0, ...pinned]) };
}

/** A window of the conversations list, with what a search found only by forgiving typos. */
export interface ConversationWindow extends ListWindow<ConversationView> {
  /** Ids of the rows found with typos: listed after every other match, and marked. */
  closeMatches: string[];
  /** When nothing else matched: the closest ones' contact or group ids, best first ("Did you mean …?"). */
  didYouMean: string[];
  /** Whether typos were looked for where needed (asked for once typing pauses; run when few rows match): the list is final. */
  nearPass: boolean;
}

/** Fewer matches than this and a search also looks for ids typed with a typo. */
export const FEW_MATCHES = 3;
/** At most this many rows found with typos are listed, and this many offered as "Did you mean …?". */
const CLOSE_MATCHES = 10;
const DID_YOU_MEAN = 3;

export async function readConversationWindow(
  db: ParleyDb,
  filters: ConversationFilters,
  sort: ListSort<ConversationSortColumn>,
  start: number,
  limit: number,
  /** `near`: also look for typos when the search finds fewer than FEW_MATCHES (a pass over the rows). */
  options: { near?: boolean } = {},
): Promise<ConversationWindow> {
  const found = await db.transaction('r', db.conversations, async (): Promise<ListWindow<ConversationView> & { all?: ConversationView[] }> => {
    const plan = conversationRange(filters, sort);
    if (plan) {
      const { index, range } = plan;
      const inRange = () => (range ? db.conversations.where(index).between(range[0], range[1], true, false) : db.conversations.orderBy(index));
      const total = await inRange().count();
      const rows = await inRange().offset(start).limit(limit).toArray();
      return { total, start, rows, indexed: true };
    }
    // A search reads only the rows whose words begin with every word typed (the words index).
    let ids: Set<string> | undefined;
    for (const word of searchWords(filters.text)) {
      const before = ids;
      const found: string[] = await db.conversations.where(WORDS_INDEX).startsWith(word).primaryKeys();
      ids = new Set(found.filter((id) => !before || before.has(id)));
    }
    const candidates = ids ? (await db.conversations.bulkGet([...ids])).filter((c) => c !== undefined) : await db.conversations.toArray();
    const all = listConversations(candidates, filters, sort);
    return { total: all.length, start, rows: all.slice(start, start + limit), indexed: false, all };
  });
  const { all, ...window } = found;
  const none: ConversationWindow = { ...window, closeMatches: [], didYouMean: [], nearPass: options.near === true };
  if (!all || !options.near || all.length >= FEW_MATCHES || searchWords(filters.text).length === 0) return none;
  let near: ConversationView[];
  try {
    near = await (await loadCloseMatches()).readCloseMatches(db, filters, new Set(all.map((c) => c.id)), CLOSE_MATCHES);
  } catch {
    // Its code could not be fetched (offline, before the app was kept for offline use): the list without typos.
    return none;
  }
  const listed = [...all, ...near];
  return {
    total: listed.length,
    start,
    rows: listed.slice(start, start + limit),
    indexed: false,
    closeMatches: near.map((c) => c.id),
    didYouMean: all.length === 0 ? [...new Set(near.map(conversationTitle))].slice(0, DID_YOU_MEAN) : [],
    nearPass: true,
  };
}

/** The pass for typos (close-matches.ts, with near-match.ts): fetched the first time a search needs it, not with the first screen. */
const loadCloseMatches = () => import('./close-matches');

/**
 * Contact or group ids this device knows that begin with what is typed (case aside), for the new
 * conversation form's suggestions: at most `limit`, most recent first with nothing typed. Read
 * through the search words and the rows, never the id's own index, which holds keyed tokens on a
 * device with a lock (lib/sync/mirror/seal.ts).
 */
export async function readKnownIds(db: ParleyDb, kind: 'contact_id' | 'group_id', typed: string, limit: number): Promise<string[]> {
  const prefix = typed.trim().toLowerCase();
  const [first] = searchWords(prefix);
  const candidates = first
    ? (await db.conversations.bulkGet([...new Set<string>(await db.conversations.where(WORDS_INDEX).startsWith(first).primaryKeys())])).filter((c) => c !== undefined)
    : await db.conversations.orderBy(ORDER_INDEX).limit(limit * 4).toArray();
  const ids = candidates.map((c) => c[kind]).filter((id): id is string => id !== null && id.toLowerCase().startsWith(prefix));
  return [...new Set(ids)].sort().slice(0, limit);
}
