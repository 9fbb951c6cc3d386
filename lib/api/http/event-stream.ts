// GET /v1/events/stream: the change feed as Server-Sent Events. Each event is sent as
// `id: <cursor>` + `data: <the event as /v1/events returns it>`, so a reconnecting client's
// Last-Event-ID is its cursor. A comment line goes out every heartbeat interval so proxies and
// the client can tell a quiet stream from a dead one.
//
// The feed is read by the user's channel (domain/event-hub.ts), one read per change for all of the
// user's streams here; a stream behind the channel (a backlog, a slow client) reads its own pages
// until it catches up. Backpressure is honoured: a stream whose buffer is full takes nothing more
// and reads on when its client has read (`_read`) — every page it reads is followed by a look at
// whether there is more to read and room for it, never by waiting for another `_read`.
import { Readable } from 'node:stream';
import { ApiError, unauthenticated } from '../errors';
import type { EventHub, LiveSubscriber } from '../domain/event-hub';
import type { FeedRead } from '../domain/events';

export const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  // nginx and similar proxies would otherwise buffer the stream.
  'X-Accel-Buffering': 'no',
};

/** How long a client should wait before reconnecting (the SSE `retry` field). */
const RETRY_MS = 2_000;

export interface EventStreamOptions {
  hub: EventHub;
  user: string;
  /** The bearer token the stream was opened with: re-checked while it is open (null: never). */
  token: string | null;
  /** Events after this seq are sent first (already checked: not expired, issued to this user). */
  after: number;
  assetBase: string;
  heartbeatMs: number;
  log?: Pick<Console, 'error'>;
}

export class EventStream extends Readable implements LiveSubscriber {
  readonly user: string;
  readonly token: string | null;
  readonly assetBase: string;
  private position: number;
  private catchingUp = false;
  /**
   * Node asked for more (`_read`) and nothing was pushed since. Node calls `_read` before it takes
   * what it reads out of the buffer (readableLength still counts it), and not again until a push:
   * such a request must be answered with data, whatever the buffer's length says.
   */
  private wanted = false;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly detach: () => void;

  constructor(private readonly options: EventStreamOptions) {
    super({ highWaterMark: 256 * 1024 });
    this.user = options.user;
    this.token = options.token;
    this.assetBase = options.assetBase;
    this.position = options.after;
    this.push(`retry: ${RETRY_MS}\n: connected\n\n`);
    this.heartbeat = setInterval(() => {
      if (!this.ended) this.send(': heartbeat\n\n');
    }, options.heartbeatMs);
    this.heartbeat.unref();
    this.detach = options.hub.attach(this);
  }

  get cursor(): number {
    return this.position;
  }

  /** Ends the stream cleanly (the server is shutting down): the client reconnects, to another instance or this one restarted. */
  endGracefully(): this {
    return this.finish(': server shutting down\n\n');
  }

  override _read(): void {
    this.wanted = true;
    this.catchUp();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearInterval(this.heartbeat);
    this.detach();
    callback(error);
  }

  // --- LiveSubscriber: what the user's channel calls ---

  ready(): boolean {
    return !this.catchingUp && !this.ended && !this.destroyed && this.hasRoom();
  }

  receive(read: FeedRead, rendered: (assetBase: string) => Buffer | null): void {
    if (this.ended || this.destroyed) return;
    const chunk = this.position === read.after ? rendered(this.assetBase) : this.options.hub.sse(read, this.assetBase, this.position);
    if (chunk) this.send(chunk);
    this.position = Math.max(this.position, read.next);
  }

  fallBehind(): void {
    this.catchUp();
  }

  fail(error: unknown): void {
    if (this.ended || this.destroyed) return;
    if (error instanceof ApiError && error.code === 'events_expired') {
      // The stream fell behind the retention: tell the client to relist, then end.
      this.finish(`event: error\ndata: ${JSON.stringify(error.body())}\n\n`);
    } else {
      this.options.log?.error('[parley] event stream failed', error);
      this.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }

  revoke(): void {
    const error = unauthenticated('This token is no longer accepted');
    this.finish(`event: error\ndata: ${JSON.stringify(error.body())}\n\n`);
  }

  private send(chunk: string | Buffer): void {
    this.wanted = false;
    this.push(chunk);
  }

  /** Room for another page: Node asked for data, or the buffer is below its mark. */
  private hasRoom(): boolean {
    return this.wanted || this.readableLength < this.readableHighWaterMark;
  }

  private finish(last: string): this {
    if (this.ended || this.destroyed) return this;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.detach();
    this.push(last);
    this.push(null);
    return this;
  }

  /**
   * Reads its own pages while it is behind the channel's tail and its buffer has room. After each
   * page it looks again (more to read? room?) rather than waiting for a `_read` that Node does not
   * repeat while nothing was pushed.
   */
  private catchUp(): void {
    if (!this.catchingUp) void this.catchUpLoop();
  }

  private async catchUpLoop(): Promise<void> {
    // The flag is cleared in the same synchronous step as the last look at the tail: a page the
    // channel hands out meanwhile finds the stream either catching up (it reads that page itself)
    // or ready.
    this.catchingUp = true;
    try {
      while (!this.ended && !this.destroyed) {
        if (!this.hasRoom()) return; // _read() comes back when the client has read
        if (this.position >= this.options.hub.tailOf(this.user)) return; // caught up: the channel hands it its pages
        const before = this.position;
        const read = await this.options.hub.readFeed(this.user, this.position, 'stream');
        if (this.ended || this.destroyed) return;
        const chunk = this.options.hub.sse(read, this.assetBase, this.position);
        if (chunk) this.send(chunk);
        this.position = Math.max(this.position, read.next);
        if (this.position === before && !read.hasMore) return; // nothing there after all (looks again when poked)
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.catchingUp = false;
    }
  }
}
