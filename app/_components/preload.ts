// The secondary screens and the write path load on first use (ParleyApp, lib/sync/outbox/lazy-client.ts),
// so the first screen does not wait for them. They are fetched as soon as the first screen is idle
// all the same: the user's first write then does not wait for a download, and a page no service
// worker controls yet — the first visit, before the worker took over, or a plain-http origin with
// no service worker — still has them when the network goes (offline right after signing in).
// The mark lets the bench and tests/browser/weight.spec.ts tell the first screen's JavaScript
// from this prefetch.
export const PREFETCH_MARK = 'parley:offline-preload';

// One loader per idle period, each after the one before has loaded: started all at once, their
// chunks' scripts and the modules' evaluation ran as one long task of the main thread (80–160 ms
// with the CPU slowed 4×, in the bench's first-screen scenario) just as the list was being drawn.
const idle = () => new Promise<unknown>((resolve) => ('requestIdleCallback' in window ? requestIdleCallback(resolve, { timeout: 3_000 }) : setTimeout(resolve, 1_000)));

export async function prefetchWhenIdle(loaders: (() => Promise<unknown>)[]): Promise<void> {
  await idle();
  performance.mark(PREFETCH_MARK);
  for (const load of loaders) {
    await load().catch(() => {});
    await idle();
  }
}
