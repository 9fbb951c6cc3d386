// A clock for engine tests whose timers fire only when the test moves time forward.
import type { Clock } from '../../lib/sync/core/clock';

/**
 * A clock whose timers fire when the test moves time forward; `advance` returns once every sync
 * the fired timers started has finished (the engine's runs are observed through its lock hook).
 */
export class TimerClock implements Clock {
  time = 1_700_000_000_000;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;
  private readonly runs = new Set<Promise<unknown>>();
  now() {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number) {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown) {
    this.timers.delete(handle as number);
  }
  pending() {
    return [...this.timers.values()].map((t) => t.at - this.time).sort((a, b) => a - b);
  }
  /** The engine's `withLock`: every sync run passes through here, so the clock knows when they end. */
  readonly withLock = <T,>(fn: () => Promise<T>): Promise<T> => {
    const run = fn();
    this.runs.add(run);
    void run.finally(() => this.runs.delete(run)).catch(() => {});
    return run;
  };
  /** Until no sync is running (a finished run may start another, e.g. for writes made meanwhile). */
  async idle() {
    for (;;) {
      while (this.runs.size > 0) await Promise.allSettled([...this.runs]);
      // The engine decides on a follow-up run after its promise settles: give it that turn.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.runs.size === 0) return;
    }
  }
  /** Move time forward, firing due timers in order, each followed by the syncs it started. */
  async advance(ms: number) {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].fn();
      await this.idle();
    }
    this.time = end;
  }
}
