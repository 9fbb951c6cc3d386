// 6. Replay: 1,000 queued conversation updates and 100 queued 1 MiB uploads, queued offline through
//    the UI's own sync client (window.parley.client) with the network cut, replayed after
//    reconnecting; timed until the outbox is empty. Floor: the same 1,100 requests, with the same
//    headers (a fresh Idempotency-Key each) and the same concurrency as the app's replay
//    (IN_FLIGHT requests at once, in the same order), sent by a bare loop from the same page. What
//    the app sends besides (the snapshot GET before each upload while the server's idempotency is
//    not known, the pull after the replay) is the app's own cost, not part of the floor.
//    The worker is stopped while the queue is built and started again on reconnecting, so the
//    figure is the replay itself, not the retry backoff (1 s … 5 min, by design) that failed
//    attempts while offline would leave behind.
import { IN_FLIGHT } from '../../lib/sync/outbox/replay';
import { openSignedIn, waitIdle } from '../lib/app';
import { syncWorld } from '../lib/mirror';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, round } from '../lib/stats';

const UPDATES = 1000;
const UPLOADS = 100;

export const replay: Scenario = {
  name: 'replay',
  title: `Replay: ${UPDATES} queued updates + ${UPLOADS} queued 1 MiB uploads after reconnecting, vs the same requests sent by a bare loop (${IN_FLIGHT} in flight)`,
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const session = await openSignedIn(w.browser, w.app.baseUrl, runToken('bob'));
    // The floor runs in the same page, on the same server, with the default limits: like for like
    // with the worker's replay (the worker stays signed in and pulls what the floor writes, as it
    // does during its own replay). Each floor run has a token of its own: its 1,100 requests fit
    // the reserve (RATE_LIMIT_BURST, 2,000) as one device's replay does.
    try {
      const { page, context, requests } = session;
      await page.evaluate(() => (window as any).parley.worker.syncNow());
      await waitIdle(page);
      const ids = w.bob.ids.slice(0, UPDATES);
      const engine: number[] = [];
      const floor: number[] = [];
      const sequential: number[] = [];
      let engineRequests = 0;
      // One replay takes over a minute here: one run per bench run unless BENCH_REPLAY_RUNS asks
      // for more (the whole bench must stay under 15 minutes).
      const passes = Math.min(runs, Number(process.env.BENCH_REPLAY_RUNS || 1));
      for (let r = 0; r < passes; r++) {
        await context.setOffline(true);
        const queued = await page.evaluate(
          async ({ ids, run, uploads }) => {
            const p = (window as any).parley;
            await p.worker.stop();
            const bytes = new Uint8Array(1024 * 1024);
            for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
            for (const id of ids) await p.client.updateConversation(id, { is_pinned: run % 2 === 0, is_muted: run % 2 === 1 });
            for (let j = 0; j < uploads; j++) {
              await p.client.uploadFile({ conversationId: ids[j * 10] }, { name: `replay-${run}-${j}.bin`, type: 'application/octet-stream', bytes });
            }
            return p.db.outbox.count();
          },
          { ids, run: r, uploads: UPLOADS },
        );
        if (queued !== UPDATES + UPLOADS) throw new Error(`queued ${queued} operations, expected ${UPDATES + UPLOADS}`);
        await context.setOffline(false);
        requests.reset();
        const { ms, updatesMs } = await page.evaluate(async ({ token, uploads }) => {
          const p = (window as any).parley;
          const t0 = performance.now();
          await p.restart(token);
          const deadline = Date.now() + 10 * 60_000;
          // The updates are queued first and go first: once no more than the uploads are left, they are done.
          let updatesMs = 0;
          for (let left = await p.db.outbox.count(); left > 0; left = await p.db.outbox.count()) {
            if (updatesMs === 0 && left <= uploads) updatesMs = performance.now() - t0;
            if (Date.now() > deadline) throw new Error('outbox not empty after 10 minutes');
            await new Promise((res) => setTimeout(res, 25));
          }
          return { ms: performance.now() - t0, updatesMs };
        }, { token: runToken('bob'), uploads: UPLOADS });
        engineRequests = requests.count;
        await waitIdle(page);

        const floorRun = (concurrency: number) => page.evaluate(
          async ({ ids, run, uploads, token, concurrency }) => {
            const bytes = new Uint8Array(1024 * 1024);
            for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
            const auth = { Authorization: `Bearer ${token}` };
            // The app's requests in the app's order; the uploads' bytes are in memory (the app reads them from IndexedDB).
            const requests: Array<() => Promise<void>> = [];
            for (const id of ids) {
              requests.push(async () => {
                const res = await fetch(`/v1/conversations/${id}`, {
                  method: 'PUT',
                  headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
                  body: JSON.stringify({ is_pinned: run % 2 === 1, is_muted: run % 2 === 0 }),
                });
                if (res.status !== 200) throw new Error(`PUT ${res.status}`);
                await res.text();
              });
            }
            for (let j = 0; j < uploads; j++) {
              requests.push(async () => {
                const form = new FormData();
                form.append('conversation_id', ids[j * 10]);
                form.append('file', new Blob([bytes], { type: 'application/octet-stream' }), `floor-${run}-${j}.bin`);
                const res = await fetch('/v1/files', { method: 'POST', headers: { ...auth, 'Idempotency-Key': crypto.randomUUID() }, body: form });
                if (res.status !== 201) throw new Error(`POST /v1/files ${res.status}`);
                await res.text();
              });
            }
            const t0 = performance.now();
            let next = 0;
            let updatesMs = 0;
            const lane = async () => {
              while (next < requests.length) {
                const i = next++;
                await requests[i]!();
                if (i === ids.length - 1) updatesMs = performance.now() - t0;
              }
            };
            await Promise.all(Array.from({ length: concurrency }, lane));
            return { ms: performance.now() - t0, updatesMs };
          },
          { ids, run: r, uploads: UPLOADS, token: runToken('bob'), concurrency },
        );
        const pooled = await floorRun(IN_FLIGHT);
        const floorMs = pooled.ms;
        // For comparison: the same requests one at a time (is concurrency worth it on this server?).
        const single = await floorRun(1);
        sequential.push(single.ms);
        log(`floor phases: ${IN_FLIGHT} in flight: updates ${(pooled.updatesMs / 1000).toFixed(2)} s, all ${(pooled.ms / 1000).toFixed(2)} s; one at a time: updates ${(single.updatesMs / 1000).toFixed(2)} s, all ${(single.ms / 1000).toFixed(2)} s`);
        engine.push(ms);
        floor.push(floorMs);
        log(`run ${r + 1}/${passes}: replay ${(ms / 1000).toFixed(2)} s (updates ${(updatesMs / 1000).toFixed(2)} s, then the uploads ${((ms - updatesMs) / 1000).toFixed(2)} s; ${engineRequests} requests incl. the pull after it), floor ${(floorMs / 1000).toFixed(2)} s (updates ${(pooled.updatesMs / 1000).toFixed(2)} s, uploads ${((floorMs - pooled.updatesMs) / 1000).toFixed(2)} s)`);
        await waitIdle(page);
      }
      return [
        { name: `replay of ${UPDATES} updates + ${UPLOADS} × 1 MiB uploads (${passes} run${passes > 1 ? 's, median' : ''})`, value: round(median(engine) / 1000, 2), unit: 's' },
        { name: `replay: floor (bare loop, same requests and headers, ${IN_FLIGHT} in flight)`, value: round(median(floor) / 1000, 2), unit: 's' },
        { name: 'replay: the same requests one at a time (for comparison)', value: round(median(sequential) / 1000, 2), unit: 's' },
        { name: 'replay vs floor', value: round(median(engine.map((e, i) => e / floor[i]!)), 2), unit: '×', target: { op: '<=', value: 1.3 } },
        { name: 'replay: /v1 requests made by the worker (last run)', value: engineRequests, unit: 'req' },
      ];
    } finally {
      await session.context.close();
    }
  },
};
