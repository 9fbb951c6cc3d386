// The live streams (GET /v1/events/stream) of this process, and what wakes them.
//
// Publishers: this process after each write it answered, and — with PostgreSQL — every instance's
// commits, through LISTEN/NOTIFY (storage/pg-notifications.ts). A publish is only a poke ("something
// changed for this user"): a lost or duplicated poke costs a query, never an event.
//
// One channel per user holds that user's streams and reads the feed for all of them: a poke makes
// ONE read from the channel's tail (pokes arriving while it runs make one more, not one each), and
// every stream that is caught up — at or past where that read started, with room in its buffer —
// is handed the same rendered page. A stream that is behind (it opened with a backlog, or its
// client reads slowly) reads its own pages from its own cursor, as fast as its client takes them,
// until it reaches the channel's tail; then it is handed the channel's pages again.
//
// The hub also enforces the per-instance caps (MAX_STREAMS_PER_USER, MAX_STREAMS) and re-checks
// the streams' tokens every STREAM_TOKEN_RECHECK_MS against the database (one query for all of
// this instance's distinct tokens), ending a stream whose token is no longer accepted.
import { tooManyStreams } from '../errors';
import type { ChangeFeed, FeedRead } from './events';

/** Events per read (the channel's and a catching-up stream's). */
export const STREAM_PAGE = 500;
/**
 * How long a channel gathers pokes before it reads: under a flood of one user's writes (hundreds a
 * second) its streams cost at most one read per window, not one per write, while a single change
 * still reaches them well within the half second live updates promise.
 */
export const COALESCE_MS = 20;
/** Retry-After of a refused stream: by then another of the user's streams may have closed. */
const STREAM_RETRY_AFTER_SECONDS = 30;

/** What the hub needs of a live stream (http/event-stream.ts). */
export interface LiveSubscriber {
  readonly user: string;
  /** The bearer token it was opened with (null: not re-checked). */
  readonly token: string | null;
  readonly assetBase: string;
  /** Every event up to this seq has been sent to it (or skipped, being superseded). */
  readonly cursor: number;
  /** Can take a page from the channel now: not reading pages of its own, room in its buffer. */
  ready(): boolean;
  /** The channel's read after `read.after`: the events after its cursor, rendered (`rendered` when it is at read.after). */
  receive(read: FeedRead, rendered: (assetBase: string) => Buffer | null): void;
  /** The channel moved on without it: catch up from its own cursor (when its client reads). */
  fallBehind(): void;
  /** The channel's read failed (events_expired, or the database): end. */
  fail(error: unknown): void;
  /** Its token is no longer accepted: end with an `unauthenticated` error event. */
  revoke(): void;
}

export interface EventHubOptions {
  feed: ChangeFeed;
  /** Who each token belongs to now (null: refused), bypassing any cache. */
  recheck?: (tokens: string[]) => Promise<Map<string, string | null>>;
  tokenRecheckMs?: number;
  maxPerUser?: number;
  maxTotal?: number;
  log?: Pick<Console, 'error'>;
}

/** Feed reads made for live streams, for tests and diagnostics. */
export interface HubStats {
  /** Reads made by channels (one per poke, coalesced, shared by the caught-up streams). */
  channelReads: number;
  /** Pages read by streams catching up on their own. */
  catchUpReads: number;
  /** Token re-check rounds completed (each one query for all distinct tokens). */
  tokenRechecks: number;
}

class UserChannel {
  readonly streams = new Set<LiveSubscriber>();
  /** Everything up to here has been read by this channel (or was already known when it opened). */
  tail: number;
  private dirty = false;
  private reading = false;
  private scheduled: NodeJS.Timeout | null = null;

  constructor(
    private readonly hub: EventHub,
    readonly user: string,
    tail: number,
  ) {
    this.tail = tail;
  }

  poke(): void {
    this.dirty = true;
    if (this.reading || this.scheduled) return;
    this.scheduled = setTimeout(() => {
      this.scheduled = null;
      void this.run();
    }, COALESCE_MS);
  }

  private async run(): Promise<void> {
    this.reading = true;
    try {
      let more = true;
      while (more && this.dirty && this.streams.size > 0) {
        this.dirty = false;
        const read = await this.hub.readFeed(this.user, this.tail, 'channel');
        this.tail = Math.max(this.tail, read.next);
        this.deliver(read);
        more = read.hasMore;
        if (more) this.dirty = true;
      }
    } catch (error) {
      for (const stream of [...this.streams]) stream.fail(error);
    } finally {
      this.reading = false;
      // Pokes that came during the read wait for the next window too (a backlog page does not).
      if (this.dirty && this.streams.size > 0) this.poke();
    }
  }

  /** The last stream left: nothing to read for. */
  close(): void {
    if (this.scheduled) clearTimeout(this.scheduled);
    this.scheduled = null;
  }

