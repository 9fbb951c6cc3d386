// The pass for typos over the rows (issue 32): conversations a search names with typos, and ids
// near one about to be created. Loaded on first use (lib/view/windows.ts, NewConversationForm).
import { ORDER_INDEX, type ConversationView, type ParleyDb } from '../sync/page';
import { conversationTitle, DEFAULT_FILTERS, filterConversations, type ConversationFilters } from './conversations';
import { idEdits, matchSearch } from './near-match';
import { indexWords, searchWords } from './search';


/**
 * Reads rows in the list's order, keeping what `keep` scores (lower is closer; null: not kept),
 * until `enough` of the best possible score are found or `maxRows` were read. The rows, not an
 * index: on a device with a lock the contact/group ids and search words are indexed as keyed
 * tokens (lib/sync/mirror/seal.ts), which no edit distance can be computed on; the rows come
 * back opened. Best first (score, then the list's order), at most `enough`.
 */
async function scanInListOrder(
  db: ParleyDb,
  filters: ConversationFilters,
  keep: (c: ConversationView) => number | null,
  best: number,
  enough: number,
  maxRows: number,
): Promise<ConversationView[]> {
  // The whole order index, every filter checked per row: a cursor over a bounded range (the
  // archived filter's) costs as much in Chromium, and each step of one scans the store again in
  // fake-indexeddb, which the tests run on.
  const others: ConversationFilters = { ...filters, text: '' };
  const kept: Array<{ c: ConversationView; score: number; at: number }> = [];
  let read = 0;
  let atBest = 0;
  await db.transaction('r', db.conversations, () =>
    db.conversations
      .orderBy(ORDER_INDEX)
      .until(() => atBest >= enough || read >= maxRows)
      .each((c: ConversationView) => {
        read++;
        if (filterConversations([c], others).length === 0) return;
        const score = keep(c);
        if (score === null) return;
        kept.push({ c, score, at: read });
        if (score <= best) atBest++;
      }),
  );
  return kept
    .sort((a, b) => a.score - b.score || a.at - b.at)
    .slice(0, enough)
    .map((k) => k.c);
}

/**
 * Conversations whose id the search's words name with typos ("amelia hugjes", "amelai"), not
 * among `exclude` (what it found without), closest first: at most `limit`. Stops once `limit`
 * are one edit away (none can be closer) or after `maxRows` rows.
 */
export async function readCloseMatches(db: ParleyDb, filters: ConversationFilters, exclude: ReadonlySet<string>, limit: number, maxRows = MAX_SCAN): Promise<ConversationView[]> {
  const typed = searchWords(filters.text);
  if (typed.length === 0) return [];
    return scanInListOrder(
    db,
    filters,
    (c) => {
      if (exclude.has(c.id)) return null;
      const match = matchSearch(typed, indexWords(conversationTitle(c)));
      return match?.tier === 'near' ? match.edits : null;
    },
    1,
    limit,
    maxRows,
  );
}

/** A pass for typos reads at most this many rows (a mirror of 10,000 conversations is read whole). */
const MAX_SCAN = 50_000;

/** An existing conversation whose id is near one about to be created. */
export interface NearId {
  conversationId: string;
  id: string;
  /** 0: the same but for case or accents. */
  edits: number;
}

/**
 * Contact (or group) ids this device knows that are one or two edits from `typed` (near-match.ts
 * idEdits), closest first, at most `limit`: the new conversation form warns before a typo starts a
 * second conversation for the same patient. Read from the rows, in the list's order (archived
 * ones too), never from the id's index, which holds keyed tokens on a device with a lock.
 */
export async function readNearIds(db: ParleyDb, kind: 'contact_id' | 'group_id', typed: string, limit: number, maxRows = MAX_SCAN): Promise<NearId[]> {
  const id = typed.trim();
  if (!id) return [];
    const rows = await scanInListOrder(db, { ...DEFAULT_FILTERS, archived: 'any' }, (c) => (c[kind] === null ? null : idEdits(id, c[kind])), 0, limit, maxRows);
  return rows.map((c) => ({ conversationId: c.id, id: c[kind]!, edits: idEdits(id, c[kind]!)! }));
}

