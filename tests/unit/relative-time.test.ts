// How long ago, as a conversations list says it, and the other formatted times (lib/view/format.ts).
import { describe, expect, it } from 'vitest';
import { countOf, fullTime, groupedNumber, humanTime, relativeTime, shortDate } from '../../lib/view/format';

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
  it('beyond a week, shows the date (with the year when not this one)', () => {
    expect(relativeTime(at(2026, 2, 11), now)).toBe('11 Mar');
    expect(relativeTime(at(2026, 1, 19), now)).toBe('19 Feb');
    expect(relativeTime(at(2026, 0, 1, 0, 5), now)).toBe('1 Jan');
    expect(relativeTime(at(2025, 11, 24), now)).toBe('24 Dec 2025');
    expect(relativeTime(at(2019, 6, 4), now)).toBe('4 Jul 2019');
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
      for (const t of [Math.floor(now / 1000) - 30, at(2026, 2, 18, 9), at(2026, 2, 17), at(2026, 2, 14), at(2026, 1, 1), at(2020, 0, 1)]) expect(relativeTime(t, now)).toMatch(/ago$|^just now$|^yesterday$|^\d\d? [A-Z][a-z]{2}( \d{4})?$/);
      expect(humanTime(at(2020, 0, 1), now)).toBe('1 Jan 2020');
      expect(groupedNumber(1234567)).toBe('1,234,567');
    } finally {
      Object.assign(Intl, { DateTimeFormat });
      Object.assign(Date.prototype, { toLocaleString: toLocale[0], toLocaleDateString: toLocale[1], toLocaleTimeString: toLocale[2] });
    }
  });
  it('groups digits by thousands', () => {
    expect([0, 7, 999, 1000, 12345, 100000, 9876543].map(groupedNumber)).toEqual(['0', '7', '999', '1,000', '12,345', '100,000', '9,876,543']);
    expect([countOf(1, 'file'), countOf(0, 'file'), countOf(1001, 'conversation'), countOf(2, 'file does', 'files do')]).toEqual(['1 file', '0 files', '1,001 conversations', '2 files do']);
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
      // Today the clock, as the locale writes it; another day the date, as every screen writes it.
      expect(humanTime(t, now)).toBe(
        date.toDateString() === new Date(now).toDateString() ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) : shortDate(date, now),
      );
    }
    expect(humanTime(null, now)).toBe('—');
    expect(humanTime(at(2026, 2, 1), now)).toBe('1 Mar');
    expect(humanTime(at(2025, 11, 24), now)).toBe('24 Dec 2025');
  });
});
