// Live updates: GET /v1/events/stream (Server-Sent Events; the change feed's extension), read with
// fetch because EventSource cannot send an Authorization header. Its events are the feed's own
// (`id: <cursor>`, `data: <the event>`), so they are handed to the engine to apply as they are
// (`onEvents`), with the stream's word on where they start: the cursor this connection resumed
// after (its Last-Event-ID), or the event before them on the same connection. The engine applies
// them only if that is the stored feed cursor (pull/feed.ts `applyStreamed`); anything else is a
// poke, and the feed catches up. A message that is not such an event (a server that only pokes,
// data that does not read as an event, an id seen before on this connection) is a poke too, and
// the events after it start from a position the stored cursor can only reach through the feed.
//
// - Resumes where it left off: `Last-Event-ID` is the last event id this stream saw, or — for the
//   first connection — the pull's feed cursor, so nothing committed between a pull and the stream's
//   start is missed.
// - A stream silent for longer than `silenceMs` (the server sends a heartbeat comment every 15 s)
//   is dead even if the socket looks open (a sleeping laptop, a proxy that dropped it): reconnect.
// - Reconnects with backoff and jitter; a stream that delivered data resets the backoff.
// - 401: stops until restart() (sign in again); 404: the server has no stream, stops; 410 or an
//   `event: error` message: the cursor fell behind the feed's retention — tells the engine (whose
//   next pull relists) and reconnects from the pull's fresh cursor.
// - stop() aborts the request at once (sign-out, worker stop); restart() reconnects with the
//   current token.
//
// Parsing: eventsource-parser (a small, well-kept streaming SSE parser); connection handling is
// ours because the browser's EventSource (and clients built on its model) cannot authenticate with
// a header, detect a silent stream, or back off as the sync engine does.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ChangeEvent } from '../../objects';
import type { Clock } from '../core/clock';
import type { FetchLike } from '../core/http';
import { classify } from '../core/classify';
import { backoffDelay } from '../outbox/operations';

export interface LiveDeps {
  fetch: FetchLike;
  baseUrl: string;
  getToken: () => string | null | Promise<string | null>;
  /** Where to resume when this stream has seen no event yet: the pull's feed cursor (or null). */
  getCursor: () => Promise<string | null>;
  /** Something changed after the cursor (a message that is not an event to apply): pull the feed. */
  onPoke: () => void;
  /**
   * Events, in the stream's order, the first right after `after` (the cursor this connection
   * resumed after, or the event before them on it; null: not known). Without it every event is a poke.
   */
  onEvents?: (after: string | null, events: ChangeEvent[]) => void;
  /** The cursor is older than the feed keeps: the next pull must list everything again. */
  onExpired: () => void;
  /** The stream became readable (true) or stopped being so (false). */
  onConnected?: (connected: boolean) => void;
  clock: Clock;
  random?: () => number;
  /** Silence after which a stream counts as dead (default 45 s: three 15 s heartbeats missed). */
  silenceMs?: number;
  backoff?: { baseMs: number; maxMs: number };
}

type Ending = 'ended' | 'failed' | 'unauthenticated' | 'unsupported' | 'expired' | 'stopped';

export const DEFAULT_SILENCE_MS = 45_000;
/** Ids remembered per connection to recognise an event sent twice (an id is never sent twice). */
const REMEMBERED_IDS = 1_000;

export class LiveStream {
  private generation = 0;
  private running = false;
  private abort: AbortController | null = null;
  private sleepTimer: unknown = null;
  private wake: (() => void) | null = null;
  private lastEventId: string | null = null;
  private tokenInUse: string | null = null;
  private isConnected = false;
  /** Connections made so far (for tests and diagnostics). */
  connections = 0;
  /** Messages received so far, events and pokes (for tests and diagnostics). */
  messages = 0;

  constructor(private readonly deps: LiveDeps) {}

  get connected(): boolean {
    return this.isConnected;
  }

  get active(): boolean {
    return this.running;
  }

  /**
   * Starts the stream unless it is already running; a stream waiting to reconnect (backing off)
   * reconnects now — the caller has just reached the server.
   */
  start(): void {
    if (this.running) {
      if (!this.isConnected && this.sleepTimer !== null) this.cutSleep();
      return;
    }
    this.running = true;
    const generation = ++this.generation;
    void this.loop(generation);
  }

