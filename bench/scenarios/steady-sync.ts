// 5. Steady sync with 10,000 conversations (and 10,000 files) mirrored.
//    - With the change feed (the embedded server): a pass with nothing changed, and one after 10
//      conversations changed server-side (through the API): time and the /v1 requests the worker
//      made (Playwright's request events, page + worker).
//    - On a plain server (no feed): a pass with nothing changed lists everything.
//    - Live updates: two browser contexts signed in as alice; a conversation muted/unmuted in one
//      (through its sync client, as the UI does) until its row shows it in the other, which nobody
//      touches (the row on screen: the DOM, not just IndexedDB). p50/p95 of LIVE_SAMPLES.
//    - Idle: the /v1 requests an idle, signed-in client makes in a minute (live stream open).
import type { Page } from 'playwright-core';
import { waitIdle } from '../lib/app';
import { aliceMirror, syncWorld, timedInitialSync, type SignedInSession } from '../lib/mirror';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, percentile, round, sleep } from '../lib/stats';

const LIVE_SAMPLES = Number(process.env.BENCH_LIVE_SAMPLES || 20);
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

/** The conversation in the first row of the list on screen, and its title. */
async function topRow(page: Page): Promise<{ id: string; title: string }> {
  return page.evaluate(() => {
    const link = document.querySelector('[role="table"][aria-label="Conversations"] [aria-rowindex="2"] a') as HTMLAnchorElement;
    const id = new URL(link.href).searchParams.get('c')!;
    // The row's name (the link also holds the kind, the last activity and marks).
    return { id, title: link.querySelector('.name')?.textContent ?? link.title };
  });
}

/** One live update: muted (or unmuted) in A, until B's row shows it. Latency in ms (one clock). */
async function liveOnce(a: Page, b: Page, target: { id: string; title: string }, muted: boolean): Promise<number> {
  const label = `${muted ? 'Unmute' : 'Mute'} ${target.title}`;
  const seen = b.evaluate(
    (wanted) =>
      new Promise<number>((resolve) => {
        const started = Date.now();
        const look = () => {
          if (document.querySelector(`[aria-rowindex="2"] button[aria-label="${CSS.escape(wanted)}"]`)) resolve(Date.now());
          else if (Date.now() - started > 30_000) resolve(NaN); // never shown: reported, not waited for forever
          else requestAnimationFrame(look);
        };
        look();
      }),
    label,
  );
  const t0 = await a.evaluate(
    async ([id, value]) => {
      const at = Date.now();
      await (window as any).parley.client.updateConversation(id, { is_muted: value });
      return at;
    },
    [target.id, muted] as const,
  );
  return (await seen) - t0;
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

    // Live updates: a second context of alice (its own initial sync), B = the mirror above.
    const other = await timedInitialSync(w.browser, w.app.baseUrl, runToken('alice'), { conversations: w.alice.ids.length, files: w.alice.files });
    const a = other.session.page;
    const b = session.page;
    await waitIdle(a);
    await waitIdle(b);
    const target = await topRow(b);
    const latencies: number[] = [];
    let muted = (await b.evaluate(async (id) => (await (window as any).parley.db.conversations.get(id)).is_muted, target.id)) as boolean;
    for (let i = 0; i < LIVE_SAMPLES; i++) {
      muted = !muted;
      latencies.push(await liveOnce(a, b, target, muted));
      await waitIdle(a);
      await waitIdle(b);
    }
    log(`live latency over ${LIVE_SAMPLES}: ${latencies.map((x) => x.toFixed(0)).join(', ')} ms`);
    if (latencies.some((x) => Number.isNaN(x))) throw new Error(`a live update never showed in the other context (${target.title})`);
    await other.session.context.close();

    // Idle: nobody touches anything for a minute.
    await waitIdle(b);
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
      { name: `live update, another context, to the row on screen: p50 (${LIVE_SAMPLES} samples)`, value: round(percentile(latencies, 50) / 1000, 3), unit: 's' },
      { name: 'live update: p95', value: round(percentile(latencies, 95) / 1000, 3), unit: 's', target: { op: '<=' as const, value: 2 } },
      { name: 'idle signed-in client: requests per minute (live stream open)', value: round(idlePerMinute, 1), unit: 'req/min', target: { op: '<=' as const, value: 5 } },
      { name: 'plain server: sync pass, nothing changed: time', value: round(median(plainPasses.map((x) => x.ms)) / 1000, 2), unit: 's' },
      { name: 'plain server: sync pass, nothing changed: requests', value: median(plainPasses.map((x) => x.requests)), unit: 'req' },
    ];
  },
};
