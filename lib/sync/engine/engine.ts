// The sync engine: push the outbox, then pull, and go again when schedule.ts says. Plain TypeScript:
// everything from the outside world (fetch, clock, timers, randomness, the cross-tab lock) is
// handed in, so tests can run it against a real server with injected faults.
import type { ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import { applyStreamed, readFeed } from '../pull/feed';
import type { ChangeEvent } from '../../objects';
import { advertisesIdempotency, type FetchLike, type HttpDeps, type UploadLike } from '../core/http';
import { Leadership, type LeaderLocks, type OpenTabChannel } from './leader';
import { LiveStream } from './live';
import { pull, type PullDeps, type PullResult } from '../pull/pull';
import { push, recoverInflight, UPLOAD_STALL_MS, type PushResult, type ReplayProbe } from '../outbox/replay';
import { UNSENT_STATES, woken } from '../outbox/lifecycle';
import { UploadProgressWriter } from './upload-progress';
import type { ResumableUploads } from '../outbox/resumable-upload';
import { INITIAL_STATUS, STATUS_KEY, updateStatus } from './status';
import { INITIAL_SCHEDULE, nextRun, timerDelay, type ScheduleContext, type ScheduleState } from './schedule';
import { isConnectionLost, reopen } from '../core/storage';
import { realClock, type Clock } from '../core/clock';
import { Pacer } from '../core/pace';

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
  /**
   * Pace of retries while the server cannot be reached (offline): such failures do not count
   * toward an operation's backoff; these cheap probes (and `online`, the app becoming visible,
   * "Sync now") find the network again. Default 1 s doubling to 5 s.
   */
  reconnect?: { baseMs: number; maxMs: number };
  /** Sends uploads with progress (the worker's XMLHttpRequest); default: fetch, no progress. */
  upload?: UploadLike;
  /**
   * Resumable uploads through tus where the server offers them (resumable-upload.ts
   * `resumableUploads`; the sync worker hands it in, so tus-js-client is loaded there only).
   * Without it uploads are POST /v1/files.
   */
  resumable?: ResumableUploads;
  /**
   * Uploads — tus requests, and POST /v1/files where `upload` reports bytes sent: a request is
   * abandoned after this long without progress or an answer (default 30 s), not after
   * `requestTimeoutMs`.
   */
  uploadStallMs?: number;
  /** Resumable uploads: bytes per PATCH (default 4 MiB). */
  uploadPatchBytes?: number;
  /** Resumable uploads: how often a running transfer looks for the user's cancel (default 250 ms). */
  uploadCancelPollMs?: number;
  /**
   * The stuck-queue watchdog: changes pending, the server reachable, and nothing sent (no
   * operation settled, no upload bytes moved) for this long: the status says so. Default 3 min.
   */
  stuckAfterMs?: number;
  /** Periodic sync while started (ms). */
  periodMs?: number;
  /**
   * Coalesces bursts of local writes into one sync (ms; default 25). Writes of one gesture (a
   * multi-select action) land within it; a person's next gesture is further away, and waiting
   * longer only delays the change on the user's other devices (300 ms was most of a live update's
   * time, issue 30). Writes made while a sync runs go in the run after it, together.
   */
  debounceMs?: number;
  // ---- Pull side: live updates (see live.ts) ----
  /**
   * Open the change feed's live stream while the server has the feed. Each event it carries is
   * applied as it comes when it is the next after the feed cursor, else pulled at once; the periodic
   * sync then slows to `safetyPeriodMs`.
   */
  live?: { silenceMs?: number; backoff?: { baseMs: number; maxMs: number } };
  /** The periodic sync while the live stream is up: a safety net, not the way changes arrive (ms). */
  safetyPeriodMs?: number;
  /** Coalesces pokes of the live stream into one pull (ms). */
  pokeDebounceMs?: number;
  /**
   * Tabs sharing this database (see leader.ts): only the elected leader holds the live stream
   * and polls at `periodMs`; the others push their own writes at once and otherwise sync only
   * at `safetyPeriodMs` (pushed back whenever any tab pulls). Without it this engine leads.
   */
  tabs?: { database: string; locks?: LeaderLocks; openChannel?: OpenTabChannel };
  /** Tuning of the pull (feed page size, scan concurrency); tests use small pages. */
  pullOptions?: Pick<PullDeps, 'feedPageLimit' | 'scanConcurrency'>;
  /** Told of the replay's whole-outbox reads and transactions (replay.ts ReplayProbe; tests count them). */
  replayProbe?: ReplayProbe;
}

