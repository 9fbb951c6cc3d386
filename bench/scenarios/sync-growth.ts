// 6. Growth: the initial sync and a steady pass at 1,000, 10,000 and 50,000 conversations (a fifth
//    of them with 5 files: 1,000 / 10,000 / 50,000 files), against the embedded server (change
//    feed), and a steady pass against the plain server (which lists everything), to show whether
//    the cost grows linearly and where it bends. Initial syncs are medians of `runs`
//    (BENCH_GROWTH_RUNS caps them: 50,000 takes a while; BENCH_GROWTH_SIZES=50000 runs one size).
//    The plain server keeps the DEFAULT rate limits (the app's own server as `npm start` runs it,
//    its extensions off but the rate limit fields; BENCH_PLAIN_FIELDS=0 without them,
//    BENCH_PLAIN_LIMITS to scale the limits): its first sync is compared with its floor — the bare
//    loop of the same requests on a server without limits, or the least time the limits allow for
//    them (bench/lib/limits.ts), whichever is longer — and the 429s it met are counted. Both are
//    medians of `runs` up to 10,000 (one run at 50,000).
import { waitIdle } from '../lib/app';
import { leastSecondsUnder, plainTokenLimit } from '../lib/limits';
import { openSignedOut, syncWorld, timedInitialSync, type SyncWorld } from '../lib/mirror';
import { floorLoop } from './initial-sync';
import type { Scenario } from '../lib/scenario';
import { runToken, seedSyncData } from '../lib/seed';
import { median, round } from '../lib/stats';

const SIZES = [
  { conversations: 1_000, user: 'grow1k', token: 'grow1k' as const },
  { conversations: 10_000, user: 'alice', token: 'alice' as const },
  { conversations: 50_000, user: 'grow50k', token: 'grow50k' as const },
] as const;

function seeded(w: SyncWorld, size: (typeof SIZES)[number]): { files: number } {
  if (size.user === 'alice') return { files: w.alice.files };
  return seedSyncData(w.dataDir, size.user, size.conversations);
}

async function steadyPass(page: import('playwright-core').Page, requests: { count: number; reset(): void }) {
  await waitIdle(page);
  requests.reset();
  const ms = await page.evaluate(async () => {
    const t0 = performance.now();
    await (window as any).parley.worker.syncNow();
    return performance.now() - t0;
  });
  return { ms, requests: requests.count };
}

/** Which limits the plain server ran with, for the figures' names. */
function limitsNote(): string {
  const limits = process.env.BENCH_PLAIN_LIMITS ? `limits ${process.env.BENCH_PLAIN_LIMITS}/s+reserve` : 'default rate limits';
  return process.env.BENCH_PLAIN_FIELDS === '0' ? `${limits}, no rate limit fields` : limits;
}