  private deliver(read: FeedRead): void {
    const rendered = new Map<string, Buffer | null>();
    const renderAt = (assetBase: string) => {
      if (!rendered.has(assetBase)) rendered.set(assetBase, this.hub.sse(read, assetBase, read.after));
      return rendered.get(assetBase)!;
    };
    for (const stream of [...this.streams]) {
      if (stream.cursor >= read.next) continue; // ahead of this read (it caught up on its own)
      if (stream.cursor < read.after || !stream.ready()) stream.fallBehind();
      else stream.receive(read, renderAt);
    }
  }
}

export class EventHub {
  private readonly channels = new Map<string, UserChannel>();
  private total = 0;
  private timer: NodeJS.Timeout | null = null;
  private rechecking = false;
  readonly stats: HubStats = { channelReads: 0, catchUpReads: 0, tokenRechecks: 0 };

  constructor(private readonly options: EventHubOptions | null = null) {}

  /** Refuses (429) a new stream of `user` over a cap; call it right before `attach`, with no await between. */
  admit(user: string): void {
    const maxPerUser = this.options?.maxPerUser ?? Infinity;
    const maxTotal = this.options?.maxTotal ?? Infinity;
    if ((this.channels.get(user)?.streams.size ?? 0) >= maxPerUser) {
      throw tooManyStreams(`At most ${maxPerUser} live streams per user are open at once here; close one, or retry later`, STREAM_RETRY_AFTER_SECONDS);
    }
    if (this.total >= maxTotal) {
      throw tooManyStreams('This server has as many live streams open as it takes; retry later', STREAM_RETRY_AFTER_SECONDS);
    }
  }

  /** A new stream, at its (checked) cursor. Returns what it detaches with. */
  attach(stream: LiveSubscriber): () => void {
    let channel = this.channels.get(stream.user);
    const fresh = !channel;
    if (!channel) this.channels.set(stream.user, (channel = new UserChannel(this, stream.user, stream.cursor)));
    channel.streams.add(stream);
    this.total++;
    this.startRechecks();
    // A new channel knows nothing after its tail: it reads once (the backlog, if any).
    if (fresh) channel.poke();
    else stream.fallBehind(); // behind the tail: catch up; at or past it: nothing to do
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      channel.streams.delete(stream);
      this.total--;
      if (channel.streams.size === 0 && this.channels.get(stream.user) === channel) {
        channel.close();
        this.channels.delete(stream.user);
      }
      if (this.total === 0) this.stopRechecks();
    };
  }

  /** Where the channel of `user` has read to (streams at or past it are handed its pages). */
  tailOf(user: string): number {
    return this.channels.get(user)?.tail ?? -1;
  }

  publish(user: string): void {
    this.channels.get(user)?.poke();
  }

  /** After notifications may have been missed (a dropped LISTEN connection): everyone looks again. */
  publishAll(): void {
    for (const channel of [...this.channels.values()]) channel.poke();
  }

  /** Open streams, for tests and shutdown. */
  get size(): number {
    return this.total;
  }

  /** Open streams of one user. */
  streamsOf(user: string): number {
    return this.channels.get(user)?.streams.size ?? 0;
  }

  /** One page of the feed for a channel or a catching-up stream. */
  async readFeed(user: string, after: number, by: 'channel' | 'stream'): Promise<FeedRead> {
    if (by === 'channel') this.stats.channelReads++;
    else this.stats.catchUpReads++;
    return this.feed.read(user, after, STREAM_PAGE);
  }

  /** The events of `read` after `since` as SSE messages (null: none). */
  sse(read: FeedRead, assetBase: string, since: number): Buffer | null {
    const events = this.feed.render(read, assetBase, since);
    if (events.length === 0) return null;
    let text = '';
    for (const event of events) text += `id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`;
    return Buffer.from(text);
  }

  private get feed(): ChangeFeed {
    if (!this.options) throw new Error('this EventHub has no feed');
    return this.options.feed;
  }

  private startRechecks(): void {
    const { recheck, tokenRecheckMs } = this.options ?? {};
    if (this.timer || !recheck || !tokenRecheckMs) return;
    this.timer = setInterval(() => void this.recheckTokens(), tokenRecheckMs);
    this.timer.unref();
  }

  private stopRechecks(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Every open stream's token, asked again (one query for all distinct tokens); refused ones end. */
  async recheckTokens(): Promise<void> {
    const recheck = this.options?.recheck;
    if (!recheck || this.rechecking) return;
    const streams: LiveSubscriber[] = [];
    for (const channel of this.channels.values()) for (const stream of channel.streams) if (stream.token !== null) streams.push(stream);
    if (streams.length === 0) return;
    this.rechecking = true;
    try {
      const users = await recheck([...new Set(streams.map((s) => s.token!))]);
      for (const stream of streams) {
        if (users.get(stream.token!) !== stream.user) stream.revoke();
      }
      this.stats.tokenRechecks++;
    } catch (error) {
      // The database cannot be asked right now: the streams go on, and are asked next time.
      this.options?.log?.error('[parley] re-checking the tokens of live streams failed:', error);
    } finally {
      this.rechecking = false;
    }
  }

  /** Stops the re-check timer (the service is closing). */
  close(): void {
    this.stopRechecks();
  }
}
