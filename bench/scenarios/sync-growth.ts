// 6. Growth: the initial sync and a steady pass at 1,000, 10,000 and 50,000 conversations (a fifth
//    of them with 5 files: 1,000 / 10,000 / 50,000 files), against the embedded server (change
//    feed), and a steady pass against the plain server (which lists everything), to show whether
//    the cost grows linearly and where it bends. Initial syncs are medians of `runs`
//    (BENCH_GROWTH_RUNS caps them: 50,000 takes a while).
import { waitIdle } from '../lib/app';
import { syncWorld, timedInitialSync, type SyncWorld } from '../lib/mirror';
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

export const syncGrowth: Scenario = {
  name: 'sync-growth',
  title: 'Sync growth: initial sync and steady pass at 1k, 10k and 50k conversations (with files)',
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const initialRuns = Math.min(runs, Number(process.env.BENCH_GROWTH_RUNS || runs));
    const out = [];
    for (const size of SIZES) {
      const { files } = seeded(w, size);
      const expected = { conversations: size.conversations, files };
      const records = expected.conversations + expected.files;
      const times: number[] = [];
      let steady = { ms: NaN, requests: NaN };
      for (let r = 0; r < initialRuns; r++) {
        const { session, initial } = await timedInitialSync(w.browser, w.app.baseUrl, runToken(size.token), expected);
        times.push(initial.ms);
        if (r === 0) steady = await steadyPass(session.page, session.requests);
        await session.context.close();
        log(`${size.conversations}: initial sync ${(initial.ms / 1000).toFixed(2)} s (${initial.requests} req)`);
      }
      const plain = await timedInitialSync(w.browser, w.plainApp.baseUrl, runToken(size.token), expected);
      const plainSteady = await steadyPass(plain.session.page, plain.session.requests);
      await plain.session.context.close();
      log(`${size.conversations}: plain server initial ${(plain.initial.ms / 1000).toFixed(2)} s (${(plain.initial.rateLimitedMs / 1000).toFixed(0)} s of it waiting out 429s); steady feed ${steady.ms.toFixed(0)} ms / ${steady.requests} req, plain ${plainSteady.ms.toFixed(0)} ms / ${plainSteady.requests} req`);
      const ms = median(times);
      const label = `${size.conversations.toLocaleString('en-US')} conv + ${files.toLocaleString('en-US')} files`;
      out.push(
        { name: `${label}: initial sync, feed (median of ${initialRuns})`, value: round(ms / 1000, 2), unit: 's' },
        { name: `${label}: initial sync, feed, records/s`, value: Math.round(records / (ms / 1000)), unit: 'rec/s' },
        { name: `${label}: initial sync, plain server (1 run)`, value: round(plain.initial.ms / 1000, 2), unit: 's' },
        { name: `${label}: of which waiting out 429s (default rate limits)`, value: round(plain.initial.rateLimitedMs / 1000, 0), unit: 's' },
        { name: `${label}: steady pass, feed, nothing changed`, value: round(steady.ms / 1000, 3), unit: 's' },
        { name: `${label}: steady pass, plain server, nothing changed`, value: round(plainSteady.ms / 1000, 2), unit: 's' },
        { name: `${label}: steady pass requests, feed`, value: steady.requests, unit: 'req' },
        { name: `${label}: steady pass requests, plain server`, value: plainSteady.requests, unit: 'req' },
      );
    }
    return out;
  },
};
