// Thumbnails of server files fetched in the background (issue 32 item 13): one at a time, never
// twice, no copy kept (`cache: 'no-store'`), skipped when too large, already made or not a
// picture a worker draws; a failure is remembered and not asked again; nothing while offline or on
// a connection that does not allow it, and a lost connection waits for `resume`.
import { describe, expect, it } from 'vitest';
import { fetchableForThumbnail, RETRY_AFTER_LOST_CONNECTION_MS, THUMBNAIL_SOURCE_MAX_BYTES, thumbnailFetcher, type Outcome, type ThumbnailSource } from '../../lib/view/viewer/thumbnail-fetch';
import type { ConnectionLike } from '../../lib/offline/policy';
import { fittingThumbnail, THUMBNAIL_MAX_BYTES, type Made, type Thumbnailed } from '../../lib/view/viewer/thumbnail-workers';

const file = (id: string, over: Partial<ThumbnailSource> = {}): ThumbnailSource => ({
  id,
  filename: `${id}.png`,
  file_type: 'image/png',
  file_size: 1000,
  file_url: `http://h/files/${id}.png?id=${id}&sig=s`,
  ...over,
});

function setUp(options: { status?: (url: string) => number; make?: (kind: Thumbnailed, blob: Blob) => Promise<Made> } = {}) {
  const fetched: Array<{ url: string; init: RequestInit }> = [];
  const stored = new Map<string, NonNullable<Made>>();
  const outcomes: Array<[string, Outcome]> = [];
  let inFlight = 0;
  let most = 0;
  let online = true;
  let connection: ConnectionLike | null = null;
  let now = 0;
  let networkDown = false;
  const fetcher = thumbnailFetcher({
    async fetch(url, init) {
      fetched.push({ url, init });
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      if (networkDown) throw new TypeError('Failed to fetch');
      const status = options.status?.(url) ?? 200;
      return new Response(status === 200 ? new Uint8Array([1, 2, 3]) : null, { status });
    },
    make: options.make ?? (async () => ({ bytes: new ArrayBuffer(10), type: 'image/webp' })),
    has: async (id) => stored.has(id),
    store: async (id, made) => {
      stored.set(id, made);
    },
    connection: () => connection,
    online: () => online,
    now: () => now,
    onOutcome: (id, outcome) => outcomes.push([id, outcome]),
  });
  return {
    fetcher,
    fetched,
    stored,
    outcomes,
    most: () => most,
    setOnline: (v: boolean) => (online = v),
    setConnection: (c: ConnectionLike | null) => (connection = c),
    setNow: (t: number) => (now = t),
    setNetworkDown: (v: boolean) => (networkDown = v),
  };
}