export interface SyncReport {
  push: PushResult;
  /** Null when the pull was skipped because the push could not reach the server. */
  pull: PullResult | null;
}

export class SyncEngine {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly withLock: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly backoff: { baseMs: number; maxMs: number };
  private running: Promise<SyncReport> | null = null;
  private again = false;
  private timer: unknown = null;
  private debounceTimer: unknown = null;
  private debounceAt = 0;
  private started = false;
  /** The retry counters (schedule.ts): consecutive failed pulls, and runs that could not reach the server. */
  private pace: ScheduleState = INITIAL_SCHEDULE;
  /** The browser said offline (forwarded by the page): failures then count as "unreachable". */
  private browserOffline = false;
  /** The server answered (or took bytes) during this run: see `reached`. */
  private reachedInRun = false;
  /** `reached`'s status write: awaited before the run's outcome is written, so it never lands after it. */
  private shownReached: Promise<void> = Promise.resolve();
  /** Whether the server's Idempotency header has been recorded already (saves a meta write per response). */
  private idempotencyRecorded = false;
  private readonly reconnect: { baseMs: number; maxMs: number };
  /** Every request of this engine (pull and replay) under the server's rate limit, as its answers tell it. */
  private readonly pacer: Pacer;
  /** Bytes sent of the uploads in flight, written for the UI at most twice a second. */
  private readonly progress: UploadProgressWriter;
  // ---- The stuck-queue watchdog (checkStuck) ----
  private readonly stuckAfterMs: number;
  /** The pending operations (seq) at the last check, and when the queue last moved. */
  private watched = new Set<number>();
  private movedAt: number;
  /** The last sync reached the server (false: offline, which is not "stuck"). */
  private reachable = true;
  private lastProblem: string | null = null;
  private stalledShown = false;
  private watchdogTimer: unknown = null;
  /** When the engine next retries after a failure (null: only the periodic sync is due). */
  private retryAt: number | null = null;
  /** The change feed's live stream (pull side); null unless `deps.live`. Only the leader opens it. */
  readonly live: LiveStream | null;
  /** The election among tabs (while started, with `deps.tabs`). */
  private leadership: Leadership | null = null;
  /** What the last pull found: the server has the change feed (null: no pull yet). */
  private feedSeen: boolean | null = null;
  /** The live stream connected or dropped during a run: its timer is set again when the run ends. */
  private liveChangedWhileRunning = false;
  /** The end of this engine's turns (a sync, a flush, streamed events): one at a time, in order. */
  private lastTurn: Promise<unknown> = Promise.resolve();
  /** Streamed events being applied (settled() waits for them). */
  private streamWork: Promise<unknown> = Promise.resolve();
  /** Runs of streamed events applied as they came, and left to the feed (tests, diagnostics). */
  readonly streamed = { applied: 0, refused: 0 };

  constructor(private readonly deps: EngineDeps) {
    this.clock = deps.clock ?? realClock;
    this.random = deps.random ?? Math.random;
    this.withLock = deps.withLock ?? ((fn) => fn());
    this.backoff = deps.backoff ?? { baseMs: 1_000, maxMs: 5 * 60_000 };
    this.reconnect = deps.reconnect ?? { baseMs: 1_000, maxMs: 5_000 };
    this.pacer = new Pacer(this.clock);
    this.progress = new UploadProgressWriter(deps.db, this.clock, deps.uploadStallMs ?? UPLOAD_STALL_MS);
    this.stuckAfterMs = deps.stuckAfterMs ?? 3 * 60_000;
    this.movedAt = this.clock.now();
    this.live = deps.live
      ? new LiveStream({
          fetch: deps.fetch,
          baseUrl: deps.baseUrl,
          getToken: deps.getToken,
          getCursor: async () => (await readFeed(deps.mirrorDb ?? deps.db))?.cursor ?? null,
          onPoke: () => this.requestPull(),
          onEvents: (after, events) => {
            this.streamWork = Promise.all([this.streamWork, this.applyStreamedEvents(after, events)]).then(() => undefined);
          },
          onExpired: () => this.requestPull(),
          onConnected: () => this.liveChanged(),
          clock: this.clock,
          random: this.random,
          silenceMs: deps.live.silenceMs,
          backoff: deps.live.backoff,
        })
      : null;
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
    this.running = this.turn(() => this.runLocked()).finally(() => {
      this.running = null;
      // The stream came up or went down after the run had set its timer: set it again now, with the
      // period that holds (a safety net while streaming). Between the run's schedule() and here lie
      // the lock's release and the turn's end, which another task can interleave with.
      if (this.liveChangedWhileRunning) {
        this.liveChangedWhileRunning = false;
        this.liveChanged();
      }
    });
    return this.running;
  }

