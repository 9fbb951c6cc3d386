// 5. Steady sync with 10,000 conversations (and 10,000 files) mirrored.
//    - With the change feed (the embedded server): a pass with nothing changed, and one after 10
//      conversations changed server-side (through the API): time and the /v1 requests the worker
//      made (Playwright's request events, page + worker).
//    - On a plain server (no feed): a pass with nothing changed lists everything.
//    - Live updates (live.ts, which `npm run bench live` runs alone): two browser contexts of alice,
//      p50/p95 of a change in one until the row on screen shows it in the other.
//    - Idle: the /v1 requests an idle, signed-in client makes in a minute (live stream open).
import { waitIdle } from '../lib/app';
import { aliceMirror, syncWorld, timedInitialSync, type SignedInSession } from '../lib/mirror';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, round, sleep } from '../lib/stats';
import { liveFigures, liveLatencies } from './live';

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS || 60);

async function pass(session: SignedInSession): Promise<{ ms: number; requests: number }> {
  await waitIdle(session.page);
  session.requests.reset();
  const ms = await session.page.evaluate(async () => {
    const t0 = performance.now();
    await (window as any).parley.worker.syncNow();
    return performance.now() - t0;
  });
  return { ms, requests: session.requests.count };
}

export const steadySync: Scenario = {
  name: 'steady-sync',
  title: 'Steady sync: passes with nothing / 10 changed (feed and plain server), live-update latency across two contexts, idle requests',
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const { session } = await aliceMirror(log);
    const auth = { Authorization: `Bearer ${runToken('alice')}`, 'Content-Type': 'application/json' };

    const unchanged: { ms: number; requests: number }[] = [];
    const changed: { ms: number; requests: number }[] = [];
    for (let r = 0; r < runs; r++) {
      unchanged.push(await pass(session));
      // 10 conversations changed elsewhere: the live stream pokes, the worker pulls them. Timed from
      // the last change to all 10 in the mirror; requests from the first change until idle again.
      const targets = w.alice.ids.slice(100 + r * 10, 110 + r * 10);
      session.requests.reset();
      for (const id of targets) {
        const res = await fetch(`${w.app.baseUrl}/v1/conversations/${id}`, { method: 'PUT', headers: auth, body: JSON.stringify({ is_muted: r % 2 === 0, is_pinned: true }) });
        if (res.status !== 200) throw new Error(`PUT ${id}: ${res.status}`);
      }
      const t0 = Date.now();
      const t1 = await session.page.evaluate(async (ids) => {
        const p = (window as any).parley;
        for (;;) {
          const rows = await p.db.conversations.bulkGet(ids);
          if (rows.every((c: any) => c?.is_pinned === true)) return Date.now();
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }, targets);
      await waitIdle(session.page);
      changed.push({ ms: t1 - t0, requests: session.requests.count });
      log(`feed run ${r + 1}/${runs}: nothing changed ${unchanged[r]!.ms.toFixed(0)} ms / ${unchanged[r]!.requests} req; 10 changed elsewhere: in the mirror ${changed[r]!.ms.toFixed(0)} ms after the last, ${changed[r]!.requests} req`);
    }
    // Undo the pins, so the list's top row is the same for everyone again.
    for (const id of w.alice.ids.slice(100, 100 + runs * 10)) {
      await fetch(`${w.app.baseUrl}/v1/conversations/${id}`, { method: 'PUT', headers: auth, body: JSON.stringify({ is_pinned: false, is_muted: false }) });
    }

    // Live updates (live.ts): a second context of alice, B = the mirror above.
    const latencies = await liveLatencies(w, session, log);

    // Idle: nobody touches anything for a minute.
    await waitIdle(session.page);
    session.requests.reset();
    await sleep(IDLE_SECONDS * 1000);
    const idlePerMinute = (session.requests.count * 60) / IDLE_SECONDS;
    log(`idle: ${session.requests.count} requests in ${IDLE_SECONDS} s: ${session.requests.paths.join(' ')}`);

    // A plain server: every pass lists everything.
    const plainMirror = await timedInitialSync(w.browser, w.plainApp.baseUrl, runToken('alice'), { conversations: w.alice.ids.length, files: w.alice.files });
    const plainPasses: { ms: number; requests: number }[] = [];
    for (let r = 0; r < runs; r++) plainPasses.push(await pass(plainMirror.session));
    await plainMirror.session.context.close();
    log(`plain server, nothing changed: ${plainPasses.map((p) => `${p.ms.toFixed(0)} ms / ${p.requests} req`).join('; ')}`);

    return [
      { name: `feed: sync pass, nothing changed: time (median of ${runs})`, value: round(median(unchanged.map((x) => x.ms)) / 1000, 3), unit: 's' },
      { name: 'feed: sync pass, nothing changed: requests', value: median(unchanged.map((x) => x.requests)), unit: 'req', target: { op: '<=' as const, value: 1 } },
      { name: 'feed + live: 10 conversations changed elsewhere, last change to all in the mirror', value: round(median(changed.map((x) => x.ms)) / 1000, 3), unit: 's' },
      { name: 'feed + live: 10 conversations changed elsewhere: requests', value: median(changed.map((x) => x.requests)), unit: 'req' },
      ...liveFigures(latencies),
      { name: 'idle signed-in client: requests per minute (live stream open)', value: round(idlePerMinute, 1), unit: 'req/min', target: { op: '<=' as const, value: 5 } },
      { name: 'plain server: sync pass, nothing changed: time', value: round(median(plainPasses.map((x) => x.ms)) / 1000, 2), unit: 's' },
      { name: 'plain server: sync pass, nothing changed: requests', value: median(plainPasses.map((x) => x.requests)), unit: 'req' },
    ];
  },
};
