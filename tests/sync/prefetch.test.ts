// @vitest-environment node
// pager.ts: a list fetched ahead of its turn (Prefetch) and the writer's minimum batch. Pure
// control flow over scripted pages; the pull's use of them runs against the real server in
// feed.test.ts.
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../lib/sync/core/http';
import { Prefetch, runPipelined } from '../../lib/sync/pull/pager';

type TestPage = { n: number; last: boolean };
const ok = (page: TestPage): Outcome<TestPage> => ({ kind: 'ok', value: page, replayed: false, serverTime: null }) as Outcome<TestPage>;
const lost = { kind: 'network', message: 'lost' } as Outcome<TestPage>;
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A list of `count` pages; the cursor after page n is String(n). */
function list(count: number, fail: Set<number> = new Set()) {
  const asked: Array<string | null> = [];
  const request = async (after: string | null): Promise<Outcome<TestPage>> => {
    asked.push(after);
    const n = after === null ? 0 : Number(after) + 1;
    return fail.has(n) ? lost : ok({ n, last: n === count - 1 });
  };
  return { asked, request, next: (page: TestPage) => (page.last ? null : String(page.n)) };
}

describe('Prefetch', () => {
  it('fetches ahead up to its limit and hands the pages out by cursor, then goes on', async () => {
    const l = list(5);
    const ahead = new Prefetch(l.request, l.next, 2);
    await tick();
    expect(l.asked).toEqual([null, '0']);
    expect(await ahead.take(null)).toMatchObject({ kind: 'ok', value: { n: 0 } });
    await tick();
    expect(l.asked).toEqual([null, '0', '1']);
    for (const after of ['0', '1', '2', '3']) expect(await ahead.take(after)).toMatchObject({ value: { n: Number(after) + 1 } });
    expect(l.asked).toEqual([null, '0', '1', '2', '3']);
  });

  it('a cursor it did not fetch stops it: the caller fetches from there', async () => {
    const l = list(10);
    const ahead = new Prefetch(l.request, l.next, 3);
    await tick();
    expect(await ahead.take('7')).toBeNull();
    expect(await ahead.take(null)).toBeNull(); // stopped: nothing more is handed out
    await tick();
    expect(l.asked).toEqual([null, '0', '1']);
  });

  it('a failed page is not handed out (the caller asks again, now) and ends the prefetch', async () => {
    const l = list(5, new Set([1]));
    const ahead = new Prefetch(l.request, l.next, 4);
    await tick();
    expect(l.asked).toEqual([null, '0']);
    expect(await ahead.take(null)).toMatchObject({ kind: 'ok' });
    expect(await ahead.take('0')).toBeNull();
    await tick();
    expect(l.asked).toEqual([null, '0']);
  });
});

describe('runPipelined minBatch', () => {
  it('writes whole batches while pages keep coming, and the rest when fetching ends', async () => {
    const l = list(12);
    const batches: number[][] = [];
    const failure = await runPipelined(
      () => l.request(null),
      (page) => {
        const after = l.next(page);
        return after === null ? null : () => l.request(after);
      },
      async (pages) => {
        batches.push(pages.map((p) => p.n));
      },
      { ahead: 12, minBatch: 5 },
    );
    expect(failure).toBeNull();
    expect(batches.flat()).toEqual([...Array(12).keys()]);
    expect(batches.slice(0, -1).every((b) => b.length >= 5)).toBe(true);
  });

  it('a failure writes what came before it, however few', async () => {
    const l = list(12, new Set([3]));
    const written: number[] = [];
    const failure = await runPipelined(
      () => l.request(null),
      (page) => {
        const after = l.next(page);
        return after === null ? null : () => l.request(after);
      },
      async (pages) => {
        written.push(...pages.map((p) => p.n));
      },
      { ahead: 12, minBatch: 5 },
    );
    expect(failure).toMatchObject({ kind: 'network' });
    expect(written).toEqual([0, 1, 2]);
  });
});