  private async runLocked(): Promise<SyncReport> {
    const { db } = this.deps;
    const status = await updateStatus(db, {});
    if (status.needsSignIn) return { push: { kind: 'unauthenticated', message: 'sign in again' }, pull: null };
    await updateStatus(db, { syncing: true });
    this.reachedInRun = false;
    await this.progress.adopt();
    this.armWatchdog();
    try {
      // We hold the lock: nobody else is sending, so anything in flight was orphaned by a
      // replay that died. Its outcome is unknown; replay verifies before sending again.
      await recoverInflight(db);
      const http = this.httpDeps();
      const common = { ...http, ...this.uploadDeps(), db, now: () => this.clock.now() };
      const onUploadProgress = (fileId: string, sent: number, total: number, resumed?: boolean, onServer?: number) => {
        this.movedAt = this.clock.now(); // bytes moving: a slow upload is not a stuck queue
        this.progress.report(fileId, sent, total, resumed, onServer);
        this.reached();
      };
      const pushAll = () => push({ ...common, random: this.random, backoff: this.backoff, onUploadProgress, probe: this.deps.replayProbe });
      const pullAll = async () => {
        const result = await pull({ ...common, ...this.deps.pullOptions, db: this.deps.mirrorDb ?? db });
        if (result.kind === 'done') {
          this.feedKnown(result.feed === true);
          this.leadership?.announcePulled();
        }
        return result;
      };
      const goesOn = (result: PushResult) => result.kind === 'done' || (result.kind === 'waiting' && result.reason === 'backoff');
      let pushed = await pushAll();
      // The push has settled. If its answers ended an outage, what waited it out goes now, before the pull.
      if (goesOn(pushed) && (await this.answeredAfterOutage())) pushed = await pushAll();
      let pulled: PullResult | null = null;
      if (goesOn(pushed)) {
        pulled = await pullAll();
        if (pulled.kind === 'done' && (await this.answeredAfterOutage())) {
          // The pull's answers ended the outage (the push had nothing it could send): what waited
          // goes now, and a pull after it brings what the server made of it (an upload moves its
          // conversation's last_active_at), so a run that ends done leaves the mirror current.
          pushed = await pushAll();
          if (goesOn(pushed)) pulled = await pullAll();
        } else if (pulled.kind === 'done' && (await db.outbox.where('state').equals('queued').count()) > 0) {
          // Writes made while we pulled: push them now rather than at the next trigger.
          pushed = await pushAll();
        }
      }
      await this.recordOutcome(pushed, pulled);
      return { push: pushed, pull: pulled };
    } finally {
      this.disarmWatchdog();
      await this.progress.clear();
      await updateStatus(db, { syncing: false });
    }
  }

  /**
   * Only the push, under the same lock: what a Background Sync event needs (the app is closed,
   * nobody is looking at the mirror, and the event's time is short). The pull comes with the app.
   */
  async flushOnce(): Promise<PushResult> {
    return this.turn(async () => {
      const { db } = this.deps;
      if ((await updateStatus(db, {})).needsSignIn) return { kind: 'unauthenticated', message: 'sign in again' };
      // A flush is a sync: an open page waits for the lock meanwhile, and says "Syncing…", not
      // "Waiting to sync", while the service worker sends its changes.
      await updateStatus(db, { syncing: true });
      this.reachedInRun = false;
      try {
        await recoverInflight(db);
        // The browser fires the event when connectivity is back: as on \`online\`, every wait ends
        // (the browser retries an event rarely, and not for long).
        await clearWaits(db, this.clock.now(), this.backoff.baseMs);
        const now = () => this.clock.now();
        const pushed = await push({ ...this.httpDeps(), ...this.uploadDeps(), db, now, random: this.random, backoff: this.backoff, probe: this.deps.replayProbe });
        await this.recordOutcome(pushed, null);
        return pushed;
      } finally {
        await updateStatus(db, { syncing: false });
      }
    });
  }

  private uploadDeps() {
    return { resumable: this.deps.resumable, uploadStallMs: this.deps.uploadStallMs, uploadPatchBytes: this.deps.uploadPatchBytes, uploadCancelPollMs: this.deps.uploadCancelPollMs };
  }

