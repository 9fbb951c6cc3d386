// The search that forgives (issue 21, lib/view/search.ts): what a typed text finds among ids.
import { describe, expect, it } from 'vitest';
import { DEFAULT_FILTERS, filterConversations, listConversations } from '../../lib/view/conversations';
import { idFromSearch, indexWords, matchesSearch, searchTier, searchWords } from '../../lib/view/search';
import type { Conversation } from '../../lib/schemas';

const finds = (typed: string, id: string) => matchesSearch(searchWords(typed), indexWords(id));

describe('search words', () => {
  it('folds case and accents, and splits at separators, digits and camelCase', () => {
    expect(searchWords('Amélie_O’Brien-ward7B')).toEqual(['amelie', 'o', 'brien', 'ward', '7', 'b']);
    expect(searchWords('  Dr.  Zoë   Ångström ')).toEqual(['dr', 'zoe', 'angstrom']);
    expect(searchWords('drAmeliaHughes')).toEqual(['dr', 'amelia', 'hughes']);
    expect(searchWords('--- _ .')).toEqual([]);
    expect(searchWords('a a A')).toEqual(['a']);
  });

  it('an id is indexed by its words and by all of them joined', () => {
    expect(indexWords('amelia-hughes')).toEqual(['amelia', 'hughes', 'ameliahughes']);
    expect(indexWords('ward')).toEqual(['ward']);
  });
});

describe('what a search finds', () => {
  it.each([
    ['amelia hughes', 'amelia-hughes'],
    ['Hughes Amelia', 'amelia-hughes'],
    ['AMELIA', 'amelia-hughes'],
    ['améliá', 'amelia-hughes'],
    ['hug', 'amelia-hughes'],
    ['am hu', 'amelia-hughes'],
    ['amelia_hughes', 'amelia-hughes'],
    ['amelia.hughes', 'amelia-hughes'],
    ['ameliahu', 'amelia-hughes'],
    ['zoe', 'Zoë_Martin'],
    ['cardio 7', 'cardiology-ward7'],
    ['ward 7', 'cardiology_ward_7'],
  ])('%j finds %j', (typed, id) => expect(finds(typed, id)).toBe(true));

  it.each([
    ['amelia smith', 'amelia-hughes'],
    ['melia', 'amelia-hughes'], // a word matches from its start, not inside
    ['hughes amelia x', 'amelia-hughes'],
    ['ward 8', 'cardiology-ward7'],
  ])('%j does not find %j', (typed, id) => expect(finds(typed, id)).toBe(false));

  it('the list filter uses it, with the other filters', () => {
    const base: Conversation = { id: 'C1', contact_id: 'amelia-hughes', group_id: null, pinned_message_id: null, is_pinned: false, is_muted: false, last_active_at: null, last_opened_at: null, created_at: 1, archived_at: null };
    const rows = [base, { ...base, id: 'C2', contact_id: null, group_id: 'Hughes_Team' }, { ...base, id: 'C3', contact_id: 'bob' }];
    expect(filterConversations(rows, { ...DEFAULT_FILTERS, text: 'HUGHES' }).map((c) => c.id)).toEqual(['C1', 'C2']);
    expect(filterConversations(rows, { ...DEFAULT_FILTERS, text: 'hughes', kind: 'group' }).map((c) => c.id)).toEqual(['C2']);
    expect(filterConversations(rows, { ...DEFAULT_FILTERS, text: ' - ' })).toHaveLength(3);
  });

  it.each([
    ['amelia hughes', 'amelia-hughes', 'exact'],
    ['hughes', 'amelia-hughes', 'exact'],
    ['ameliahughes', 'amelia-hughes', 'exact'],
    ['amelia hug', 'amelia-hughes', 'prefix'],
    ['amelia', 'ameliana-x', 'prefix'],
    ['melia', 'amelia-hughes', null],
  ])('%j matches %j: %s', (typed, id, tier) => expect(searchTier(searchWords(typed), indexWords(id))).toBe(tier));

  it('lists ids named exactly before those only begun, in the list order otherwise; a column sort decides alone', () => {
    const base: Conversation = { id: 'C1', contact_id: 'amelia-hughesdon', group_id: null, pinned_message_id: null, is_pinned: true, is_muted: false, last_active_at: 30, last_opened_at: null, created_at: 1, archived_at: null };
    const rows = [base, { ...base, id: 'C2', contact_id: 'amelia-hughes', is_pinned: false }, { ...base, id: 'C3', contact_id: 'hughes-amelia-2', is_pinned: false, last_active_at: 40 }];
    expect(listConversations(rows, { ...DEFAULT_FILTERS, text: 'amelia hughes' }, null).map((c) => c.id)).toEqual(['C3', 'C2', 'C1']);
    expect(listConversations(rows, { ...DEFAULT_FILTERS, text: 'amelia hug' }, null).map((c) => c.id)).toEqual(['C1', 'C3', 'C2']);
    expect(listConversations(rows, { ...DEFAULT_FILTERS, text: 'amelia hughes' }, { id: 'title', desc: false }).map((c) => c.id)).toEqual(['C2', 'C1', 'C3']);
  });

  it('offers the text typed as an id, spaces as hyphens', () => {
    expect(idFromSearch('  amelia  hughes ')).toBe('amelia-hughes');
    expect(idFromSearch('Zoë Martin')).toBe('Zoe-Martin');
  });
});
