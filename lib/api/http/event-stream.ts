// GET /v1/events/stream: the change feed as Server-Sent Events. Each event is sent as
// `id: <cursor>` + `data: <the event as /v1/events returns it>`, so a reconnecting client's
// Last-Event-ID is its cursor. A comment line goes out every heartbeat interval so proxies and
// the client can tell a quiet stream from a dead one. Backpressure is honoured: a slow reader
// makes the stream stop reading the feed until it catches up.
import { Readable } from 'node:stream';
import { ApiError } from '../errors';
import type { ChangeFeed } from '../domain/events';
import type { EventHub } from '../domain/event-hub';

export const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  // nginx and similar proxies would otherwise buffer the stream.
  'X-Accel-Buffering': 'no',
};

const PAGE = 500;
/** How long a client should wait before reconnecting (the SSE `retry` field). */
const RETRY_MS = 2_000;

export interface EventStreamOptions {
  feed: ChangeFeed;
  hub: EventHub;
  user: string;
  /** Events after this cursor are sent first (already checked: not expired). */
  after: number;
  assetBase: string;
  heartbeatMs: number;
  log?: Pick<Console, 'error'>;
}

export class EventStream extends Readable {
  private cursor: number;
  private dirty = true;
  private reading = false;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: EventStreamOptions) {
    super({ highWaterMark: 256 * 1024 });
    this.cursor = options.after;
    this.push(`retry: ${RETRY_MS}\n: connected\n\n`);
    this.unsubscribe = options.hub.subscribe(options.user, () => this.poke());
    this.heartbeat = setInterval(() => {
      if (!this.ended) this.push(': heartbeat\n\n');
    }, options.heartbeatMs);
    this.heartbeat.unref();
    this.poke();
  }

  /** Ends the stream cleanly (the server is shutting down): the client reconnects, to another instance or this one restarted. */
  endGracefully(): this {
    if (this.ended || this.destroyed) return this;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.push(': server shutting down\n\n');
    this.push(null);
    return this;
  }

  override _read(): void {
    if (this.dirty) void this.drain();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearInterval(this.heartbeat);
    this.unsubscribe();
    callback(error);
  }

  private poke(): void {
    this.dirty = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.reading || this.destroyed) return;
    this.reading = true;
    try {
      while (this.dirty && !this.destroyed && !this.ended) {
        // Stop while the reader is behind; _read() resumes.
        if (this.readableLength >= this.readableHighWaterMark) return;
        this.dirty = false;
        const page = await this.options.feed.page(this.options.user, this.cursor, PAGE, this.options.assetBase);
        if (this.destroyed || this.ended) return;
        for (const event of page.data) this.push(`id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`);
        this.cursor = Number(page.next);
        if (page.has_more) this.dirty = true;
      }
    } catch (error) {
      if (this.destroyed || this.ended) return;
      if (error instanceof ApiError && error.code === 'events_expired') {
        // The stream fell behind the retention: tell the client to relist, then end.
        this.push(`event: error\ndata: ${JSON.stringify(error.body())}\n\n`);
        this.ended = true;
        clearInterval(this.heartbeat);
        this.push(null);
      } else {
        this.options.log?.error('[parley] event stream failed', error);
        this.destroy(error as Error);
      }
    } finally {
      this.reading = false;
    }
  }
}
