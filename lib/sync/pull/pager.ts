// Fetching and writing at the same time. A list is paged by cursor (each request needs the previous
// page), so pages cannot be fetched in parallel — but the next page can be on its way while the
// last one is written to IndexedDB, and pages that arrived meanwhile are written together, in one
// transaction. `runPipelined` does that for any sequence of requests; `runConcurrently` does it for
// independent jobs (the per-conversation scan), a few in flight.
import type { Outcome } from '../core/http';

export type Failure = Exclude<Outcome<unknown>, { kind: 'ok' }>;

/** A promise to wait on, and the function that settles it (a one-shot wake-up). */
class Signal {
  private waiting: (() => void) | null = null;
  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
  fire(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }
}

export interface PipelineOptions {
  /** Pages fetched ahead of the writer, at most (bounds memory). */
  ahead?: number;
  /**
   * Pages the writer waits for before writing (unless fetching has ended): each transaction has a
   * fixed cost (and every commit wakes the UI's live queries), so a fast network should not make
   * it write page by page. At most `ahead`.
   */
  minBatch?: number;
  /** Pages written in one transaction, at most (default: all that arrived). */
  maxBatch?: number;
  /** Called once every page has been fetched (not on a failure): the server is free for other work. */
  onFetched?: () => void;
}

/**
 * Fetches `first()`, then `next(page)` until it returns null, while `write` stores the pages
 * received so far (several at once when the writer is the slower side). Returns the failure that
 * stopped fetching, if any — after everything fetched before it was written. A `write` that throws
 * stops the fetching too, and the error is rethrown.
 */
export async function runPipelined<P>(
  first: () => Promise<Outcome<P>>,
  next: (page: P) => (() => Promise<Outcome<P>>) | null,
  write: (pages: P[]) => Promise<void>,
  options: PipelineOptions = {},
): Promise<Failure | null> {
  const ahead = options.ahead ?? 4;
  const minBatch = Math.min(ahead, options.minBatch ?? 1);
  const queue: P[] = [];
  const arrived = new Signal();
  const room = new Signal();
  let failure: Failure | null = null;
  let finished = false;
  let stopped = false;

  const fetcher = (async () => {
    try {
      let request: (() => Promise<Outcome<P>>) | null = first;
      while (request && !stopped) {
        while (queue.length >= ahead && !stopped) await room.wait();
        if (stopped) break;
        const out: Outcome<P> = await request();
        if (out.kind !== 'ok') {
          failure = out;
          break;
        }
        queue.push(out.value);
        arrived.fire();
        request = next(out.value);
      }
      if (!request && !stopped) options.onFetched?.();
    } finally {
      finished = true;
      arrived.fire();
    }
  })();

  try {
    for (;;) {
      if (queue.length < minBatch && !finished) {
        await arrived.wait();
        continue;
      }
      if (queue.length === 0) break;
      const batch = queue.splice(0, options.maxBatch ?? queue.length);
      room.fire();
      await write(batch);
    }
  } catch (error) {
    stopped = true;
    room.fire();
    await fetcher.catch(() => {});
    throw error;
  }
  await fetcher;
  return failure;
}

/**
 * Runs `job` over `items` with at most `concurrency` in flight, handing finished results to
 * `write` in batches of `batchSize` (the last one smaller), while further jobs run.
 * `shouldContinue` is asked before each new job starts (e.g. "are files still unplaced?").
 * The first failure stops new jobs from starting; the results of the jobs in flight are still
 * written, then the failure is returned.
 */
export async function runConcurrently<I, R>(
  items: readonly I[],
  job: (item: I) => Promise<{ result: R | null; failure: Failure | null }>,
  write: (results: R[]) => Promise<void>,
  options: { concurrency: number; batchSize: number; shouldContinue?: () => boolean },
): Promise<Failure | null> {
  const done: R[] = [];
  const arrived = new Signal();
  let next = 0;
  let running = 0;
  let failure: Failure | null = null;
  let stopped = false;

  const worker = async () => {
    while (!stopped && failure === null && next < items.length && (options.shouldContinue?.() ?? true)) {
      const item = items[next++];
      running++;
      try {
        const out = await job(item);
        if (out.result !== null) done.push(out.result);
        if (out.failure && !failure) failure = out.failure;
      } finally {
        running--;
        arrived.fire();
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, options.concurrency) }, () => worker());
  const all = Promise.all(workers).then(() => arrived.fire());

  try {
    for (;;) {
      const idle = running === 0 && (failure !== null || next >= items.length || !(options.shouldContinue?.() ?? true));
      // Whole batches while jobs are running: a transaction has a fixed cost, so many small ones
      // would make IndexedDB the bottleneck.
      if (done.length === 0 || (done.length < options.batchSize && !idle)) {
        if (idle) break;
        await arrived.wait();
        continue;
      }
      await write(done.splice(0, options.batchSize));
    }
  } catch (error) {
    stopped = true;
    await all.catch(() => {});
    throw error;
  }
  await all;
  if (done.length > 0) await write(done.splice(0));
  return failure;
}

/**
 * A cursor-paged list fetched ahead of its turn, while something else runs (the files listing of
 * a first sync while the conversations are listed and written): pages are requested one after
 * another, at most `limit` held unread, and handed out by the cursor they answer (`take`). A
 * page asked for that was not fetched ahead (the list was resumed elsewhere, or the prefetch fell
 * behind) stops it: the caller fetches from there itself. A prefetched failure is not handed out
 * (the caller asks again, now), and stops the prefetch.
 */
export class Prefetch<P> {
  private readonly held = new Map<string, Promise<Outcome<P>>>();
  private readonly room = new Signal();
  private stopped = false;
  /** Pages requested so far (tests). */
  requested = 0;

  constructor(
    private readonly request: (after: string | null) => Promise<Outcome<P>>,
    /** The cursor of the page after this one; null at the end of the list. */
    private readonly after: (page: P) => string | null,
    private readonly limit: number,
  ) {
    void this.run().catch(() => this.stop());
  }

  private async run(): Promise<void> {
    let after: string | null = null;
    while (!this.stopped) {
      while (this.held.size >= this.limit && !this.stopped) await this.room.wait();
      if (this.stopped) return;
      const out = this.request(after);
      this.requested++;
      this.held.set(keyOf(after), out);
      const page = await out;
      if (page.kind !== 'ok') return;
      const next = this.after(page.value);
      if (next === null) return;
      after = next;
    }
  }

  /** The page answering `after`, if it was fetched (or is on its way) and succeeded; else null. */
  async take(after: string | null): Promise<Outcome<P> | null> {
    const held = this.stopped ? undefined : this.held.get(keyOf(after));
    if (!held) {
      this.stop();
      return null;
    }
    this.held.delete(keyOf(after));
    this.room.fire();
    const out = await held;
    if (out.kind === 'ok') return out;
    this.stop();
    return null;
  }

  stop(): void {
    this.stopped = true;
    this.held.clear();
    this.room.fire();
  }
}

const keyOf = (after: string | null) => (after === null ? '' : `>${after}`);