describe('thumbnails fetched in the background', () => {
  it('fetches one file at a time, in the order listed, without keeping a copy, and stores only the thumbnail', async () => {
    const t = setUp();
    for (const id of ['a', 'b', 'c']) t.fetcher.want(file(id), 'image');
    t.fetcher.want(file('d', { filename: 'd.pdf', file_type: 'application/pdf' }), 'pdf');
    await t.fetcher.idle();
    expect(t.most()).toBe(1);
    expect(t.fetched.map((f) => f.url)).toEqual(['a', 'b', 'c', 'd'].map((id) => file(id).file_url));
    expect(t.fetched.every((f) => f.init.cache === 'no-store')).toBe(true);
    expect([...t.stored.keys()]).toEqual(['a', 'b', 'c', 'd']);
    // Asked again (the list rendered again): already made, not fetched again.
    t.fetcher.want(file('a'), 'image');
    await t.fetcher.idle();
    expect(t.fetched).toHaveLength(4);
    expect(t.outcomes.at(-1)).toEqual(['a', 'had']);
  });

  it('skips files not on the server yet, over the size cap, or SVG', async () => {
    expect(fetchableForThumbnail(file('a'))).toBe(true);
    expect(fetchableForThumbnail(file('a', { file_size: THUMBNAIL_SOURCE_MAX_BYTES }))).toBe(true);
    expect(fetchableForThumbnail(file('a', { file_size: THUMBNAIL_SOURCE_MAX_BYTES + 1 }))).toBe(false);
    expect(fetchableForThumbnail(file('a', { file_url: '' }))).toBe(false);
    expect(fetchableForThumbnail(file('a', { file_type: 'image/svg+xml' }))).toBe(false);
    expect(fetchableForThumbnail(file('a', { filename: 'logo.svg', file_type: '' }))).toBe(false);
    const t = setUp();
    t.fetcher.want(file('big', { file_size: 25 * 1024 * 1024 }), 'image');
    t.fetcher.want(file('queued', { file_url: '' }), 'image');
    await t.fetcher.idle();
    expect(t.fetched).toHaveLength(0);
  });

  it('a failure (404, a damaged file) is remembered: not fetched again this session; a new version is', async () => {
    const t = setUp({
      status: (url) => (url.includes('gone') ? 404 : 200),
      // Not readable (a damaged PDF): no thumbnail.
      make: async () => null,
    });
    t.fetcher.want(file('gone'), 'image');
    t.fetcher.want(file('torn', { filename: 'torn.pdf', file_type: 'application/pdf' }), 'pdf');
    await t.fetcher.idle();
    expect(t.outcomes).toEqual([
      ['gone', 'failed'],
      ['torn', 'failed'],
    ]);
    for (let i = 0; i < 5; i++) {
      t.fetcher.want(file('gone'), 'image');
      t.fetcher.want(file('torn', { filename: 'torn.pdf', file_type: 'application/pdf' }), 'pdf');
      await t.fetcher.idle();
    }
    expect(t.fetched).toHaveLength(2);
    expect(t.fetcher.failed(file('gone').file_url)).toBe(true);
    // Renamed: a new URL, tried once more.
    t.fetcher.want(file('gone', { file_url: 'http://h/files/renamed.png?id=gone&sig=t' }), 'image');
    await t.fetcher.idle();
    expect(t.fetched).toHaveLength(3);
  });

  it('a response that says it is over the cap is not read', async () => {
    const t = setUp();
    const fetcher = thumbnailFetcher({
      fetch: async (url) => {
        t.fetched.push({ url, init: {} });
        return new Response(new Uint8Array(4), { headers: { 'content-length': String(THUMBNAIL_SOURCE_MAX_BYTES + 1) } });
      },
      make: async () => {
        throw new Error('not made');
      },
      has: async () => false,
      store: async () => {},
      connection: () => null,
      online: () => true,
      now: () => 0,
      onOutcome: (id, outcome) => t.outcomes.push([id, outcome]),
    });
    fetcher.want(file('liar'), 'image');
    await fetcher.idle();
    expect(t.outcomes).toEqual([['liar', 'failed']]);
  });

  it('nothing happens offline, with Data Saver, on 2G or on cellular; it goes when that changes', async () => {
    const t = setUp();
    t.setOnline(false);
    expect(t.fetcher.want(file('a'), 'image')).toBe('waiting');
    await t.fetcher.idle();
    t.setOnline(true);
    for (const connection of [{ saveData: true }, { effectiveType: '2g' }, { type: 'cellular' }]) {
      t.setConnection(connection);
      expect(t.fetcher.want(file('b'), 'image')).toBe('waiting');
      t.fetcher.resume();
      await t.fetcher.idle();
    }
    expect(t.fetched).toHaveLength(0);
    expect(t.fetcher.waiting()).toEqual(['a', 'b']);
    t.setConnection({ type: 'wifi', effectiveType: '4g' });
    t.fetcher.resume();
    await t.fetcher.idle();
    expect([...t.stored.keys()]).toEqual(['a', 'b']);
    expect(t.fetcher.want(file('c'), 'image')).toBe('queued');
    expect(t.fetcher.want(file('big', { file_size: 25 * 1024 * 1024 }), 'image')).toBe('skipped');
  });

  it('a file\'s state follows its fetch, and listeners are told: waiting, then failed (skipped) or made (done)', async () => {
    const t = setUp({ status: (url) => (url.includes('bad') ? 404 : 200) });
    const seen: string[] = [];
    const unsubscribe = t.fetcher.subscribe(() => seen.push(`${t.fetcher.stateOf(file('bad'))} ${t.fetcher.stateOf(file('good'))}`));
    t.setConnection({ saveData: true });
    expect(t.fetcher.want(file('bad'), 'image')).toBe('waiting');
    expect(t.fetcher.want(file('good'), 'image')).toBe('waiting');
    expect(t.fetcher.stateOf(file('bad'))).toBe('waiting');
    // Data Saver off: both go; the icon's "waiting" must not outlive the failed fetch.
    t.setConnection(null);
    t.fetcher.resume();
    await t.fetcher.idle();
    expect(t.fetcher.stateOf(file('bad'))).toBe('skipped');
    expect(t.fetcher.stateOf(file('good'))).toBe('done');
    expect(seen.at(-1)).toBe('skipped done');
    expect(seen).not.toContain('waiting waiting'); // told only once the connection allowed it
    unsubscribe();
    t.fetcher.resume();
    expect(seen.at(-1)).toBe('skipped done');
    expect(seen).toHaveLength(3); // resumed, then each file's outcome
  });

  it('a lost connection leaves the file waiting (not failed), with no retry loop, until resumed', async () => {
    const t = setUp();
    t.setNetworkDown(true);
    t.fetcher.want(file('a'), 'image');
    t.fetcher.want(file('b'), 'image');
    await t.fetcher.idle();
    expect(t.fetched).toHaveLength(1);
    expect(t.fetcher.failed(file('a').file_url)).toBe(false);
    expect(t.fetcher.waiting().sort()).toEqual(['a', 'b']);
    // Another file listed soon after: still waiting.
    t.fetcher.want(file('c'), 'image');
    await t.fetcher.idle();
    expect(t.fetched).toHaveLength(1);
    t.setNetworkDown(false);
    // Later, a new ask tries again (as does `resume`, on the browser's 'online').
    t.setNow(RETRY_AFTER_LOST_CONNECTION_MS);
    t.fetcher.want(file('c'), 'image');
    await t.fetcher.idle();
    expect([...t.stored.keys()].sort()).toEqual(['a', 'b', 'c']);
  });

  it('a file no longer listed is not fetched', async () => {
    const t = setUp();
    t.setOnline(false);
    t.fetcher.want(file('a'), 'image');
    t.fetcher.want(file('b'), 'image');
    t.fetcher.forget('a');
    t.setOnline(true);
    t.fetcher.resume();
    await t.fetcher.idle();
    expect(t.fetched.map((f) => f.url)).toEqual([file('b').file_url]);
  });
});

describe('thumbnail weight', () => {
  it('at most 16 KB: a lower quality, then a smaller box; none fits, none kept', async () => {
    const asked: Array<{ size?: number; quality?: number }> = [];
    const weights = [40_000, 20_000, 9_000];
    const made = await fittingThumbnail(async (fit) => {
      asked.push(fit);
      return { bytes: new ArrayBuffer(weights[asked.length - 1] ?? 0), type: 'image/webp' };
    }, 96);
    expect(made?.bytes.byteLength).toBe(9_000);
    expect(asked).toEqual([{}, { quality: 0.5 }, { size: 64, quality: 0.4 }]);
    expect(THUMBNAIL_MAX_BYTES).toBe(16 * 1024);
    expect(await fittingThumbnail(async () => ({ bytes: new ArrayBuffer(THUMBNAIL_MAX_BYTES + 1), type: 'image/webp' }), 96)).toBeNull();
    const once: unknown[] = [];
    expect(
      await fittingThumbnail(async (fit) => {
        once.push(fit);
        return { bytes: new ArrayBuffer(2_000), type: 'image/webp' };
      }, 96),
    ).toMatchObject({ type: 'image/webp' });
    expect(once).toHaveLength(1);
  });
});
