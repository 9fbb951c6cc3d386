// Search that forgives (issue 21): over contact and group ids, case, accents, separators (spaces,
// hyphens, underscores, dots) and word order do not matter, and each word typed matches the start
// of a word of the id. "amelia hughes", "Hughes Amelia", "AMÉLIA-hu" and "ameliahu" all find
// `amelia-hughes`. The id's words are kept in a multi-entry index of the mirror (lib/sync/mirror/list-keys.ts,
// db.ts version 8), so a search reads the rows that match, not every row (lib/view/windows.ts). How
// an id or a typed text is cut into words is the index's, so it lives there (lib/sync is below
// lib/view), reached through the page's entry point and re-exported here.
import { indexWords, searchWords } from '../sync/page';

export { indexWords, searchWords };

/** Whether every word typed begins one of the id's keys (the index's answer, computed in memory). */
export function matchesSearch(typed: readonly string[], keys: readonly string[]): boolean {
  return typed.every((word) => keys.some((key) => key.startsWith(word)));
}

/** `exact`: every word typed is one of the id's keys; `prefix`: each begins one. */
export type SearchTier = 'exact' | 'prefix';

/** How well an id matches (exact ones are listed first), or null when it does not. */
export function searchTier(typed: readonly string[], keys: readonly string[]): SearchTier | null {
  if (!matchesSearch(typed, keys)) return null;
  return typed.every((word) => keys.includes(word)) ? 'exact' : 'prefix';
}

/** The id the search offers to start a conversation with: the text typed, accents off, spaces as hyphens. */
export function idFromSearch(text: string): string {
  return unaccented(text).trim().replace(/\s+/g, '-');
}

const unaccented = (text: string) => text.normalize('NFD').replace(/\p{M}/gu, '');
