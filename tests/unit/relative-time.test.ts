// How long ago, as a conversations list says it (lib/view/format.ts relativeTime).
import { describe, expect, it } from 'vitest';
import { relativeTime } from '../../lib/view/format';

// A fixed "now": 14:30 local time on a Wednesday.
const now = new Date(2026, 2, 18, 14, 30, 0).getTime();
const at = (y: number, m: number, d: number, h = 12, min = 0) => Math.floor(new Date(y, m, d, h, min).getTime() / 1000);

describe('relativeTime', () => {
  it('says minutes and hours today', () => {
    expect(relativeTime(Math.floor(now / 1000) - 20, now)).toBe('just now');
    expect(relativeTime(Math.floor(now / 1000) - 5 * 60, now)).toBe('5 min ago');
    expect(relativeTime(at(2026, 2, 18, 11, 15), now)).toBe('3 h ago');
  });
  it('counts calendar days, not 24-hour periods', () => {
    expect(relativeTime(at(2026, 2, 17, 23, 50), now)).toBe('yesterday');
    expect(relativeTime(at(2026, 2, 16, 23, 50), now)).toBe('2 days ago');
    expect(relativeTime(at(2026, 2, 12, 9), now)).toBe('6 days ago');
  });
  it('gives the date beyond a week, with the year only when it is not this one', () => {
    expect(relativeTime(at(2026, 2, 11), now)).not.toMatch(/ago|2026/);
    expect(relativeTime(at(2025, 11, 24), now)).toMatch(/2025/);
  });
  it('a missing time is a dash; a time in the future (a skewed clock) is now', () => {
    expect(relativeTime(null, now)).toBe('—');
    expect(relativeTime(Math.floor(now / 1000) + 3600, now)).toBe('just now');
  });
});