  /** Closes the stream now (sign-out, worker stop) and stays closed until start(). */
  stop(): void {
    this.running = false;
    this.generation++;
    this.interrupt();
    this.setConnected(false);
  }

  /** Reconnects at once with the current token (after sign in again, or a new token). */
  restart(): void {
    this.stop();
    this.start();
  }

  /** After a token change: a running stream opened with another token reconnects with this one. */
  async refreshToken(): Promise<void> {
    const token = await this.deps.getToken();
    if (this.running && token !== this.tokenInUse) this.restart();
  }

  private interrupt(): void {
    this.abort?.abort();
    this.abort = null;
    this.cutSleep();
  }

  private cutSleep(): void {
    if (this.sleepTimer !== null) this.deps.clock.clearTimeout(this.sleepTimer);
    this.sleepTimer = null;
    this.wake?.();
    this.wake = null;
  }

  private async loop(generation: number): Promise<void> {
    let failures = 0;
    while (this.running && generation === this.generation) {
      const { ending, delivered } = await this.connectOnce(generation);
      if (generation !== this.generation || ending === 'stopped') return;
      if (ending === 'unauthenticated' || ending === 'unsupported') {
        this.running = false;
        return;
      }
      if (ending === 'expired') {
        this.lastEventId = null;
        this.deps.onExpired();
      }
      failures = delivered ? 1 : failures + 1;
      const { baseMs, maxMs } = this.deps.backoff ?? { baseMs: 1_000, maxMs: 60_000 };
      await this.sleep(backoffDelay(failures, this.deps.random ?? Math.random, baseMs, maxMs));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.sleepTimer = this.deps.clock.setTimeout(() => {
        this.sleepTimer = null;
        this.wake = null;
        resolve();
      }, ms);
    });
  }

  /** One connection, read until it ends; `delivered`: it was healthy for a while (data arrived). */
  private async connectOnce(generation: number): Promise<{ ending: Ending; delivered: boolean }> {
    const { deps } = this;
    const token = await deps.getToken();
    if (!token) return { ending: 'unauthenticated', delivered: false };
    this.tokenInUse = token;
    const after = this.lastEventId ?? (await deps.getCursor());
    if (generation !== this.generation) return { ending: 'stopped', delivered: false };
    const controller = new AbortController();
    this.abort = controller;
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' };
    if (after) headers['Last-Event-ID'] = after;
    const url = new URL('v1/events/stream', deps.baseUrl.endsWith('/') ? deps.baseUrl : `${deps.baseUrl}/`).toString();

    // Dead-stream detection: any byte (a heartbeat comment included) re-arms the timer.
    const silenceMs = deps.silenceMs ?? DEFAULT_SILENCE_MS;
    let silence: unknown = null;
    const arm = () => {
      if (silence !== null) deps.clock.clearTimeout(silence);
      silence = deps.clock.setTimeout(() => controller.abort(), silenceMs);
    };
    // Healthy: an event arrived, or it stayed open for a while (then a drop is news, not a pattern).
    let delivered = false;
    let openedAt = 0;
    let expired = false;
    let unauthenticated = false;
    try {
      arm();
      this.connections++;
      let response: Response;
      try {
        response = await deps.fetch(url, { method: 'GET', headers, signal: controller.signal, cache: 'no-store' });
      } catch {
        return { ending: this.stoppedOr(generation, 'failed'), delivered };
      }
      if (!response.ok) {
        // An answer, not a stream: what it means is classify.ts's (401: stop until a sign-in; a
        // server without the stream: 404/405; a Last-Event-ID past the retention: 410).
        const answer = classify(response.status, response.headers, await response.text().catch(() => ''));
        if (answer.kind === 'unauthenticated') return { ending: 'unauthenticated', delivered };
        if (answer.kind === 'refused' && (answer.status === 404 || answer.status === 405)) return { ending: 'unsupported', delivered };
        if (answer.kind === 'refused' && answer.status === 410) return { ending: 'expired', delivered };
        return { ending: 'failed', delivered };
      }
      if (!response.body) return { ending: 'failed', delivered };
      const reading = new EventRun(after, deps);
      const parser = createParser({
        onEvent: (message) => {
          if (message.event === 'error') {
            // The server ends the stream after it: a revoked token (stop, as a 401 would) or a
            // cursor past the retention (relist, reconnect).
            if (errorCode(message.data) === 'unauthenticated') unauthenticated = true;
            else expired = true;
            return;
          }
          delivered = true;
          this.messages++;
          // A repeat (an id this connection already carried) must not take the resume point back.
          if (reading.take(message) && message.id) this.lastEventId = message.id;
        },
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      if (generation !== this.generation) return { ending: 'stopped', delivered };
      this.setConnected(true);
      openedAt = deps.clock.now();
      const healthy = () => delivered || deps.clock.now() - openedAt >= silenceMs;
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch {
          // Aborted: by stop(), or by the silence timer (a dead stream).
          return { ending: this.stoppedOr(generation, 'failed'), delivered: healthy() };
        }
        if (chunk.done) return { ending: unauthenticated ? 'unauthenticated' : expired ? 'expired' : 'ended', delivered: healthy() };
        arm();
        parser.feed(decoder.decode(chunk.value, { stream: true }));
        // What one read brought goes to the engine together (one transaction for a burst).
        reading.flush();
      }
    } finally {
      if (silence !== null) deps.clock.clearTimeout(silence);
      if (this.abort === controller) this.abort = null;
      controller.abort();
      // A connection of an earlier generation (stopped, restarted) no longer speaks for the stream.
      if (generation === this.generation) this.setConnected(false);
    }
  }

  private stoppedOr(generation: number, ending: Ending): Ending {
    return generation === this.generation && this.running ? ending : 'stopped';
  }

  private setConnected(connected: boolean): void {
    if (this.isConnected === connected) return;
    this.isConnected = connected;
    this.deps.onConnected?.(connected);
  }
}

