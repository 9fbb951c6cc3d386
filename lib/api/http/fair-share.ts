// A fair share of this process for every user: at most `perUser` of one user's requests are being
// worked on at once, and at most one of them starts per turn of the event loop; the user's further
// requests wait their turn in a queue of their own (up to `queuedPerUser`; beyond it, 429
// rate_limited).
//
// Why, beside the token bucket (rate-limit.ts): the bucket decides how many requests a user gets,
// not in which order they meet everyone else's. A user spending a full reserve (RATE_LIMIT_BURST)
// over 16 connections had 16 writes read in one turn of the loop, each done to the end before the
// next socket was read (on SQLite a write is synchronous): another user's request arriving then
// waited behind all 16 (bench, flood: p50 19 ms against 1.3 ms quiet). One start per user per turn
// lets every other user's requests that arrived meanwhile be read and started in between; the
// flooder's throughput is the same (the CPU was the limit either way). Concurrency is not lost: a
// request that awaits (PostgreSQL, the object store) keeps running while the next one starts.
// The app never sends more than 4 requests at once (replay IN_FLIGHT, scan concurrency).
//
// Long requests (a file upload, a tus PATCH, a live stream) are not counted: they spend their time
// waiting for the network, and would otherwise hold a user's turn for minutes.
import { rateLimited } from './rate-limit';

export interface FairShareLimits {
  /** Requests of one user worked on at once; 0: no limit (the gate is off). */
  perUser: number;
  /** Requests of one user waiting their turn; beyond it, 429. */
  queuedPerUser: number;
}

interface Lane {
  running: number;
  /** A request of this user started in the current turn of the event loop. */
  started: boolean;
  waiting: Array<() => void>;
}

export class FairShare {
  private readonly lanes = new Map<string, Lane>();
  private turnScheduled = false;

  constructor(private readonly limits: FairShareLimits) {}

  /** Runs `work` in `user`'s turn: at once when the user may start one now, else after the earlier ones. */
  async run<T>(user: string, work: () => Promise<T>): Promise<T> {
    if (this.limits.perUser === 0) return work();
    let lane = this.lanes.get(user);
    if (!lane) {
      lane = { running: 0, started: false, waiting: [] };
      this.lanes.set(user, lane);
    }
    if (lane.running >= this.limits.perUser || lane.started || lane.waiting.length > 0) {
      if (lane.waiting.length >= this.limits.queuedPerUser) throw rateLimited(1000, 'token');
      // The slot is handed over at a turn's end (nextTurn), already counted for this request.
      await new Promise<void>((resolve) => {
        lane.waiting.push(resolve);
        this.scheduleTurn();
      });
    } else {
      lane.running++;
      lane.started = true;
      this.scheduleTurn();
    }
    try {
      return await work();
    } finally {
      lane.running--;
      if (lane.waiting.length > 0) this.scheduleTurn();
      else if (lane.running === 0 && !lane.started) this.lanes.delete(user);
    }
  }

  /** Requests of `user` being worked on and waiting (tests, diagnostics). */
  load(user: string): { running: number; waiting: number } {
    const lane = this.lanes.get(user);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  /**
   * The end of a turn, on the check phase (setImmediate): whatever requests arrived meanwhile have
   * been read in the poll phase before it. Each user may start one more: a waiting one, if any.
   */
  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => this.nextTurn());
  }

  private nextTurn(): void {
    this.turnScheduled = false;
    for (const [user, lane] of this.lanes) {
      lane.started = false;
      if (lane.waiting.length > 0 && lane.running < this.limits.perUser) {
        lane.running++;
        lane.started = true;
        lane.waiting.shift()!();
      }
      if (lane.started || lane.waiting.length > 0) this.scheduleTurn();
      else if (lane.running === 0) this.lanes.delete(user);
    }
  }
}
