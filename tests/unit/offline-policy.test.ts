// Files kept for offline (issue 18): the pure decisions of lib/offline/policy.ts — budget
// arithmetic, when downloads pause, which conversations are kept, the download queue's order and
// least-recently-opened eviction.
import { describe, expect, it } from 'vitest';
import { backgroundFetchReason, defaultBudget, downloadQueue, effectiveBudget, GiB, isKept, MiB, pauseReason, planEviction, summarise, UNKNOWN_QUOTA_BUDGET, type CacheEntry, type QueueFile } from '../../lib/offline/policy';

describe('budget', () => {
  it('defaults to the smaller of 20% of the quota and 1 GiB', () => {
    expect(defaultBudget(1000 * MiB)).toBe(200 * MiB);
    expect(defaultBudget(5 * GiB)).toBe(GiB);
    expect(defaultBudget(100 * GiB)).toBe(GiB);
    expect(defaultBudget(3)).toBe(0); // 20% of 3 bytes, floored
  });
  it('without a quota from the browser, 256 MiB', () => {
    expect(defaultBudget(null)).toBe(UNKNOWN_QUOTA_BUDGET);
    expect(defaultBudget(undefined)).toBe(256 * MiB);
    expect(defaultBudget(0)).toBe(256 * MiB);
    expect(defaultBudget(Number.NaN)).toBe(256 * MiB);
  });
  it("the user's setting wins; nonsense falls back to the default", () => {
    expect(effectiveBudget(50 * MiB, 100 * GiB)).toBe(50 * MiB);
    expect(effectiveBudget(10.7, 100 * GiB)).toBe(10);
    expect(effectiveBudget(null, 1000 * MiB)).toBe(200 * MiB);
    expect(effectiveBudget(0, 1000 * MiB)).toBe(200 * MiB);
    expect(effectiveBudget(-5, 1000 * MiB)).toBe(200 * MiB);
  });
});

describe('connection', () => {
  it('pauses on Data Saver and on 2G or slower, not otherwise', () => {
    expect(pauseReason({ saveData: true, effectiveType: '4g' })).toBe('save-data');
    expect(pauseReason({ saveData: false, effectiveType: '2g' })).toBe('slow');
    expect(pauseReason({ effectiveType: 'slow-2g' })).toBe('slow');
    expect(pauseReason({ saveData: false, effectiveType: '3g' })).toBeNull();
    expect(pauseReason({ saveData: false, effectiveType: '4g' })).toBeNull();
    expect(pauseReason(null)).toBeNull(); // a browser that does not say
    expect(pauseReason({})).toBeNull();
  });

  // Thumbnails fetched in the background (issue 32 item 13): the same, and not over a link the
  // browser says is cellular or metered.
  it.each([
    ['no word from the browser (Safari, Firefox)', null, null],
    ['nothing said', {}, null],
    ['Wi-Fi, 4g', { type: 'wifi', effectiveType: '4g', saveData: false }, null],
    ['ethernet', { type: 'ethernet' }, null],
    ['3g, kind unknown', { effectiveType: '3g' }, null],
    ['Data Saver', { saveData: true, effectiveType: '4g', type: 'wifi' }, 'save-data'],
    ['2g', { effectiveType: '2g' }, 'slow'],
    ['slow-2g', { effectiveType: 'slow-2g', type: 'wifi' }, 'slow'],
    ['cellular, 4g', { type: 'cellular', effectiveType: '4g' }, 'metered'],
    ['metered (older draft)', { metered: true, effectiveType: '4g' }, 'metered'],
    ['not metered', { metered: false, type: 'wifi' }, null],
  ] as const)('background fetch: %s → %s', (_name, connection, reason) => {
    expect(backgroundFetchReason(connection)).toBe(reason);
  });
  it('downloads the user asked for ("Keep offline") still run on cellular', () => {
    expect(pauseReason({ type: 'cellular', effectiveType: '4g' })).toBeNull();
  });
});

describe('which conversations are kept', () => {
  const pinned = { id: 'c1', is_pinned: true };
  const plain = { id: 'c2', is_pinned: false };
  it('pinned ones by default; the user choice wins either way', () => {
    expect(isKept(pinned, undefined, true)).toBe(true);
    expect(isKept(pinned, undefined, false)).toBe(false);
    expect(isKept(pinned, false, true)).toBe(false);
    expect(isKept(plain, undefined, true)).toBe(false);
    expect(isKept(plain, true, false)).toBe(true);
  });
});

