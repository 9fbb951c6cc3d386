// A fair share of this process for every user: at most `perUser` of one user's requests are being
// worked on at once; the user's further requests wait their turn in a queue of their own (up to
// `queuedPerUser`; beyond it, 429 rate_limited).
//
// Why, beside the token bucket (rate-limit.ts): the bucket decides how many requests a user gets,
// not how much of the instance they hold at once. Where requests wait (PostgreSQL, the object
// store), one user's many connections cannot occupy the instance's pools beyond this share.
// Not enough for a flood on SQLite: a write runs to its end in one turn of the event loop, so in
// flight never exceeds 1 and another user's request still waits behind every write read in the
// same turn. One start per user per turn met the flood bench target (1.89x, 1.18x of quiet) but
// was held back: see docs/performance.md, flood.
// The app itself never sends more than 4 requests at once (replay IN_FLIGHT, scan concurrency),
// so its bursts — an initial sync, a replay — never wait here.
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
  waiting: Array<() => void>;
}

export class FairShare {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly limits: FairShareLimits) {}

  /** Runs `work` in `user`'s turn: at once when the user has a free slot, else after the earlier ones. */
  async run<T>(user: string, work: () => Promise<T>): Promise<T> {
    if (this.limits.perUser === 0) return work();
    let lane = this.lanes.get(user);
    if (!lane) {
      lane = { running: 0, waiting: [] };
      this.lanes.set(user, lane);
    }
    if (lane.running >= this.limits.perUser) {
      if (lane.waiting.length >= this.limits.queuedPerUser) throw rateLimited(1000, 'token');
      // The slot is handed over by release(), already counted for this request.
      await new Promise<void>((resolve) => lane.waiting.push(resolve));
    } else {
      lane.running++;
    }
    try {
      return await work();
    } finally {
      this.release(user, lane);
    }
  }

  /** Requests of `user` being worked on and waiting (tests, diagnostics). */
  load(user: string): { running: number; waiting: number } {
    const lane = this.lanes.get(user);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  private release(user: string, lane: Lane): void {
    const next = lane.waiting.shift();
    if (next) {
      // The slot passes to the next waiting request, on the check phase: whatever other users'
      // requests have arrived meanwhile are read (poll phase) before this user's next one runs.
      setImmediate(next);
      return;
    }
    lane.running--;
    if (lane.running === 0) this.lanes.delete(user);
  }
}