  private httpDeps(): HttpDeps {
    const { fetch, baseUrl, getToken, requestTimeoutMs, upload } = this.deps;
    return {
      fetch,
      baseUrl,
      getToken,
      requestTimeoutMs,
      upload,
      isOffline: () => this.browserOffline,
      onResponse: (headers) => {
        this.reached();
        return this.noteServer(headers);
      },
      pacer: this.pacer,
    };
  }

  /**
   * An answer came or upload bytes moved (called from inside a request, while the push or the
   * pull is still at work): the server is reachable now, whatever the last run said. Noted for
   * the run (`answeredAfterOutage` reads it between the run's steps) and, once per run and only
   * if the status said otherwise, shown: the status reads online again at once, not "Offline"
   * beside a climbing upload. The status alone: the outbox and the pace are the run's to change,
   * in order (a write to the outbox here would race the push settling the same operations).
   */
  private reached(): void {
    if (this.reachedInRun || this.browserOffline) return;
    this.reachedInRun = true;
    const { db } = this.deps;
    // A read first (most runs find it online: no write); a write meanwhile that said offline is
    // overridden rightly, the answer came after it.
    this.shownReached = getMeta(db, STATUS_KEY)
      .then((status) => ((status ?? INITIAL_STATUS).online ? undefined : updateStatus(db, { online: true, nextRetryAt: null })))
      .then(
        () => {},
        () => {}, // only for show: the run's outcome is written after it anyway
      );
  }

  /**
   * Between a run's steps (a push or a pull settled): the server answered in this run after an
   * outage (schedule.ts, `answered`)? Then the pace starts over and every wait ends, as on
   * `online`. True when an operation's wait ended (it can go now).
   */
  private async answeredAfterOutage(): Promise<boolean> {
    return this.reachedInRun && (await this.endWaitsIf({ kind: 'answered' }));
  }

  /** What nextRun decides for an event outside a run's outcome: its pace, and whether every wait ends. True when one did. */
  private async endWaitsIf(event: { kind: 'woken' } | { kind: 'answered' }): Promise<boolean> {
    const decision = nextRun(this.pace, event, this.scheduleContext());
    this.pace = decision.state;
    return decision.endWaits === true && (await clearWaits(this.deps.db, this.clock.now(), this.backoff.baseMs)) > 0;
  }

  /** The server advertises idempotency on its responses: record it so uploads skip the snapshot GET. */
  private async noteServer(headers: Headers): Promise<void> {
    if (this.idempotencyRecorded || !advertisesIdempotency(headers)) return;
    await setMeta(this.deps.db, 'serverIdempotency', true);
    this.idempotencyRecorded = true;
  }

  /** After a run (or a flush): what nextRun (schedule.ts) decides is written, and the next run is set. */
  private async recordOutcome(pushed: PushResult, pulled: PullResult | null) {
    await this.shownReached;
    const decision = nextRun(this.pace, { kind: 'ran', push: pushed, pull: pulled }, this.scheduleContext());
    this.pace = decision.state;
    // The browser's word is this engine's (setOnline): one stored by an earlier session is not.
    await updateStatus(this.deps.db, { ...decision.status, noNetwork: this.browserOffline });
    if (decision.reachable !== null) this.reachable = decision.reachable;
    this.lastProblem = decision.status.lastError ?? null;
    await this.checkStuck();
    if (this.started) this.schedule(decision.runAt);
  }

  private scheduleContext(): ScheduleContext {
    return { now: this.clock.now(), random: this.random, backoff: this.backoff, reconnect: this.reconnect };
  }

  // ---- The stuck-queue watchdog ----

  /**
   * Changes are pending, the server is reachable and nothing has moved (no operation left the
   * queue or failed, no upload bytes sent) for `stuckAfterMs`: the status says so, with the last
   * error. Checked after every sync and, during a long one, on a timer. Offline is not "stuck".
   */
  private async checkStuck(): Promise<void> {
    const { db } = this.deps;
    const now = this.clock.now();
    const pending: number[] = await db.outbox.where('state').anyOf(UNSENT_STATES).primaryKeys();
    const before = this.watched;
    this.watched = new Set(pending);
    if (pending.length === 0 || before.size === 0 || [...before].some((seq) => !this.watched.has(seq))) this.movedAt = now;
    const stuck = pending.length > 0 && this.reachable && !this.browserOffline && now - this.movedAt >= this.stuckAfterMs;
    if (!stuck) {
      if (this.stalledShown) await updateStatus(db, { stalled: null });
      this.stalledShown = false;
      return;
    }
    // The operation's own error (e.g. the server's 503 message) says more than the sync's summary.
    const erring = await db.outbox.where('state').anyOf(UNSENT_STATES).filter((op) => op.error !== null).first();
    await updateStatus(db, { stalled: { since: this.movedAt, error: erring?.error?.message ?? this.lastProblem } });
    this.stalledShown = true;
  }