describe('download queue', () => {
  const origin = 'https://parley.example';
  const file = (id: string, conversationId: string | null, created_at: number, url = `${origin}/files/${id}.pdf?id=${id}&sig=s`): QueueFile => ({ id, conversationId, created_at, file_size: 10, file_url: url });
  const files = [file('a', 'k', 100), file('b', 'k', 300), file('c', 'other', 400), file('d', 'k', 200), file('e', 'k2', 250), file('f', 'k', 300)];
  const kept = new Set(['k', 'k2']);

  it('files of kept conversations, newest first (ties by id)', () => {
    expect(downloadQueue(files, kept, new Map(), origin).map((f) => f.id)).toEqual(['b', 'f', 'e', 'd', 'a']);
  });
  it('leaves out what is complete, but fetches a renamed file again', () => {
    const cached = new Map([
      ['b', { complete: true, received: 10, url: files[1]!.file_url }],
      ['d', { complete: true, received: 10, url: `${origin}/files/old-name.pdf?id=d&sig=x` }],
    ]);
    expect(downloadQueue(files, kept, cached, origin).map((f) => f.id)).toEqual(['f', 'e', 'd', 'a']);
  });
  it('continues partial downloads before starting new ones', () => {
    const cached = new Map([['a', { complete: false, received: 4, url: files[0]!.file_url }]]);
    expect(downloadQueue(files, kept, cached, origin).map((f) => f.id)).toEqual(['a', 'b', 'f', 'e', 'd']);
  });
  it('skips files not yet uploaded and other origins', () => {
    const odd = [file('p', 'k', 900, ''), file('x', 'k', 800, 'https://elsewhere.example/files/x?id=x'), file('n', null, 700), file('g', 'k', 1)];
    expect(downloadQueue(odd, kept, new Map(), origin).map((f) => f.id)).toEqual(['g']);
  });
});

describe('eviction', () => {
  const entry = (fileId: string, size: number, lastOpenedAt: number | null, kept = false): CacheEntry => ({ fileId, size, lastOpenedAt, kept });

  it('nothing while within the budget', () => {
    expect(planEviction([entry('a', 40, 1), entry('b', 40, 2)], 100)).toEqual({ evict: [], fits: true, usedAfter: 80 });
    expect(planEviction([entry('a', 40, 1), entry('b', 40, 2)], 100, 20)).toEqual({ evict: [], fits: true, usedAfter: 80 });
  });
  it('least recently opened first (never opened counts as oldest), only as many as needed', () => {
    const entries = [entry('recent', 30, 300), entry('never', 30, null), entry('old', 30, 100), entry('middle', 30, 200)];
    expect(planEviction(entries, 100)).toEqual({ evict: ['never'], fits: true, usedAfter: 90 });
    expect(planEviction(entries, 100, 40)).toEqual({ evict: ['never', 'old'], fits: true, usedAfter: 60 });
  });
  it('never evicts files of kept conversations', () => {
    const entries = [entry('kept-old', 50, 1, true), entry('other', 30, 500), entry('kept-new', 50, 2, true)];
    expect(planEviction(entries, 100)).toEqual({ evict: ['other'], fits: true, usedAfter: 100 });
  });
  it('a newcomer that cannot fit evicts nothing for it, but the cache still comes back within the budget', () => {
    const entries = [entry('kept', 60, 1, true), entry('a', 30, 5), entry('b', 30, 9)];
    // 120 used of 100: 'a' goes anyway; 50 more cannot fit even without 'b'.
    expect(planEviction(entries, 100, 50)).toEqual({ evict: ['a'], fits: false, usedAfter: 90 });
  });
  it('kept files alone over the budget: everything else goes, and it says it does not fit', () => {
    expect(planEviction([entry('k', 150, 1, true), entry('o', 10, 1)], 100)).toEqual({ evict: ['o'], fits: false, usedAfter: 150 });
  });
});

describe('summary', () => {
  it('counts kept and other complete files apart, and partial ones', () => {
    expect(
      summarise([
        { size: 10, received: 10, complete: true, kept: true },
        { size: 20, received: 20, complete: true, kept: false },
        { size: 30, received: 5, complete: false, kept: true },
        { size: 40, received: 40, complete: true, kept: true },
      ]),
    ).toEqual({ keptFiles: 2, keptBytes: 50, otherFiles: 1, otherBytes: 20, partialFiles: 1 });
  });
});
