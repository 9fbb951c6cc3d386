// How long ago, as a conversations list says it, and the other formatted times (lib/view/format.ts).
import { describe, expect, it } from 'vitest';
import { fullTime, groupedNumber, humanTime, relativeTime } from '../../lib/view/format';

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
  it('beyond a week, counts calendar weeks, months and years', () => {
    expect(relativeTime(at(2026, 2, 11), now)).toBe('1 week ago');
    expect(relativeTime(at(2026, 1, 19), now)).toBe('3 weeks ago'); // 27 days: not yet a calendar month
    expect(relativeTime(at(2026, 1, 18), now)).toBe('1 month ago');
    expect(relativeTime(at(2025, 11, 24), now)).toBe('2 months ago');
    expect(relativeTime(at(2025, 2, 19), now)).toBe('11 months ago');
    expect(relativeTime(at(2025, 2, 18), now)).toBe('1 year ago');
    expect(relativeTime(at(2019, 6, 4), now)).toBe('6 years ago');
  });
  it('never needs Intl (the first screen does not load ICU for it)', () => {
    const { DateTimeFormat } = Intl;
    const toLocale = [Date.prototype.toLocaleString, Date.prototype.toLocaleDateString, Date.prototype.toLocaleTimeString];
    const refuse = () => {
      throw new Error('Intl used');
    };
    Object.assign(Intl, { DateTimeFormat: refuse });
    Object.assign(Date.prototype, { toLocaleString: refuse, toLocaleDateString: refuse, toLocaleTimeString: refuse });
    try {
      for (const t of [Math.floor(now / 1000) - 30, at(2026, 2, 18, 9), at(2026, 2, 17), at(2026, 2, 14), at(2026, 1, 1), at(2020, 0, 1)]) expect(relativeTime(t, now)).toMatch(/ago$|^just now$|^yesterday$/);
      expect(groupedNumber(1234567)).toBe('1,234,567');
    } finally {
      Object.assign(Intl, { DateTimeFormat });
      Object.assign(Date.prototype, { toLocaleString: toLocale[0], toLocaleDateString: toLocale[1], toLocaleTimeString: toLocale[2] });
    }
  });
  it('groups digits by thousands', () => {
    expect([0, 7, 999, 1000, 12345, 100000, 9876543].map(groupedNumber)).toEqual(['0', '7', '999', '1,000', '12,345', '100,000', '9,876,543']);
  });
  it('a missing time is a dash; a time in the future (a skewed clock) is now', () => {
    expect(relativeTime(null, now)).toBe('—');
    expect(relativeTime(Math.floor(now / 1000) + 3600, now)).toBe('just now');
  });
});

// The formatters are made once and reused (a new one per call was most of a list render's time):
// they must say what the browser's toLocale* calls say for the same options.
describe('formatted dates and times', () => {
  const times = [at(2026, 2, 18, 9, 5), at(2026, 2, 18, 23, 59), at(2026, 2, 1, 0, 0), at(2025, 11, 24, 13, 7), at(2019, 6, 4, 6, 30)];
  it('read as the locale formats them', () => {
    for (const t of times) {
      const date = new Date(t * 1000);
      expect(fullTime(t)).toBe(date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
      expect(humanTime(t, now)).toBe(
        date.toDateString() === new Date(now).toDateString()
          ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
          : date.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }),
      );
    }
    expect(humanTime(null, now)).toBe('—');
  });
});