  private armWatchdog(): void {
    this.disarmWatchdog();
    this.watchdogTimer = this.clock.setTimeout(() => {
      void this.checkStuck().catch(() => {});
      this.armWatchdog();
    }, Math.max(1_000, this.stuckAfterMs / 3));
  }

  private disarmWatchdog(): void {
    if (this.watchdogTimer !== null) this.clock.clearTimeout(this.watchdogTimer);
    this.watchdogTimer = null;
  }

  // ---- Triggers (used by the worker; tests mostly call syncOnce directly) ----

  /** Sync now and then periodically, and after every `requestSync`. */
  start(): void {
    if (this.started) return;
    const { tabs } = this.deps;
    if (tabs) {
      // Before `started`: a lead granted at once needs nothing more than the first sync below.
      this.leadership = new Leadership({ ...tabs, onLeading: () => this.becameLeader(), onPulled: () => this.otherTabPulled() });
      this.leadership.start();
    }
    this.started = true;
    void this.runAndReschedule();
  }

  stop(): void {
    this.started = false;
    this.disarmWatchdog();
    this.leadership?.stop();
    this.leadership = null;
    this.live?.stop();
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    if (this.debounceTimer !== null) this.clock.clearTimeout(this.debounceTimer);
    this.timer = this.debounceTimer = null;
  }

  /** Debounced: local writes, `online`, the tab becoming visible. */
  requestSync(delayMs = this.deps.debounceMs ?? 25): void {
    const at = this.clock.now() + delayMs;
    // A sync already due sooner (e.g. for a poke) covers this request too.
    if (this.debounceTimer !== null && this.debounceAt <= at) return;
    if (this.debounceTimer !== null) this.clock.clearTimeout(this.debounceTimer);
    this.debounceAt = at;
    this.debounceTimer = this.clock.setTimeout(() => {
      this.debounceTimer = null;
      void this.runAndReschedule();
    }, delayMs);
  }

