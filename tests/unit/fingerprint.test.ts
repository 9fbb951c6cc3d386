// The Idempotency-Key fingerprint: content, not bytes, and never a stack overflow.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprint, stringifyIteratively } from '../../lib/api/domain/idempotency';

describe('stringifyIteratively', () => {
  it('writes exactly what JSON.stringify writes, for any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
        expect(stringifyIteratively(value)).toBe(JSON.stringify(value));
      }), { numRuns: 500 });
  });

  it('and for the values a request identity holds (undefined fields are left out, as JSON.stringify does)', () => {
    const value = { name: 'a.pdf', type: undefined, size: 3, sha256: 'ab', list: [undefined, 1] };
    expect(stringifyIteratively(value)).toBe(JSON.stringify(value));
  });

  it('handles nesting far deeper than JSON.stringify can', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = { a: deep };
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const text = stringifyIteratively(deep);
    expect(text.startsWith('{"a":{"a":')).toBe(true);
    expect(text.length).toBe(200_000 * 6 + 1);
  });
});

describe('fingerprint', () => {
  it('is unchanged for ordinary values: keys stored by the previous version still match their repeats', () => {
    // The values the previous version computed for these identities.
    const upload = { method: 'POST', path: '/v1/files', content: { conversation_id: 'c', file: { name: 'a', type: 'text/plain', size: 1, sha256: 'x' } } };
    expect(fingerprint(upload)).toBe('1429404b40e30fecce6a0bf0695573b4822a74ae93caa1dc93aa0277badb6a43');
    const update = { method: 'PUT', path: '/v1/conversations/abc', content: { is_pinned: true, archived_at: null, nested: { b: [1, 'x', null] } } };
    expect(fingerprint(update)).toBe('8ea8e455192a1bb6af2e9ccb5f583b0c741dea1e44a1a7e5796e57fc2f491588');
  });

  it('tells deep values apart', () => {
    const nest = (depth: number, leaf: unknown) => {
      let v: unknown = leaf;
      for (let i = 0; i < depth; i++) v = { a: v };
      return v;
    };
    const of = (v: unknown) => fingerprint({ method: 'POST', path: '/v1/conversations', content: { contact_id: v } });
    expect(of(nest(50_000, 1))).toBe(of(nest(50_000, 1)));
    expect(of(nest(50_000, 1))).not.toBe(of(nest(50_000, 2)));
  });
});
