// 8. The first screen on a mid-range phone (issue 22), against its floor in the same run: the
//    floor page of bench/next-noop (/first-screen: Next's app router, one client component reading
//    60 rows from IndexedDB with Dexie's useLiveQuery; bench/lib/first-screen.ts), and Parley's
//    signed-in conversations screen, both with their IndexedDB already holding the mirror, loaded
//    cold (HTTP cache, service worker and Cache Storage cleared before each load) in Debian's
//    Chromium through Playwright with the CPU slowed 4× (CDP Emulation.setCPUThrottlingRate; the
//    network is loopback, not throttled).
//    - 1,000 conversations mirrored (dave: a fifth with 5 files): Total Blocking Time after first
//      contentful paint, first paint, first rows; long tasks after first paint, and those spent
//      in scripts the floor does not load (Parley's own code; see parleyLongTasks for what that
//      can and cannot attribute). Loads alternate floor, app, floor, …, floor (A/B/A): `runs` app
//      loads (BENCH_FIRST_SCREEN_RUNS, 5) between runs + 1 floor loads; medians.
//    - 10,000 conversations mirrored (alice): time from opening the page to the first rows
//      painted, Parley vs the floor (its IndexedDB holding 10,000 rows, showing 60), A/B/A the same way.
import type { Browser, BrowserContext } from 'playwright-core';
import { waitIdle } from '../lib/app';
import type { FigureInput } from '../lib/figures';
import { coldLoad, CPU_RATE, floorContext, floorScriptTest, OBSERVERS, parleyLongTasks, type Load } from '../lib/first-screen';
import { daveData, FIRST_SCREEN_CONVERSATIONS, releaseAliceMirror, SYNC_CONVERSATIONS, syncWorld, type SyncWorld } from '../lib/mirror';
import { ensureNoopBuild, startNoop } from '../lib/next-noop';
import type { Scenario } from '../lib/scenario';
import { runToken, type BENCH_TOKENS } from '../lib/seed';
import { median, round } from '../lib/stats';

const RUNS = Number(process.env.BENCH_FIRST_SCREEN_RUNS || 5);
/** Conversations mirrored for the main-thread figures (TBT, long tasks). */
const MIRRORED = FIRST_SCREEN_CONVERSATIONS;