  /**
   * Runs `fn` after this engine's earlier turns, holding the cross-tab lock: a sync, a flush and
   * streamed events never interleave (here, or with another tab's sync) — an answer the push records
   * must not land after newer news the stream brought, and a pull reads the cursor it follows once.
   */
  private turn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lastTurn.then(() => this.withLock(fn));
    this.lastTurn = run.catch(() => {});
    return run;
  }

  // ---- Pull side: live updates. The stream's events are applied as they come when they are the
  // next after the feed cursor (feed.ts `applyStreamed`); anything else pokes, and the pull follows
  // the feed. ----

  /**
   * Events the live stream carried, the first right after `after` (its word): applied in one
   * transaction if `after` is the stored feed cursor (checked in that transaction, in this engine's
   * turn); otherwise — the feed went further, the stream is ahead of what was applied, a listing
   * is under way, or the write failed — the feed catches up.
   */
  private async applyStreamedEvents(after: string | null, events: ChangeEvent[]): Promise<void> {
    if (!this.started) return;
    const db = this.deps.mirrorDb ?? this.deps.db;
    const applied = after !== null && (await this.turn(() => applyStreamed({ db, now: () => this.clock.now() }, after, events)).catch(() => false));
    if (applied) {
      this.streamed.applied++;
      this.leadership?.announcePulled();
    } else {
      this.streamed.refused++;
      this.requestPull();
    }
  }

  /** Resolves once everything handed to this engine so far (syncs, streamed events) has had its turn. */
  async settled(): Promise<void> {
    await Promise.all([this.lastTurn, this.streamWork]);
  }

  /** Something changed on the server (a live-stream poke): pull soon, coalescing a burst. */
  requestPull(): void {
    if (this.started) this.requestSync(this.deps.pokeDebounceMs ?? 50);
  }

  /** After each successful pull: the leader's stream runs while the server has the feed. */
  private feedKnown(feed: boolean): void {
    this.feedSeen = feed;
    if (!this.live) return;
    if (feed && this.started && this.leading) this.live.start();
    else if (!feed) this.live.stop();
  }

  /** Without `deps.tabs` every engine leads (one tab, tests, the service worker's flush). */
  private get leading(): boolean {
    return this.leadership ? this.leadership.leading : true;
  }

  /**
   * The tab that held the stream closed (or this is the first tab). The stream resumes from the
   * feed cursor, so what changed meanwhile arrives as its first events; before any pull, a sync
   * finds out whether the server has the feed (and starts it).
   */
  private becameLeader(): void {
    if (!this.started) return;
    if (this.feedSeen && this.live) {
      this.live.start();
      this.schedule(this.retryAt); // the leader's period, not a follower's
    } else this.requestSync(0);
  }

  /**
   * Another tab pulled: the mirror is current, so this tab's periodic pull starts its wait again
   * (a retry that is due keeps its time). A leader's stream waiting to reconnect tries now: the
   * server was just reachable.
   */
  private otherTabPulled(): void {
    if (!this.started) return;
    if (this.leading && this.live?.active) this.live.start();
    if (this.running === null && this.debounceTimer === null && this.retryAt === null) this.schedule(null);
  }

  /**
   * The stream came up or went down: the period changes (a safety poll, or the normal one); a
   * retry already due keeps its time. A stream that comes up proves the server reachable: work
   * waiting for a retry goes now.
   */
  private liveChanged(): void {
    if (!this.started) return;
    if (this.running) {
      this.liveChangedWhileRunning = true;
      return;
    }
    if (this.live?.connected && this.retryAt !== null) this.requestSync();
    else this.schedule(this.retryAt);
  }

  /** The browser's own idea of connectivity (forwarded by the page); going online syncs at once. */
  async setOnline(online: boolean): Promise<void> {
    this.browserOffline = !online;
    await updateStatus(this.deps.db, { online, noNetwork: !online });
    if (online) await this.wake();
  }

  /**
   * The network is back, the user returned to the app, or pressed "Sync now": every wait ends.
   * The operations' backoffs (nextAttemptAt) and the engine's retry timer are cleared and a sync
   * starts at once. An operation whose outcome is unknown is still verified before it is resent.
   */
  async wake(): Promise<void> {
    const now = this.clock.now();
    await this.endWaitsIf({ kind: 'woken' });
    if (this.retryAt !== null && this.retryAt > now) this.retryAt = null;
    this.requestSync(0); // runAt: now
  }

  /** "Sync now": end every wait, then sync and report. */
  async syncNow(): Promise<SyncReport> {
    await this.endWaitsIf({ kind: 'woken' });
    return this.syncOnce();
  }

  /** After the user signed in again (getToken now returns a good token). */
  async signedIn(): Promise<void> {
    await updateStatus(this.deps.db, { needsSignIn: false });
    // A stream opened with the old token (or stopped by its 401) reconnects with the new one.
    await this.live?.refreshToken();
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
      // A lost connection stays closed in Dexie 4 unless it is opened again.
      if (isConnectionLost(error)) {
        for (const db of new Set([this.deps.db, this.deps.mirrorDb ?? this.deps.db])) await reopen(db).catch(() => {});
      }
      const decision = nextRun(this.pace, { kind: 'threw', message: error instanceof Error ? error.message : String(error) }, this.scheduleContext());
      this.pace = decision.state;
      await updateStatus(this.deps.db, decision.status).catch(() => {});
      if (this.started) this.schedule(decision.runAt);
    }
  }

  private schedule(at: number | null): void {
    this.retryAt = at;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    // A follower's timer is a safety net too: the leader polls (or streams) for every tab.
    const slow = this.live?.connected || !this.leading;
    const period = slow ? (this.deps.safetyPeriodMs ?? 10 * 60_000) : (this.deps.periodMs ?? 60_000);
    const delay = timerDelay(at, this.clock.now(), period);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.runAndReschedule();
    }, delay);
  }
}

/**
 * Brings every queued operation's next attempt forward to `now` (see SyncEngine.wake), as
 * lifecycle.ts `woken` says (an upload being verified keeps its wait, up to `settleMs` from now).
 */
export async function clearWaits(db: ParleyDb, now: number, settleMs: number): Promise<number> {
  const idempotent = (await getMeta(db, 'serverIdempotency')) === true;
  return db.outbox
    .where('state')
    .equals('queued')
    .filter((op) => op.nextAttemptAt > now)
    .modify((op) => {
      Object.assign(op, woken(op, now, { idempotent, settleMs }));
    });
}
