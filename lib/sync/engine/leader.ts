// One live stream per browser profile, however many tabs are open. Every tab runs its own sync
// worker, and a browser allows only 6 HTTP/1.1 connections per host: with a stream per tab, six
// tabs held every connection and nothing else reached the server. So the workers of one
// database elect a leader with a Web Lock held for the worker's life (`parley-live:<database>`);
// the browser releases it when that tab closes (its worker is terminated) and grants it to the
// next waiter at once. Only the leader holds the stream and polls on a timer; the others
// (followers) still push their own writes at once — the outbox is shared, replay is serialized
// by the sync lock — and see what the leader pulls through the shared IndexedDB (Dexie live
// queries already follow other tabs' commits).
//
// A BroadcastChannel carries the little that IndexedDB does not: "pulled" (the mirror was just
// brought up to date, by any tab), so the others push their periodic pull back rather than
// repeat it, and a leader whose stream is backing off reconnects (the server is reachable).
//
// Plain TypeScript: the lock manager and the channel are handed in. Without Web Locks every tab
// leads (each its own stream, as before); without BroadcastChannel nobody hears "pulled".

/** The part of navigator.locks the election uses (a request may be abandoned with `signal`). */
export interface LeaderLocks {
  request(name: string, options: { signal?: AbortSignal }, callback: () => Promise<void>): Promise<unknown>;
}

export type TabMessage = { type: 'pulled' };

/** One end of a BroadcastChannel: messages go to every other end of the same name, never back to its sender. */
export interface TabChannel {
  post(message: TabMessage): void;
  close(): void;
}

/** Opens an end of the channel `name`; `onMessage` gets what the other ends post. */
export type OpenTabChannel = (name: string, onMessage: (message: unknown) => void) => TabChannel;

export interface LeadershipDeps {
  /** The database's IndexedDB name: tabs of another user's database elect their own leader. */
  database: string;
  /** navigator.locks; undefined where there is none (then this tab leads). */
  locks?: LeaderLocks;
  openChannel?: OpenTabChannel;
  /** This tab became the leader (called once; leadership ends only with stop()). */
  onLeading: () => void;
  /** Another tab pulled: the mirror is current. */
  onPulled: () => void;
}

export const leaderLockName = (database: string) => `parley-live:${database}`;
export const tabChannelName = (database: string) => `parley-tabs:${database}`;

export class Leadership {
  private isLeader = false;
  private waiting: AbortController | null = null;
  private release: (() => void) | null = null;
  private channel: TabChannel | null = null;

  constructor(private readonly deps: LeadershipDeps) {}

  get leading(): boolean {
    return this.isLeader;
  }

  /** Joins the election: leads now if nobody does (or Web Locks are missing), else waits its turn. */
  start(): void {
    if (this.channel || this.waiting || this.isLeader) return;
    this.channel = this.deps.openChannel?.(tabChannelName(this.deps.database), (message) => this.receive(message)) ?? null;
    if (!this.deps.locks) {
      this.lead();
      return;
    }
    const waiting = new AbortController();
    this.waiting = waiting;
    this.deps.locks
      .request(leaderLockName(this.deps.database), { signal: waiting.signal }, () => {
        // Granted after stop(): pass it straight on to the next tab.
        if (waiting.signal.aborted) return Promise.resolve();
        this.waiting = null;
        return new Promise<void>((resolve) => {
          this.release = resolve;
          this.lead();
        });
      })
      .catch(() => {
        // AbortError: stopped while waiting. Anything else (the lock refused): lead, as without locks.
        if (this.waiting !== waiting || waiting.signal.aborted) return;
        this.waiting = null;
        this.lead();
      });
  }

  /** Leaves the election (worker stop, sign-out): a lock held is handed to the next tab at once. */
  stop(): void {
    this.waiting?.abort();
    this.waiting = null;
    this.release?.();
    this.release = null;
    this.isLeader = false;
    this.channel?.close();
    this.channel = null;
  }

  /** This tab just brought the mirror up to date: the others need not poll for a while. */
  announcePulled(): void {
    this.channel?.post({ type: 'pulled' });
  }

  private lead(): void {
    this.isLeader = true;
    this.deps.onLeading();
  }

  private receive(message: unknown): void {
    if ((message as TabMessage | null)?.type === 'pulled') this.deps.onPulled();
  }
}
