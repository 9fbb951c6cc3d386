// Search that tolerates typos (issue 32, lib/view/near-match.ts): the capped edit distance, what a
// typed text finds with typos and how it ranks, and which ids a new one is too close to.
import { describe, expect, it } from 'vitest';
import { allowedEdits, compareMatches, editDistance, idEdits, matchSearch, type SearchMatch } from '../../lib/view/near-match';
import { indexWords, searchWords } from '../../lib/view/search';

const match = (typed: string, id: string) => matchSearch(searchWords(typed), indexWords(id));

describe('edit distance with a cap', () => {
  it.each([
    ['hughes', 'hughes', 2, 0],
    ['hugjes', 'hughes', 2, 1], // a letter changed
    ['hughs', 'hughes', 2, 1], // a letter dropped
    ['hugghes', 'hughes', 2, 1], // a letter added
    ['amelai', 'amelia', 2, 1], // two neighbours swapped: one edit, not two
    ['amleia', 'amelia', 2, 1],
    ['emalia', 'amelia', 2, 2],
    ['', 'abc', 5, 3],
    ['abc', '', 5, 3],
    // Over the cap is cap + 1, however far.
    ['smith', 'hughes', 1, 2],
    ['amelia', 'zzzzzz', 2, 3],
    ['a', 'abcdefgh', 2, 3], // lengths too far apart
  ])('%j → %j (cap %i) is %i', (typed, target, cap, expected) => {
    expect(editDistance(typed, target, cap)).toBe(expected);
  });

  it.each([
    ['hugj', 'hughes', 1, 1], // a word still being typed is near the start of one
    ['hugh', 'hughes', 1, 0],
    ['amelai', 'ameliahughes', 1, 1],
    ['hughs', 'hughes', 1, 1],
    ['xyzw', 'hughes', 1, 2],
  ])('to the closest prefix: %j → %j (cap %i) is %i', (typed, target, cap, expected) => {
    expect(editDistance(typed, target, cap, true)).toBe(expected);
  });

  it('allows no edit under 4 letters, one up to 6, two from 7', () => {
    expect([1, 3, 4, 6, 7, 12].map(allowedEdits)).toEqual([0, 0, 1, 1, 2, 2]);
  });
});

describe('what a search finds with typos, and how it ranks', () => {
  it.each([
    ['amelia hughes', 'amelia-hughes', { tier: 'exact', edits: 0 }],
    ['hughes amelia', 'amelia-hughes', { tier: 'exact', edits: 0 }],
    ['amel hugh', 'amelia-hughes', { tier: 'prefix', edits: 0 }],
    ['amelia hugjes', 'amelia-hughes', { tier: 'near', edits: 1 }],
    ['amelai', 'amelia-hughes', { tier: 'near', edits: 1 }],
    ['hughs', 'amelia-hughes', { tier: 'near', edits: 1 }],
    ['Amélai Hugjes', 'amelia-hughes', { tier: 'near', edits: 2 }], // one per word: case and accents are not edits
    ['ameliahugjes', 'amelia-hughes', { tier: 'near', edits: 1 }], // the words run together
    ['cardiolgy 7', 'cardiology-ward7', { tier: 'near', edits: 1 }],
    ['hugj', 'amelia-hughes', { tier: 'near', edits: 1 }], // still typing
  ] as const)('%j finds %j as %j', (typed, id, expected) => expect(match(typed, id)).toEqual(expected));

  it.each([
    ['hgs', 'amelia-hughes'], // under 4 letters: no typo forgiven
    ['amelia smith', 'amelia-hughes'], // a word nowhere near
    ['amelai hugjes x', 'amelia-hughes'], // every word must be near a word of the id
    ['ward 8', 'cardiology-ward7'], // a digit is a short word: exact only
    ['emalia', 'amelia-hughes'], // two edits on a 6-letter word
    ['', 'amelia-hughes'],
  ])('%j does not find %j', (typed, id) => expect(match(typed, id)).toBeNull());

  it('ranks exact before prefix before typos, and fewer edits first', () => {
    const ranked: SearchMatch[] = [
      { tier: 'near', edits: 2 },
      { tier: 'prefix', edits: 0 },
      { tier: 'near', edits: 1 },
      { tier: 'exact', edits: 0 },
    ];
    expect([...ranked].sort(compareMatches)).toEqual([
      { tier: 'exact', edits: 0 },
      { tier: 'prefix', edits: 0 },
      { tier: 'near', edits: 1 },
      { tier: 'near', edits: 2 },
    ]);
  });
});

describe('ids too close to a new one', () => {
  it.each([
    ['amelia-hugjes', 'amelia-hughes', 1],
    ['amelai-hughes', 'amelia-hughes', 1],
    ['amelia-hughs', 'amelia-hughes', 1],
    ['amelia-hugh', 'amelia-hughes', 2],
    ['Amelia-Hughes', 'amelia-hughes', 0], // only the case differs
    ['amélia-hughes', 'amelia-hughes', 0], // or an accent
    ['bob1', 'bob2', 1],
  ])('%j is near %j (%i edits)', (typed, existing, edits) => expect(idEdits(typed, existing)).toBe(edits));

  it.each([
    ['amelia-hughes', 'amelia-hughes'], // the same id: creating it opens that one
    ['amelia-smith', 'amelia-hughes'],
    ['bob', 'rob'], // under 4 letters: no edit forgiven
    ['ward-7', 'ward-789'], // two edits on a 6-letter id
  ])('%j is not near %j', (typed, existing) => expect(idEdits(typed, existing)).toBeNull());
});
