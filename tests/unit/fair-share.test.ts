// The per-user fair share (lib/api/http/fair-share.ts): at most `perUser` of one user's requests at
// once, the rest in order behind them, a full queue refused, other users never behind it.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api/errors';
import { FairShare } from '../../lib/api/http/fair-share';

/** A piece of work that ends when the test says so. */
function held() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { work: () => done, finish };
}

describe('FairShare', () => {
  it('runs at most perUser of one user at once; the next starts, in order, as one ends', async () => {
    const share = new FairShare({ perUser: 2, queuedPerUser: 10 });
    const started: number[] = [];
    const jobs = Array.from({ length: 5 }, () => held());
    const runs = jobs.map((job, i) =>
      share.run('alice', async () => {
        started.push(i);
        await job.work();
        return i;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    expect(share.load('alice')).toEqual({ running: 2, waiting: 3 });
    jobs[1]!.finish();
    await runs[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    jobs.forEach((job) => job.finish());
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(share.load('alice')).toEqual({ running: 0, waiting: 0 });
  });

  it("another user's request runs at once while one user's queue is full", async () => {
    const share = new FairShare({ perUser: 1, queuedPerUser: 1 });
    const a = held();
    const first = share.run('alice', a.work);
    const second = share.run('alice', async () => 'second');
    // Beyond the queue: refused, in the contract's shape.
    const refused = await share.run('alice', async () => 'third').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('rate_limited');
    expect((refused as ApiError).headers['Retry-After']).toBe('1');
    expect(await share.run('bob', async () => 'bob')).toBe('bob');
    a.finish();
    await first;
    expect(await second).toBe('second');
  });

  it('a request that fails gives its turn back', async () => {
    const share = new FairShare({ perUser: 1, queuedPerUser: 0 });
    await expect(share.run('alice', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(share.load('alice')).toEqual({ running: 0, waiting: 0 });
    await new Promise((resolve) => setImmediate(resolve)); // the next turn of the loop
    expect(await share.run('alice', async () => 'again')).toBe('again');
  });

  it("one start per user per turn of the loop: a user's second request waits for the turn's end, another user's does not", async () => {
    const share = new FairShare({ perUser: 4, queuedPerUser: 10 });
    const order: string[] = [];
    // Synchronous work, as a SQLite write is: each runs to its end once started.
    const runs = [
      share.run('alice', async () => void order.push('alice 1')),
      share.run('alice', async () => void order.push('alice 2')),
      share.run('alice', async () => void order.push('alice 3')),
      share.run('bob', async () => void order.push('bob 1')),
    ];
    await Promise.resolve();
    expect(order).toEqual(['alice 1', 'bob 1']);
    await Promise.all(runs);
    expect(order).toEqual(['alice 1', 'bob 1', 'alice 2', 'alice 3']);
    expect(share.load('alice')).toEqual({ running: 0, waiting: 0 });
  });

  it('perUser 0: no limit', async () => {
    const share = new FairShare({ perUser: 0, queuedPerUser: 0 });
    const jobs = Array.from({ length: 50 }, () => held());
    let running = 0;
    const runs = jobs.map((job) => share.run('alice', async () => (running++, job.work())));
    await new Promise((resolve) => setImmediate(resolve));
    expect(running).toBe(50);
    jobs.forEach((job) => job.finish());
    await Promise.all(runs);
  });
});
