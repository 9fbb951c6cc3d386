// Who may write to the SQLite file now: this thread's connection (Kysely's) or the audit trail's
// writer thread (audit-writer.ts), which has a connection of its own.
//
// SQLite lets one connection write at a time; a connection that finds the file locked sleeps in
// its busy handler, 1 ms at the least. On this thread that sleep would stop the event loop each
// time a request's write met a batch of audit rows being written. So both sides take this gate
// first, a 32-bit cell in shared memory: this thread waits (Atomics.wait) only as long as the
// writer's one short INSERT transaction takes, to the microsecond, and the writer waits as long as
// this thread's transaction stays open (it blocks no event loop).
const FREE = 0;
const MAIN = 1;
export const WRITER = 2;
/** A writer thread that never lets go (it died holding the gate): this thread goes on after this, and SQLite's busy timeout applies. */
const MAX_WAIT_MS = 5000;

export class WriteGate {
  /** Handed to the writer thread (workerData). */
  readonly buffer = new SharedArrayBuffer(4);
  private readonly cell = new Int32Array(this.buffer);
  private held = false;
  /** Told every `nudgeEvery` ends of this thread's writes, while set (the writer thread's checkpoints: audit-writer.ts). */
  private onCommits: (() => void) | null = null;
  private nudgeEvery = 0;
  private commits = 0;

  /**
   * Runs one statement of this thread's connection: with the gate taken first when it is not
   * held; it is kept while a transaction is open (`inTransaction()` after the statement), and
   * released once none is.
   */
  run<T>(statement: () => T, inTransaction: () => boolean): T {
    if (!this.held) this.take();
    try {
      return statement();
    } finally {
      if (!inTransaction()) this.release();
    }
  }

  /**
   * `callback` is called after every `every` writes of this thread's connection end (a
   * transaction's COMMIT or ROLLBACK, a statement outside one): what tells the writer thread that
   * the WAL has grown. Null stops it.
   */
  everyCommits(every: number, callback: (() => void) | null): void {
    this.nudgeEvery = every;
    this.onCommits = callback;
    this.commits = 0;
  }

  /** The writer thread has exited: whatever it held is free. */
  writerGone(): void {
    if (Atomics.compareExchange(this.cell, 0, WRITER, FREE) === WRITER) Atomics.notify(this.cell, 0);
  }

  private take(): void {
    const deadline = Date.now() + MAX_WAIT_MS;
    while (Atomics.compareExchange(this.cell, 0, FREE, MAIN) !== FREE) {
      if (Date.now() > deadline) break;
      Atomics.wait(this.cell, 0, WRITER, 50);
    }
    this.held = true;
  }

  private release(): void {
    this.held = false;
    if (Atomics.compareExchange(this.cell, 0, MAIN, FREE) === MAIN) Atomics.notify(this.cell, 0);
    if (this.onCommits && ++this.commits >= this.nudgeEvery) {
      this.commits = 0;
      this.onCommits();
    }
  }
}