/** A context signed in as `user` whose mirror is complete (every conversation), then no longer exposing window.parley. */
export async function appContext(w: SyncWorld, user: keyof typeof BENCH_TOKENS, conversations: number, log: (m: string) => void): Promise<BrowserContext> {
  const context = await w.browser.newContext({ baseURL: w.app.baseUrl, viewport: { width: 390, height: 844 } });
  await context.addInitScript(OBSERVERS);
  const token = runToken(user);
  await context.addInitScript((t) => localStorage.setItem('parley:token', t), token);
  const page = await context.newPage();
  await page.goto('/');
  await page.evaluate(() => localStorage.setItem('parley:expose', '1'));
  const t0 = Date.now();
  await page.reload();
  await page.waitForFunction(() => 'parley' in window, null, { timeout: 120_000 });
  // Idle with every conversation in (the worker may be idle for a moment before its first pass).
  let count = 0;
  for (const deadline = Date.now() + 300_000; ; ) {
    await waitIdle(page, 300_000);
    count = await page.evaluate(() => (window as any).parley.db.conversations.count());
    if (count === conversations) break;
    if (Date.now() > deadline) throw new Error(`${user}'s mirror holds ${count} conversations, not ${conversations}`);
    await page.waitForTimeout(500);
  }
  log(`${user}: ${count} conversations mirrored in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await page.evaluate(() => localStorage.removeItem('parley:expose'));
  await page.close();
  return context;
}

/** Floor, app, floor, …, app, floor. */
async function abA(runs: number, floor: () => Promise<Load>, app: () => Promise<Load>, log: (m: string) => void, label: string) {
  const floors: Load[] = [];
  const apps: Load[] = [];
  const show = (l: Load) => `FCP ${l.fcpMs.toFixed(0)} ms, rows ${l.rowsMs.toFixed(0)} ms, TBT ${l.tbtMs.toFixed(0)} ms, ${l.tasks.length} long tasks (${l.tasks.map((t) => t.duration.toFixed(0)).join(' ')})`;
  for (let r = 0; r < runs; r++) {
    floors.push(await floor());
    log(`${label} floor ${r + 1}: ${show(floors.at(-1)!)}`);
    apps.push(await app());
    log(`${label} app ${r + 1}: ${show(apps.at(-1)!)}`);
  }
  floors.push(await floor());
  log(`${label} floor ${runs + 1}: ${show(floors.at(-1)!)}`);
  return { floors, apps };
}

export const firstScreen: Scenario = {
  name: 'first-screen',
  title: `The first screen vs its floor (Next + Dexie + useLiveQuery, 60 rows), cold loads, CPU ${CPU_RATE}× slower, A/B/A`,
  async run({ log }) {
    await releaseAliceMirror();
    await ensureNoopBuild(log);
    const w = await syncWorld(log);
    const noop = await startNoop();
    const contexts: BrowserContext[] = [];
    const browser: Browser = w.browser;
    try {
      const out: FigureInput[] = [];
      const med = (loads: Load[], f: (l: Load) => number) => median(loads.map(f));

      // 1. Main thread, MIRRORED conversations mirrored.
      daveData(w);
      const app1k = await appContext(w, 'dave', MIRRORED, log);
      const floor1k = await floorContext(browser, noop.baseUrl, MIRRORED);
      contexts.push(app1k, floor1k);
      // The floor's scripts: what is not among them (by name or by modules) is Parley's code or a package only it uses.
      const floorUrls = new Set<string>();
      floor1k.on('request', (r) => void (r.resourceType() === 'script' && floorUrls.add(r.url())));
      const n = MIRRORED.toLocaleString('en-US');
      const main = await abA(RUNS, () => coldLoad(floor1k, `${noop.baseUrl}/first-screen`), () => coldLoad(app1k, `${w.app.baseUrl}/`), log, `${n} mirrored:`);
      const isFloorScript = await floorScriptTest(floorUrls, main.apps.flatMap((l) => l.scripts.map((x) => x.url)).filter((u) => u.startsWith(w.app.baseUrl)));
      const own = main.apps.map((l) => parleyLongTasks(l, isFloorScript));
      own.forEach((tasks, i) => tasks.length && log(`app ${i + 1}: long tasks in Parley's scripts: ${tasks.map((t) => `${t.task.duration.toFixed(0)} ms at ${t.task.start.toFixed(0)} (Parley ${t.parleyMs.toFixed(0)} ms: ${t.top})`).join(' | ')}`));
      const tbtApp = med(main.apps, (l) => l.tbtMs);
      const tbtFloor = med(main.floors, (l) => l.tbtMs);
      const runsNote = `median of ${RUNS}; floor: of ${RUNS + 1}, A/B/A`;
      out.push(
        { name: `${n} conversations mirrored, cold load, CPU ${CPU_RATE}×: TBT after FCP, floor (${runsNote})`, value: round(tbtFloor, 0), unit: 'ms' },
        { name: `${n} mirrored: TBT after FCP, Parley`, value: round(tbtApp, 0), unit: 'ms' },
        { name: `${n} mirrored: TBT vs floor`, value: round(tbtApp / tbtFloor, 2), unit: '×', target: { op: '<=', value: 1.5 } },
        { name: `${n} mirrored: first contentful paint, floor / Parley`, value: round(med(main.floors, (l) => l.fcpMs), 0), unit: `ms / ${round(med(main.apps, (l) => l.fcpMs), 0)} ms` },
        { name: `${n} mirrored: first rows painted, floor`, value: round(med(main.floors, (l) => l.rowsMs), 0), unit: 'ms' },
        { name: `${n} mirrored: first rows painted, Parley`, value: round(med(main.apps, (l) => l.rowsMs), 0), unit: 'ms' },
        { name: `${n} mirrored: long tasks after FCP, floor / Parley (median count)`, value: med(main.floors, (l) => l.tasks.length), unit: `/ ${med(main.apps, (l) => l.tasks.length)}` },
        { name: `${n} mirrored: longest task after FCP, floor / Parley (median)`, value: round(med(main.floors, (l) => Math.max(0, ...l.tasks.map((t) => t.duration))), 0), unit: `ms / ${round(med(main.apps, (l) => Math.max(0, ...l.tasks.map((t) => t.duration))), 0)} ms` },
        { name: `${n} mirrored: long tasks after FCP with > 50 ms in Parley's own scripts (median per load; entry points only)`, value: median(own.map((t) => t.length)), unit: '', target: { op: '<=', value: 0 } },
      );
      for (const c of contexts.splice(0)) await c.close();

      // 2. Opening the app with SYNC_CONVERSATIONS mirrored: to the first rows painted.
      const big = SYNC_CONVERSATIONS.toLocaleString('en-US');
      const appBig = await appContext(w, 'alice', SYNC_CONVERSATIONS, log);
      const floorBig = await floorContext(browser, noop.baseUrl, SYNC_CONVERSATIONS);
      contexts.push(appBig, floorBig);
      const open = await abA(RUNS, () => coldLoad(floorBig, `${noop.baseUrl}/first-screen`), () => coldLoad(appBig, `${w.app.baseUrl}/`), log, `${big} mirrored:`);
      const rowsApp = med(open.apps, (l) => l.rowsMs);
      const rowsFloor = med(open.floors, (l) => l.rowsMs);
      out.push(
        { name: `${big} conversations mirrored, cold load, CPU ${CPU_RATE}×: opening → first rows painted, floor (${runsNote})`, value: round(rowsFloor, 0), unit: 'ms' },
        { name: `${big} mirrored: opening → first rows painted, Parley`, value: round(rowsApp, 0), unit: 'ms' },
        { name: `${big} mirrored: first rows vs floor`, value: round(rowsApp / rowsFloor, 2), unit: '×' },
        { name: `${big} mirrored: TBT after FCP, floor / Parley`, value: round(med(open.floors, (l) => l.tbtMs), 0), unit: `ms / ${round(med(open.apps, (l) => l.tbtMs), 0)} ms` },
      );
      return out;
    } finally {
      for (const c of contexts) await c.close().catch(() => {});
      await noop.child.stop();
    }
  },
};
