// The secondary screens and the write path load on first use (ParleyApp, lib/sync/outbox/lazy-client.ts),
// so the first screen does not wait for them. They are fetched as soon as the first screen is idle
// all the same: the user's first write then does not wait for a download, and a page no service
// worker controls yet — the first visit, before the worker took over, or a plain-http origin with
// no service worker — still has them when the network goes (offline right after signing in).
// The mark lets the bench and tests/browser/weight.spec.ts tell the first screen's JavaScript
// from this prefetch.
export const PREFETCH_MARK = 'parley:offline-preload';

export function prefetchWhenIdle(loaders: (() => Promise<unknown>)[]): Promise<void> {
  return new Promise<void>((resolve) => {
    const run = () => {
      performance.mark(PREFETCH_MARK);
      void Promise.allSettled(loaders.map((load) => load())).then(() => resolve());
    };
    if ('requestIdleCallback' in window) requestIdleCallback(run, { timeout: 3_000 });
    else setTimeout(run, 1_000);
  });
}
