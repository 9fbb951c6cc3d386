// 5. Steady sync with 10,000 conversations (and 10,000 files) mirrored: one sync pass when nothing
//    changed, and one after 10 conversations changed server-side (through the API). Time and the
//    /v1 requests the worker made (counted from Playwright's request events, page + worker).
import { aliceMirror, syncWorld } from '../lib/mirror';
import { waitIdle } from '../lib/app';
import type { Scenario } from '../lib/scenario';
import { BENCH_TOKENS } from '../lib/seed';
import { median, round } from '../lib/stats';

export const steadySync: Scenario = {
  name: 'steady-sync',
  title: 'Steady sync: a pass with nothing changed, and with 10 conversations changed server-side',
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const { session } = await aliceMirror(log);
    const { page, requests } = session;
    const auth = { Authorization: `Bearer ${BENCH_TOKENS.alice}`, 'Content-Type': 'application/json' };
    const pass = async () => {
      await waitIdle(page);
      requests.reset();
      const ms = await page.evaluate(async () => {
        const t0 = performance.now();
        await (window as any).parley.worker.syncNow();
        return performance.now() - t0;
      });
      return { ms, requests: requests.count };
    };
    const unchanged: { ms: number; requests: number }[] = [];
    const changed: { ms: number; requests: number }[] = [];
    // A pass over 10,000 conversations takes tens of seconds here: one pass of each kind per bench
    // run unless BENCH_STEADY_RUNS asks for more (the run must stay well under 15 minutes).
    const passes = Math.min(runs, Number(process.env.BENCH_STEADY_RUNS || 1));
    for (let r = 0; r < passes; r++) {
      unchanged.push(await pass());
      const targets = w.alice.ids.slice(100 + r * 10, 110 + r * 10);
      for (const id of targets) {
        const res = await fetch(`${w.app.baseUrl}/v1/conversations/${id}`, { method: 'PUT', headers: auth, body: JSON.stringify({ is_muted: r % 2 === 0, is_pinned: true }) });
        if (res.status !== 200) throw new Error(`PUT ${id}: ${res.status}`);
      }
      changed.push(await pass());
      const seen = await page.evaluate(async (id) => (await (window as any).parley.db.conversations.get(id))?.is_pinned, targets[0]!);
      if (seen !== true) throw new Error('the change did not reach the mirror');
      log(`run ${r + 1}/${passes}: nothing changed ${(unchanged[r]!.ms / 1000).toFixed(2)} s / ${unchanged[r]!.requests} req; 10 changed ${(changed[r]!.ms / 1000).toFixed(2)} s / ${changed[r]!.requests} req`);
    }
    return [
      { name: `sync pass, nothing changed: time (${passes} pass${passes > 1 ? 'es, median' : ''})`, value: round(median(unchanged.map((x) => x.ms)) / 1000, 2), unit: 's' },
      { name: 'sync pass, nothing changed: requests', value: median(unchanged.map((x) => x.requests)), unit: 'req' },
      { name: 'sync pass, 10 conversations changed: time', value: round(median(changed.map((x) => x.ms)) / 1000, 2), unit: 's' },
      { name: 'sync pass, 10 conversations changed: requests', value: median(changed.map((x) => x.requests)), unit: 'req' },
    ];
  },
};
