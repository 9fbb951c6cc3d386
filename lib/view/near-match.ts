// Search that tolerates small typos (issue 32): "amelia hugjes", "amelai" and "hughs" find
// `amelia-hughes`, ranked below every exact or prefix match. A typed word of 4 letters or more
// may be a few edits (a letter added, dropped, changed, or two neighbours swapped) from the start
// of a word of the id; shorter words must match as the forgiving search has them (search.ts).
// Pure, and loaded on first use (lib/view/windows.ts imports it when a search finds few rows):
// the first screen does not carry it.
import { searchTier, type SearchTier } from './search';

/** Edits a word (typed, or a whole id) of this many letters may be off by: none under 4, one up to 6, two from 7. */
export function allowedEdits(length: number): number {
  return length < 4 ? 0 : length < 7 ? 1 : 2;
}

/**
 * Optimal-string-alignment distance (Levenshtein plus a swap of two neighbours, "amelai" →
 * "amelia" is one edit) from `typed` to `target`, or to the closest prefix of `target` when
 * `prefix` (so a word still being typed, "hugj", is near "hughes"). Anything over `cap` is
 * `cap + 1`: the rows stop as soon as every cell is over it.
 */
export function editDistance(typed: string, target: string, cap: number, prefix = false): number {
  const over = cap + 1;
  if (!prefix && Math.abs(typed.length - target.length) > cap) return over;
  if (typed.length === 0) return prefix ? 0 : Math.min(target.length, over);
  const width = target.length + 1;
  let before = new Array<number>(width).fill(over); // row i - 2
  let previous = Array.from({ length: width }, (_, j) => Math.min(j, over)); // row i - 1
  let row = new Array<number>(width);
  for (let i = 1; i <= typed.length; i++) {
    row[0] = Math.min(i, over);
    let least = row[0];
    for (let j = 1; j < width; j++) {
      const same = typed[i - 1] === target[j - 1];
      let d = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (same ? 0 : 1));
      if (i > 1 && j > 1 && typed[i - 1] === target[j - 2] && typed[i - 2] === target[j - 1]) d = Math.min(d, before[j - 2] + 1);
      row[j] = Math.min(d, over);
      if (row[j] < least) least = row[j];
    }
    // No cell of a later row can come back under the cap (each is at least this row's least).
    if (least > cap) return over;
    [before, previous, row] = [previous, row, before];
  }
  return prefix ? Math.min(...previous) : previous[width - 1];
}

/** How a conversation matches a search, best first: every word exactly, every word as a prefix, or with typos. */
export type MatchTier = SearchTier | 'near';
export interface SearchMatch {
  tier: MatchTier;
  /** Edits over all the typed words (0 unless `near`). */
  edits: number;
}

const TIER_RANK: Record<MatchTier, number> = { exact: 0, prefix: 1, near: 2 };

/** Exact before prefix before near; fewer edits first. */
export function compareMatches(a: SearchMatch, b: SearchMatch): number {
  return TIER_RANK[a.tier] - TIER_RANK[b.tier] || a.edits - b.edits;
}

/** Fewest edits from a typed word to the start of one of the keys, or null when none is near enough. */
function nearestKey(word: string, keys: readonly string[]): number | null {
  if (keys.some((key) => key.startsWith(word))) return 0;
  const cap = allowedEdits(word.length);
  if (cap === 0) return null;
  let best = cap + 1;
  for (const key of keys) best = Math.min(best, editDistance(word, key, cap, true));
  return best <= cap ? best : null;
}

/**
 * How typed words (searchWords) match an id's keys (indexWords), or null: as search.ts when each
 * word begins a key, otherwise `near` when each word is within its allowed edits of a key's start.
 */
export function matchSearch(typed: readonly string[], keys: readonly string[]): SearchMatch | null {
  if (typed.length === 0) return null;
  const tier = searchTier(typed, keys);
  if (tier) return { tier, edits: 0 };
  let edits = 0;
  for (const word of typed) {
    const nearest = nearestKey(word, keys);
    if (nearest === null) return null;
    edits += nearest;
  }
  return { tier: 'near', edits };
}

const folded = (id: string) => id.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/**
 * Edits between an id about to be created and one that exists, when they are near enough to be
 * the same patient mistyped (0: they differ only in case or accents), or null. The same id is
 * null: creating it opens the one that exists.
 */
export function idEdits(typed: string, existing: string): number | null {
  if (typed === existing) return null;
  const a = folded(typed);
  const b = folded(existing);
  const cap = allowedEdits(a.length);
  if (a === b) return 0;
  if (cap === 0) return null;
  const d = editDistance(a, b, cap);
  return d <= cap ? d : null;
}