export const syncGrowth: Scenario = {
  name: 'sync-growth',
  title: 'Sync growth: initial sync and steady pass at 1k, 10k and 50k conversations (with files)',
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const initialRuns = Math.min(runs, Number(process.env.BENCH_GROWTH_RUNS || runs));
    const only = process.env.BENCH_GROWTH_SIZES?.split(',').map(Number);
    // BENCH_GROWTH_FEED=0: the plain server's runs only.
    const withFeed = process.env.BENCH_GROWTH_FEED !== '0';
    const out = [];
    for (const size of SIZES.filter((s) => !only || only.includes(s.conversations))) {
      const { files } = seeded(w, size);
      const expected = { conversations: size.conversations, files };
      const records = expected.conversations + expected.files;
      const label = `${size.conversations.toLocaleString('en-US')} conv + ${files.toLocaleString('en-US')} files`;
      const times: number[] = [];
      let steady = { ms: NaN, requests: NaN };
      for (let r = 0; r < (withFeed ? initialRuns : 0); r++) {
        const { session, initial } = await timedInitialSync(w.browser, w.app.baseUrl, runToken(size.token), expected);
        times.push(initial.ms);
        if (r === 0) steady = await steadyPass(session.page, session.requests);
        await session.context.close();
        log(`${size.conversations}: initial sync ${(initial.ms / 1000).toFixed(2)} s (${initial.requests} req)`);
      }
      // The plain server and its floor: medians of `initialRuns` up to 10,000 (a run of 1,000 is
      // 1–2 s, where one run's noise is a tenth of the ratio), one run at 50,000 (minutes each).
      const plainRuns = size.conversations <= 10_000 ? initialRuns : 1;
      const plainTimes: number[] = [];
      let plain: Awaited<ReturnType<typeof timedInitialSync>>['initial'] | null = null;
      let plainSteady = { ms: NaN, requests: NaN };
      for (let r = 0; r < plainRuns; r++) {
        const run = await timedInitialSync(w.browser, w.plainApp.baseUrl, runToken(size.token), expected);
        if (r === 0) plainSteady = await steadyPass(run.session.page, run.session.requests);
        await run.session.context.close();
        plainTimes.push(run.initial.ms);
        // The 429s counted are the worst run's.
        if (!plain || run.initial.refused > plain.refused) plain = run.initial;
        log(`${size.conversations}: plain server (${limitsNote()}) initial ${(run.initial.ms / 1000).toFixed(2)} s, ${run.initial.requests} req, ${run.initial.refused} answered 429 (${(run.initial.rateLimitedMs / 1000).toFixed(0)} s waiting them out); phases ${JSON.stringify(run.initial.phases)}`);
      }
      if (!plain) throw new Error('no plain run');
      const plainMs = median(plainTimes);
      log(`${size.conversations}: plain median ${(plainMs / 1000).toFixed(2)} s of ${plainRuns}; steady feed ${steady.ms.toFixed(0)} ms / ${steady.requests} req, plain ${plainSteady.ms.toFixed(0)} ms / ${plainSteady.requests} req`);
      // The plain server's floor: the same requests as a bare loop without limits, and the least
      // time the limits allow for that many at the loop's rate.
      const floorTimes: number[] = [];
      let floor = { ms: NaN, requests: 0, conversations: 0, files: 0 };
      for (let r = 0; r < plainRuns; r++) {
        const bare = await openSignedOut(w.browser, w.plainFloorApp.baseUrl);
        floor = await floorLoop(bare.page, runToken(size.token));
        await bare.context.close();
        floorTimes.push(floor.ms);
      }
      floor = { ...floor, ms: median(floorTimes) };
      const limitedFloorMs = leastSecondsUnder(plainTokenLimit(), floor.requests, floor.requests / (floor.ms / 1000)) * 1000;
      const floorMs = Math.max(floor.ms, limitedFloorMs);
      log(`${size.conversations}: plain floor ${(floor.ms / 1000).toFixed(2)} s for ${floor.requests} req; under the limits at best ${(limitedFloorMs / 1000).toFixed(2)} s`);
      if (withFeed) {
        const ms = median(times);
        out.push(
          { name: `${label}: initial sync, feed (median of ${initialRuns})`, value: round(ms / 1000, 2), unit: 's' },
          { name: `${label}: initial sync, feed, records/s`, value: Math.round(records / (ms / 1000)), unit: 'rec/s' },
          { name: `${label}: steady pass, feed, nothing changed`, value: round(steady.ms / 1000, 3), unit: 's' },
          { name: `${label}: steady pass requests, feed`, value: steady.requests, unit: 'req' },
        );
      }
      out.push(
        { name: `${label}: initial sync, plain server (${plainRuns === 1 ? '1 run' : `median of ${plainRuns}`}, ${limitsNote()})`, value: round(plainMs / 1000, 2), unit: 's' },
        { name: `${label}: plain server: answers 429`, value: plain.refused, unit: '', target: { op: '<=' as const, value: 0 } },
        { name: `${label}: plain server: of it waiting out 429s`, value: round(plain.rateLimitedMs / 1000, 0), unit: 's', target: { op: '<=' as const, value: 0 } },
        { name: `${label}: plain server floor: bare loop, same requests, no limits${plainRuns === 1 ? '' : ` (median of ${plainRuns})`}`, value: round(floor.ms / 1000, 2), unit: 's' },
        { name: `${label}: plain server floor: least time the limits allow for them`, value: round(limitedFloorMs / 1000, 2), unit: 's' },
        { name: `${label}: initial sync, plain server, vs its floor (the longer of the two)`, value: round(plainMs / floorMs, 2), unit: '×', target: { op: '<=' as const, value: 1.5 } },
        { name: `${label}: initial sync, plain server, vs the bare loop without limits`, value: round(plainMs / floor.ms, 2), unit: '×' },
        { name: `${label}: steady pass, plain server, nothing changed`, value: round(plainSteady.ms / 1000, 2), unit: 's' },
        { name: `${label}: steady pass requests, plain server`, value: plainSteady.requests, unit: 'req' },
      );
    }
    return out;
  },
};
