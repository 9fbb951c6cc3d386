// 9. Reconnect: changes queued while the network is gone reach the server as soon as it is back,
//    nobody pressing anything. bob's mirror (1,000 conversations) in a fresh context with the real
//    sync worker; the network is gated per request (context.route aborts every /v1 request, as a
//    dead network does) and the page is told `offline` — Chromium's offline emulation alone does
//    not reliably cut a dedicated worker off. UPDATES conversation updates are queued through the
//    UI's sync client while gated, and the worker keeps trying (every failed attempt is counted at
//    the gate). The gate stays shut for OFFLINE_S and until the first queued change has failed at
//    least MIN_FAILURES times: counted toward its backoff as the old code did (1 s doubling, up to
//    5 min), 8 failures would make the next attempt wait over 2 minutes. Then the gate opens and
//    the page gets `online` (it forwards that to the worker, lib/sync/session/connect.ts); timed, on one
//    clock (this process), until the first replayed request passes the gate, and until every
//    queued change is answered (outbox empty). The server is checked to hold every change.
import type { Route } from 'playwright-core';
import { openSignedIn, waitIdle } from '../lib/app';
import { syncWorld } from '../lib/mirror';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, round, sleep } from '../lib/stats';

const UPDATES = 10;
const OFFLINE_S = Number(process.env.BENCH_RECONNECT_OFFLINE_S || 40);
const MIN_FAILURES = Number(process.env.BENCH_RECONNECT_MIN_FAILURES || 8);

export const reconnect: Scenario = {
  name: 'reconnect',
  title: `Reconnect: ${UPDATES} updates queued offline (≥ ${OFFLINE_S} s, ≥ ${MIN_FAILURES} failed attempts), network back: time to the first replayed request`,
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const session = await openSignedIn(w.browser, w.app.baseUrl, runToken('bob'));
    const { page, context } = session;
    const auth = { Authorization: `Bearer ${runToken('bob')}` };
    // Each run mutes (or unmutes) 10 more of bob's conversations, from his last; the replay
    // scenario sets the same flags on all of them, so each run checks its own values only.
    const gate = { shut: false, failedFirst: 0, failedAll: 0, firstPassedAt: null as number | null, watched: '' };
    const isUpdate = (route: Route, id?: string) =>
      route.request().method() === 'PUT' && (id ? new URL(route.request().url()).pathname === `/v1/conversations/${id}` : /^\/v1\/conversations\/[^/]+$/.test(new URL(route.request().url()).pathname));
    await context.route(/\/v1\//, async (route) => {
      if (gate.shut) {
        gate.failedAll++;
        if (isUpdate(route, gate.watched)) gate.failedFirst++;
        return route.abort('internetdisconnected');
      }
      if (gate.firstPassedAt === null && isUpdate(route)) gate.firstPassedAt = Date.now();
      return route.continue();
    });
    try {
      await page.evaluate(() => (window as any).parley.worker.syncNow());
      await waitIdle(page);
      const samples: { offlineS: number; failures: number; requests: number; firstMs: number; allMs: number }[] = [];
      for (let r = 0; r < runs; r++) {
        const ids = w.bob.ids.slice(w.bob.ids.length - UPDATES * (r + 1), w.bob.ids.length - UPDATES * r);
        const muted = r % 2 === 0;
        Object.assign(gate, { shut: true, failedFirst: 0, failedAll: 0, firstPassedAt: null, watched: ids[0]! });
        await context.setOffline(true);
        const offlineAt = Date.now();
        await page.evaluate(
          async ({ ids, muted }) => {
            const p = (window as any).parley;
            for (const id of ids) await p.client.updateConversation(id, { is_muted: muted });
          },
          { ids, muted },
        );
        while (Date.now() - offlineAt < OFFLINE_S * 1000 || gate.failedFirst < MIN_FAILURES) {
          if (Date.now() - offlineAt > 10 * 60_000) throw new Error(`only ${gate.failedFirst} failed attempts in 10 min offline`);
          await sleep(250);
        }
        const queued = await page.evaluate(() => (window as any).parley.db.outbox.count());
        if (queued !== UPDATES) throw new Error(`${queued} operations queued after ${OFFLINE_S} s offline, expected ${UPDATES}`);
        // The network is back: the gate opens, the page gets `online`.
        gate.shut = false;
        const back = Date.now();
        const offlineS = (back - offlineAt) / 1000;
        await context.setOffline(false);
        const emptiedAt = await page.evaluate(async () => {
          const p = (window as any).parley;
          const deadline = Date.now() + 120_000;
          while ((await p.db.outbox.count()) > 0) {
            if (Date.now() > deadline) return NaN;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          return Date.now();
        });
        if (gate.firstPassedAt === null || Number.isNaN(emptiedAt)) throw new Error('the queued changes were not replayed within 2 minutes of reconnecting');
        for (const id of ids) {
          const res = await fetch(`${w.app.baseUrl}/v1/conversations/${id}`, { headers: auth });
          const body = (await res.json()) as { is_muted?: boolean };
          if (res.status !== 200 || body.is_muted !== muted) throw new Error(`server does not hold the change to ${id}: ${res.status} ${JSON.stringify(body)}`);
        }
        const sample = { offlineS, failures: gate.failedFirst, requests: gate.failedAll, firstMs: gate.firstPassedAt - back, allMs: emptiedAt - back };
        samples.push(sample);
        log(
          `run ${r + 1}/${runs}: ${offlineS.toFixed(0)} s offline, first change failed ${sample.failures}× (${sample.requests} /v1 requests refused); ` +
            `network back → first replayed request ${sample.firstMs} ms, all ${UPDATES} answered ${sample.allMs} ms`,
        );
        await waitIdle(page);
      }
      return [
        { name: `offline time before reconnecting (median of ${runs})`, value: round(median(samples.map((s) => s.offlineS)), 0), unit: 's' },
        { name: 'failed attempts of the first queued change while offline (median)', value: median(samples.map((s) => s.failures)), unit: '' },
        { name: 'network back → first replayed request (at the network gate), nothing pressed', value: round(median(samples.map((s) => s.firstMs)) / 1000, 2), unit: 's', target: { op: '<=' as const, value: 5 } },
        { name: `network back → all ${UPDATES} queued changes answered (outbox empty)`, value: round(median(samples.map((s) => s.allMs)) / 1000, 2), unit: 's' },
      ];
    } finally {
      await context.unroute(/\/v1\//).catch(() => {});
      await context.close().catch(() => {});
    }
  },
};