/**
 * The events of one connection, gathered per read and handed on with where they start. The position
 * is the stream's: the Last-Event-ID it opened with, then each message's id; a message that is not
 * an event to apply, or an id already seen, leaves the position where the stored cursor cannot be
 * without the feed (so what follows is not applied on the stream's word).
 */
class EventRun {
  private position: string | null;
  private run: { after: string | null; events: ChangeEvent[] } | null = null;
  private readonly seen = new Set<string>();

  constructor(
    openedAfter: string | null,
    private readonly deps: Pick<LiveDeps, 'onPoke' | 'onEvents'>,
  ) {
    this.position = openedAfter;
  }

  /** Hands a message on (gathered, or as a poke); false: its id was carried before (a repeat). */
  take(message: EventSourceMessage): boolean {
    const id = message.id || null;
    const repeated = id !== null && (this.seen.has(id) || id === this.position);
    const event = this.deps.onEvents && !repeated ? readEvent(message) : null;
    if (id !== null) this.remember(id);
    if (!event) {
      this.flush();
      // A repeat says nothing new, but what follows it cannot be placed on the stream's word.
      this.position = repeated ? null : id;
      this.deps.onPoke();
      return !repeated;
    }
    this.run ??= { after: this.position, events: [] };
    this.run.events.push(event);
    this.position = event.id;
    return true;
  }

  flush(): void {
    const run = this.run;
    this.run = null;
    if (run) this.deps.onEvents!(run.after, run.events);
  }

  private remember(id: string): void {
    this.seen.add(id);
    if (this.seen.size > REMEMBERED_IDS) this.seen.delete(this.seen.values().next().value!);
  }
}

/** A message as the feed's event (its `id` the message's), or null: then it is only a poke. */
function readEvent(message: EventSourceMessage): ChangeEvent | null {
  if (!message.id || (message.event !== undefined && message.event !== 'message')) return null;
  try {
    const parsed = ChangeEvent.safeParse(JSON.parse(message.data));
    return parsed.success && parsed.data.id === message.id ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The `code` of an `event: error` message's body (the contract's error shape), if it has one. */
function errorCode(data: string): string | null {
  try {
    const body = JSON.parse(data) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : null;
  } catch {
    return null;
  }
}
