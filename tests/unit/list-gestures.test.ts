// The pure parts of the lists' gestures (issue 21): when the header folds away on a phone, and
// how far a pull to refresh has gone.
import { describe, expect, it } from 'vitest';
import { PULL_THRESHOLD, pullAfter } from '../../app/_components/PullToRefresh';
import { HEADER_OPEN, headerAfterScroll, type HeaderState } from '../../lib/view/collapsing-header';

/** Feeds scroll positions in turn; `max` is how far the list can scroll. */
function scrollThrough(tops: number[], max = 5_000, from: HeaderState = HEADER_OPEN): HeaderState {
  return tops.reduce((state, top) => headerAfterScroll(state, top, max), from);
}

describe('the header folding away', () => {
  it('folds after scrolling down past the first rows, not before', () => {
    expect(scrollThrough([10, 20, 40]).collapsed).toBe(false); // near the top
    expect(scrollThrough([30, 60, 90]).collapsed).toBe(true);
  });

  it('a small jitter does nothing; scrolling back up a little unfolds', () => {
    const folded = scrollThrough([100, 200, 300]);
    expect(folded.collapsed).toBe(true);
    expect(scrollThrough([290, 300, 285], 5_000, folded).collapsed).toBe(true);
    expect(scrollThrough([280, 250, 220], 5_000, folded).collapsed).toBe(false);
  });

  it('unfolds at the top, whatever came before', () => {
    const folded = scrollThrough([100, 200, 300]);
    expect(headerAfterScroll(folded, 0, 5_000)).toEqual(HEADER_OPEN);
  });

  it('the list pulled back by its own growth at the end is not the user scrolling up', () => {
    // Folding makes the list taller: scrolled to its end (max 1,000), it now ends at 850.
    const folded = scrollThrough([900, 950, 1_000], 1_000);
    expect(folded.collapsed).toBe(true);
    expect(headerAfterScroll(folded, 850, 850).collapsed).toBe(true);
  });

  it('a fold needs travel in one direction: down-up-down in small steps stays open', () => {
    expect(scrollThrough([110, 100, 115, 100, 120, 105], 5_000, { collapsed: false, top: 100, travel: 0 }).collapsed).toBe(false);
  });
});

describe('pull to refresh', () => {
  it('damps the finger and arms past the threshold', () => {
    expect(pullAfter(-10)).toEqual({ phase: 'idle' });
    expect(pullAfter(40)).toEqual({ phase: 'pulling', distance: 20 });
    expect(pullAfter(PULL_THRESHOLD * 2)).toEqual({ phase: 'armed', distance: PULL_THRESHOLD });
    expect(pullAfter(1_000)).toMatchObject({ phase: 'armed', distance: 96 });
  });
});
