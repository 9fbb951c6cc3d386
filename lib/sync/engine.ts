// The sync engine: push the outbox, then pull, and decide when to go again. Plain TypeScript:
// everything from the outside world (fetch, clock, timers, randomness, the cross-tab lock) is
// handed in, so tests can run it against a real server with injected faults.
import type { ParleyDb } from './db';
import type { FetchLike } from './http';
import { pull, type PullResult } from './pull';
import { push, recoverInflight, type PushResult } from './replay';
import { INITIAL_STATUS, updateStatus } from './status';
import { backoffDelay } from './operations';

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface EngineDeps {
  db: ParleyDb;
  /**
   * Optional second connection to the same database, opened with relaxed durability, for the
   * pull: the mirror can always be pulled again, so it may trade crash-safety for speed. The
   * outbox (user intent) is only written through `db`, which should be strict.
   */
  mirrorDb?: ParleyDb;
  fetch: FetchLike;
  /** Origin (or prefix) that `v1/...` paths are resolved against. */
  baseUrl: string;
  getToken: () => string | null | Promise<string | null>;
  /** Per-request time limit; an answer that does not come in time counts as lost. */
  requestTimeoutMs?: number;
  clock?: Clock;
  random?: () => number;
  /** Runs `fn` while holding the one cross-tab sync lock (navigator.locks in the worker). */
  withLock?: <T>(fn: () => Promise<T>) => Promise<T>;
  backoff?: { baseMs: number; maxMs: number };
  /** Periodic sync while started (ms). */
  periodMs?: number;
  /** Coalesces bursts of local writes into one sync (ms). */
  debounceMs?: number;
}

export interface SyncReport {
  push: PushResult;
  /** Null when the pull was skipped because the push could not reach the server. */
  pull: PullResult | null;
}

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class SyncEngine {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly withLock: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly backoff: { baseMs: number; maxMs: number };
  private running: Promise<SyncReport> | null = null;
  private again = false;
  private timer: unknown = null;
  private debounceTimer: unknown = null;
  private started = false;
  private pullFailures = 0;

  constructor(private readonly deps: EngineDeps) {
    this.clock = deps.clock ?? realClock;
    this.random = deps.random ?? Math.random;
    this.withLock = deps.withLock ?? ((fn) => fn());
    this.backoff = deps.backoff ?? { baseMs: 1_000, maxMs: 5 * 60_000 };
  }

  /**
   * One sync: push everything that can go now, then pull a full pass. Concurrent calls share
   * one run (and ask for one more after it, so a write made during a run is not left behind).
   */
  syncOnce(): Promise<SyncReport> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.withLock(() => this.runLocked()).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runLocked(): Promise<SyncReport> {
    const { db } = this.deps;
    const status = await updateStatus(db, {});
    if (status.needsSignIn) return { push: { kind: 'unauthenticated', message: 'sign in again' }, pull: null };
    await updateStatus(db, { syncing: true });
    try {
      // We hold the lock: nobody else is sending, so anything in flight was orphaned by a
      // replay that died. Its outcome is unknown; replay verifies before sending again.
      await recoverInflight(db);
      const { fetch, baseUrl, getToken, requestTimeoutMs } = this.deps;
      const http = { fetch, baseUrl, getToken, requestTimeoutMs };
      const common = { ...http, db, now: () => this.clock.now() };
      let pushed = await push({ ...common, random: this.random, backoff: this.backoff });
      let pulled: PullResult | null = null;
      if (pushed.kind === 'done' || (pushed.kind === 'waiting' && pushed.reason === 'backoff')) {
        pulled = await pull({ ...common, db: this.deps.mirrorDb ?? db });
        // Writes made while we pulled: push them now rather than at the next trigger.
        if (pulled.kind === 'done' && (await db.outbox.where('state').equals('queued').count()) > 0) {
          pushed = await push({ ...common, random: this.random, backoff: this.backoff });
        }
      }
      await this.recordOutcome(pushed, pulled);
      return { push: pushed, pull: pulled };
    } finally {
      await updateStatus(db, { syncing: false });
    }
  }

  private async recordOutcome(pushed: PushResult, pulled: PullResult | null) {
    const now = this.clock.now();
    const unauthenticated = pushed.kind === 'unauthenticated' || pulled?.kind === 'unauthenticated';
    const offline =
      (pushed.kind === 'waiting' && pushed.reason === 'network') || pulled?.kind === 'network';
    const pullRetryable = pulled !== null && (pulled.kind === 'network' || pulled.kind === 'server' || pulled.kind === 'rate_limited');
    this.pullFailures = pullRetryable ? this.pullFailures + 1 : 0;
    const pushWait = pushed.kind === 'waiting' ? pushed.until : null;
    const pullWait = pullRetryable ? now + backoffDelay(this.pullFailures, this.random, this.backoff.baseMs, this.backoff.maxMs) : null;
    const nextRetryAt = [pushWait, pullWait].filter((t): t is number => t !== null).sort((a, b) => a - b)[0] ?? null;
    const problem =
      pushed.kind === 'waiting' && pushed.reason !== 'backoff'
        ? `${pushed.reason}`
        : pulled && pulled.kind !== 'done' && pulled.kind !== 'unauthenticated'
          ? pulled.message
          : null;
    await updateStatus(this.deps.db, {
      online: !offline,
      needsSignIn: unauthenticated,
      lastError: problem,
      nextRetryAt,
      ...(pulled?.kind === 'done' && pushed.kind === 'done' ? { lastSyncAt: now } : {}),
    });
    if (this.started) this.schedule(unauthenticated ? null : nextRetryAt);
  }

  // ---- Triggers (used by the worker; tests mostly call syncOnce directly) ----

  /** Sync now and then periodically, and after every `requestSync`. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.runAndReschedule();
  }

  stop(): void {
    this.started = false;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    if (this.debounceTimer !== null) this.clock.clearTimeout(this.debounceTimer);
    this.timer = this.debounceTimer = null;
  }

  /** Debounced: local writes, `online`, the tab becoming visible. */
  requestSync(): void {
    if (this.debounceTimer !== null) this.clock.clearTimeout(this.debounceTimer);
    this.debounceTimer = this.clock.setTimeout(() => {
      this.debounceTimer = null;
      void this.runAndReschedule();
    }, this.deps.debounceMs ?? 300);
  }

  /** The browser's own idea of connectivity; going online syncs at once. */
  async setOnline(online: boolean): Promise<void> {
    await updateStatus(this.deps.db, { online });
    if (online) this.requestSync();
  }

  /** After the user signed in again (getToken now returns a good token). */
  async signedIn(): Promise<void> {
    await updateStatus(this.deps.db, { needsSignIn: false });
    this.requestSync();
  }

  /** Forget the persisted status (e.g. on a fresh database). */
  async resetStatus(): Promise<void> {
    await updateStatus(this.deps.db, INITIAL_STATUS);
  }

  private async runAndReschedule(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again && this.started);
    } catch (error) {
      // IndexedDB trouble (e.g. Safari's "connection lost"): try again later rather than die.
      await updateStatus(this.deps.db, { lastError: error instanceof Error ? error.message : String(error) }).catch(() => {});
      if (this.started) this.schedule(this.clock.now() + this.backoff.baseMs);
    }
  }

  private schedule(at: number | null): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    const period = this.deps.periodMs ?? 60_000;
    const delay = at === null ? period : Math.max(0, Math.min(period, at - this.clock.now()));
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.runAndReschedule();
    }, delay);
  }
}
