// Index keys for the UI's windowed lists. IndexedDB cannot index booleans or null, and the
// conversations screen's default order (pinned first, then the most recent activity) is computed
// from several fields, so each visible conversation row is stored with `listKeys`, derived here.
// A Dexie middleware adds them on every write and strips them from every read: whoever writes a
// visible row (rebase.ts, the pull's fast path) need not know about them, and whoever reads one
// sees exactly the ConversationView it wrote. Only the indexes see them.
import type { DBCore, DBCoreCursor, DBCoreTable, Middleware } from 'dexie';
import type { Conversation } from '../../schemas';

export interface ConversationListKeys {
  /** The default order, ascending: pinned first, then latest activity (or creation), then newest. */
  order: [number, number, number];
  /** The same, after a leading 0 (not archived) or 1 (archived): a range per archived filter. */
  byArchived: [number, number, number, number];
  /** The words of its contact or group id, for the search (a multi-entry index, lib/view/search.ts; `indexWords`). */
  words: string[];
}

/** Index names on `conversations` (Dexie key paths). */
export const ORDER_INDEX = 'listKeys.order';
export const BY_ARCHIVED_INDEX = 'listKeys.byArchived';
export const WORDS_INDEX = 'listKeys.words';

export function conversationListKeys(c: Conversation): ConversationListKeys {
  const pinned = c.is_pinned ? 0 : 1;
  const activity = -(c.last_active_at ?? c.created_at);
  const created = -c.created_at;
  return {
    order: [pinned, activity, created],
    byArchived: [c.archived_at === null ? 0 : 1, pinned, activity, created],
    words: indexWords(c.contact_id ?? c.group_id ?? ''),
  };
}

function withKeys(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  return { ...value, listKeys: conversationListKeys(value as Conversation) };
}

function strip(value: unknown): unknown {
  if (!value || typeof value !== 'object' || !('listKeys' in value)) return value;
  const { listKeys: _keys, ...rest } = value;
  return rest;
}

/**
 * A view of `cursor` whose `value` is `map(value)`. Everything else is read from, and called on,
 * the cursor itself: a native IDBCursor's getters (key, primaryKey) and methods (continue,
 * advance) throw "Illegal invocation" on any other receiver — an `Object.create` view only worked
 * where nothing but `value` was read, and in fake-indexeddb, which does not check. (seal.ts too.)
 */
export function mapCursorValue(cursor: DBCoreCursor | null, map: (value: unknown) => unknown): DBCoreCursor | null {
  if (!cursor) return cursor;
  return new Proxy(cursor, {
    get(target, prop) {
      if (prop === 'value') return map(target.value);
      const member: unknown = Reflect.get(target, prop, target);
      return typeof member === 'function' ? member.bind(target) : member;
    },
  });
}

function conversationsTable(table: DBCoreTable): DBCoreTable {
  return {
    ...table,
    mutate: (req) =>
      req.type === 'add' || req.type === 'put' ? table.mutate({ ...req, values: req.values.map(withKeys) }) : table.mutate(req),
    get: (req) => table.get(req).then(strip),
    getMany: (req) => table.getMany(req).then((values) => values.map(strip)),
    query: (req) =>
      table.query(req).then((res) => (req.values ? { ...res, result: res.result.map(strip) } : res)),
    openCursor: (req) => table.openCursor(req).then((cursor) => (req.values === false ? cursor : mapCursorValue(cursor, strip))),
  };
}

/** Registered by openSyncDb: keeps `listKeys` on stored conversation rows only. */
export const listKeysMiddleware: Middleware<DBCore> = {
  stack: 'dbcore',
  name: 'parley-list-keys',
  create: (down) => ({
    ...down,
    table: (name) => (name === 'conversations' ? conversationsTable(down.table(name)) : down.table(name)),
  }),
};

// ---- The words of an id (issue 21's forgiving search; lib/view/search.ts matches typed words against them) ----

/**
 * "Amélie_O'Brien-ward7B" → ["amelie", "o", "brien", "ward", "7", "b"]: marks stripped (NFD),
 * lower case, split at anything not a letter or digit, between letters and digits, and where a
 * lower-case letter meets a capital (camelCase).
 */
export function searchWords(text: string): string[] {
  const words = unaccented(text)
    .replace(/(\p{Ll})(?=\p{Lu})/gu, '$1 ')
    .toLowerCase()
    .match(/\p{L}+|\p{N}+/gu);
  return [...new Set(words)];
}

/** The keys an id is found by: its words and, if several, all of them joined ("ameliahughes"). */
export function indexWords(id: string): string[] {
  const words = searchWords(id);
  return words.length > 1 ? [...words, words.join('')] : words;
}

const unaccented = (text: string) => text.normalize('NFD').replace(/\p{M}/gu, '');
