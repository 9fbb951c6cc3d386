import { describe, expect, it } from 'vitest';
import { combine, flagOfCode, flagOfRange, parseNumber, parseRange, rankOf, worst } from '../../lib/view/viewer/flags';

describe('result flags', () => {
  it('reads interpretation codes (HL7 v2 table 0078 / FHIR ObservationInterpretation) with words and a symbol', () => {
    expect(flagOfCode('H')).toEqual({ level: 'abnormal', direction: 'high', label: 'High', symbol: '↑' });
    expect(flagOfCode('l')).toEqual({ level: 'abnormal', direction: 'low', label: 'Low', symbol: '↓' });
    expect(flagOfCode('HH')).toEqual({ level: 'critical', direction: 'high', label: 'Critically high', symbol: '↑↑' });
    expect(flagOfCode('LL')).toMatchObject({ level: 'critical', direction: 'low', symbol: '↓↓' });
    expect(flagOfCode('AA')).toMatchObject({ level: 'critical', direction: null, symbol: '!!' });
    expect(flagOfCode('A')).toMatchObject({ level: 'abnormal', label: 'Abnormal', symbol: '!' });
    expect(flagOfCode('N')).toMatchObject({ level: 'normal', label: 'Normal', symbol: '' });
    // Every flag that stands out says so in words and a symbol, never by colour alone.
    for (const code of ['H', 'HH', 'L', 'LL', 'A', 'AA', 'POS', '>', '<', 'HU', 'LU']) {
      const f = flagOfCode(code)!;
      expect(f.label.length, code).toBeGreaterThan(2);
      expect(f.symbol, code).not.toBe('');
    }
  });

  it('reads words in place of codes, and keeps an unknown code as it is, unclassified', () => {
    expect(flagOfCode('', 'Critically high')).toMatchObject({ level: 'critical', direction: 'high' });
    expect(flagOfCode('xyz', 'High')).toMatchObject({ level: 'abnormal', direction: 'high' });
    expect(flagOfCode('W')).toEqual({ level: 'other', direction: null, label: 'W', symbol: '' });
    expect(flagOfCode('', '')).toBeNull();
  });

  it('combines several codes: the most severe decides, the words name each', () => {
    expect(combine([flagOfCode('H'), flagOfCode('W')])).toMatchObject({ level: 'abnormal', direction: 'high', label: 'High, W', symbol: '↑' });
    expect(combine([flagOfCode('H'), flagOfCode('HH')])).toMatchObject({ level: 'critical', label: 'High, Critically high', symbol: '↑↑' });
    expect(combine([flagOfCode('L')])).toEqual(flagOfCode('L'));
    expect(combine([])).toBeNull();
    expect(worst([null, flagOfCode('L'), flagOfCode('LL'), flagOfCode('N')])).toEqual(flagOfCode('LL'));
    expect(worst([])).toBeNull();
    expect([null, flagOfCode('N'), flagOfCode('W'), flagOfCode('H'), flagOfCode('HH')].map(rankOf)).toEqual([0, 0, 1, 2, 3]);
  });

  it('parses reference ranges as labs write them', () => {
    expect(parseRange('12.0-15.5')).toEqual({ low: 12, high: 15.5 });
    expect(parseRange('3.5 - 5.1 mmol/L')).toEqual({ low: 3.5, high: 5.1 });
    expect(parseRange('-2 to 2')).toEqual({ low: -2, high: 2 });
    expect(parseRange('4.5–11.0')).toEqual({ low: 4.5, high: 11 });
    expect(parseRange('<5')).toEqual({ high: 5 });
    expect(parseRange('<= 0.4 %')).toEqual({ high: 0.4 });
    expect(parseRange('>60')).toEqual({ low: 60 });
    expect(parseRange('negative')).toBeNull();
    expect(parseRange('15-12')).toBeNull();
    expect(parseRange('')).toBeNull();
  });

  it('parses plain numbers only', () => {
    expect(parseNumber(' 5.9 ')).toBe(5.9);
    expect(parseNumber('-0.5')).toBe(-0.5);
    expect(parseNumber('<0.1')).toBeNull();
    expect(parseNumber('5.9 mmol')).toBeNull();
    expect(parseNumber('')).toBeNull();
  });

  it('flags a value against its range in its own words, not the lab’s', () => {
    expect(flagOfRange(16, { low: 12, high: 15.5 })).toMatchObject({ level: 'abnormal', direction: 'high', label: 'Above range', symbol: '↑' });
    expect(flagOfRange(11.9, { low: 12, high: 15.5 })).toMatchObject({ level: 'abnormal', direction: 'low', label: 'Below range', symbol: '↓' });
    expect(flagOfRange(15.5, { low: 12, high: 15.5 })).toMatchObject({ level: 'normal', label: 'In range' });
    expect(flagOfRange(70, { low: 60 })).toMatchObject({ level: 'normal' });
    expect(flagOfRange(null, { low: 1 })).toBeNull();
    expect(flagOfRange(3, null)).toBeNull();
    expect(flagOfRange(3, {})).toBeNull();
  });
});
