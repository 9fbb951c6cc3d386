import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../lib/view/viewer/csv';
import { kindOf, kindOfName } from '../../lib/view/viewer/kind';
import { decodeText } from '../../lib/view/viewer/text';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('parseCsv', () => {
  it('reads quoted fields, doubled quotes and line breaks inside quotes', () => {
    const t = parseCsv('test,value,unit\r\n"Sodium, serum",140,mmol/L\n"Note ""A""","line1\nline2",\n');
    expect(t.rows).toEqual([
      ['test', 'value', 'unit'],
      ['Sodium, serum', '140', 'mmol/L'],
      ['Note "A"', 'line1\nline2', ''],
    ]);
    expect(t.problem).toBeNull();
  });
  it('guesses ; and tab, stops at the row limit, and says when a quote is left open', () => {
    expect(parseCsv('a;b\n1;2').rows).toEqual([['a', 'b'], ['1', '2']]);
    expect(parseCsv('a\tb\n1\t2').rows[1]).toEqual(['1', '2']);
    const many = parseCsv(Array.from({ length: 50 }, (_, i) => `${i},x`).join('\n'), 10);
    expect(many.rows).toHaveLength(10);
    expect(many.more).toBe(true);
    expect(parseCsv('a,b\n"cut').problem).toMatch(/cut short/);
  });
});

describe('kindOf', () => {
  it('goes by name and type, then by content', () => {
    expect(kindOfName('scan.PDF', '')).toBe('pdf');
    expect(kindOfName('photo.jpg', 'application/octet-stream')).toBe('image');
    expect(kindOfName('lab.hl7', 'text/plain')).toBe('hl7');
    expect(kindOfName('obs.json', 'application/fhir+json')).toBe('fhir');
    expect(kindOfName('a.bin', '')).toBe('other');
    expect(kindOf('report', 'application/octet-stream', bytes('%PDF-1.4\n'))).toBe('pdf');
    expect(kindOf('message.txt', 'text/plain', bytes('MSH|^~\\&|LAB'))).toBe('hl7');
    expect(kindOf('obs.json', 'application/json', bytes('\uFEFF{ "resourceType" : "Observation" }'))).toBe('fhir');
    expect(kindOf('data.json', 'application/json', bytes('{"a":1}'))).toBe('json');
    expect(kindOf('notes', '', bytes('plain words'))).toBe('text');
    expect(kindOf('blob', '', new Uint8Array([0, 1, 2, 255]))).toBe('other');
  });
});

describe('decodeText', () => {
  it('cuts at the limit and says how much was left out', () => {
    expect(decodeText(bytes('hello world'), 5)).toEqual({ text: 'hello', omitted: 6 });
    expect(decodeText(bytes('\uFEFFhi')).text).toBe('hi');
  });
});

