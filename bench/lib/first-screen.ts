// The first screen, measured the same way in Parley and in its floor (bench/next-noop's
// /first-screen: one client component rendering 60 rows from IndexedDB with Dexie's
// useLiveQuery): cold loads of a page whose IndexedDB already holds the mirror, in Debian's
// Chromium through Playwright, with the CPU slowed as on a mid-range phone.
//
// What a load records (an init script, installed before any of the page's scripts run):
// - first contentful paint (the `paint` entry);
// - when the first row was painted: the first element matching ROW (a data row: role="row" with
//   aria-rowindex, not a placeholder) seen by a MutationObserver, then the frame after it was
//   laid out (requestAnimationFrame, then a message: the task after that frame's paint);
// - every long task (`PerformanceObserver({type: 'longtask', buffered: true})`): start, duration;
// - every long animation frame (`long-animation-frame`, Chromium ≥ 123) with its script entries:
//   each entry point that ran in the frame (a script's evaluation, a timer, an event, a promise
//   resolution, a message) with its source URL, function name and duration. This is what
//   attributes a long task to a script (the longtask entry itself only names the frame).
import { gzipSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { sleep } from './stats';

/** A data row of the list, painted (the app's VirtualTable and the floor mark rows alike). */
export const ROW = '[role=row][aria-rowindex]:not([aria-busy])';
/** Chromium's CPU slowdown; 4 is Lighthouse's mobile preset (a mid-range phone). */
export const CPU_RATE = Number(process.env.BENCH_FIRST_SCREEN_CPU || 4);
/** A load ends once no long task has ended for this long after the rows were painted (Lighthouse's TTI waits 5 s). */
export const QUIET_MS = Number(process.env.BENCH_FIRST_SCREEN_QUIET_MS || 5_000);

/** Plain JS (not a function tsx would compile with its helpers). */
export const OBSERVERS = `globalThis.__name = globalThis.__name || ((f) => f);
(() => {
  const s = { fcp: null, rowsAt: null, tasks: [], frames: [] };
  globalThis.__firstScreen = s;
  new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.name === 'first-contentful-paint') s.fcp = e.startTime; }).observe({ type: 'paint', buffered: true });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) s.tasks.push({ start: e.startTime, duration: e.duration }); }).observe({ type: 'longtask', buffered: true });
  try {
    new PerformanceObserver((l) => {
      for (const e of l.getEntries())
        s.frames.push({ start: e.startTime, duration: e.duration, scripts: (e.scripts || []).map((x) => ({ start: x.startTime, duration: x.duration, invoker: x.invoker, type: x.invokerType, url: x.sourceURL, fn: x.sourceFunctionName })) });
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch {}
  const mo = new MutationObserver(() => {
    if (s.rowsAt !== null || !document.querySelector(${JSON.stringify(ROW)})) return;
    s.rowsAt = -1;
    mo.disconnect();
    requestAnimationFrame(() => {
      const c = new MessageChannel();
      c.port1.onmessage = () => { s.rowsAt = performance.now(); };
      c.port2.postMessage(0);
    });
  });
  mo.observe(document, { childList: true, subtree: true });
})();`;

export interface LongTask {
  start: number;
  duration: number;
}
export interface LoafScript {
  start: number;
  duration: number;
  invoker: string;
  type: string;
  url: string;
  fn: string;
}
export interface Load {
  fcpMs: number;
  rowsMs: number;
  /** Σ (duration − 50 ms) of the long tasks after FCP (a task that straddles FCP counts from FCP), as Lighthouse's TBT. */
  tbtMs: number;
  /** Long tasks ending after FCP. */
  tasks: LongTask[];
  /** Script entry points of the long animation frames after FCP (≥ 5 ms each, as Chromium reports them). */
  scripts: LoafScript[];
}

/** Closes the context's pages (their workers stop), then clears what makes a load warm: the HTTP cache, service worker and Cache Storage. IndexedDB and localStorage stay (the mirror, the session). */
async function makeCold(context: BrowserContext, page: Page, origin: string) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.clearBrowserCache');
  await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'service_workers,cache_storage' });
  return cdp;
}

/** One cold load of `url` in `context` with the CPU slowed `CPU_RATE`×, until the rows are painted and the main thread has been quiet for QUIET_MS. */
export async function coldLoad(context: BrowserContext, url: string, options: { timeoutMs?: number } = {}): Promise<Load> {
  for (const p of context.pages()) await p.close();
  const page = await context.newPage();
  try {
    const cdp = await makeCold(context, page, new URL(url).origin);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_RATE });
    await page.goto(url, { waitUntil: 'commit' });
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      await sleep(500);
      const quiet = await page.evaluate((q) => {
        const s = (globalThis as any).__firstScreen;
        if (!s || !(s.rowsAt > 0)) return false;
        const lastEnd = Math.max(s.rowsAt, ...s.tasks.map((t: LongTask) => t.start + t.duration));
        return performance.now() - lastEnd >= q;
      }, QUIET_MS);
      if (quiet) break;
      if (Date.now() > deadline) throw new Error(`${url}: no rows painted and quiet within ${options.timeoutMs ?? 120_000} ms`);
    }
    const s = (await page.evaluate(() => (globalThis as any).__firstScreen)) as { fcp: number; rowsAt: number; tasks: LongTask[]; frames: { start: number; duration: number; scripts: LoafScript[] }[] };
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    const fcp = s.fcp ?? 0;
    const tasks = s.tasks.filter((t) => t.start + t.duration > fcp);
    const tbtMs = tasks.reduce((sum, t) => sum + Math.max(0, t.start + t.duration - Math.max(t.start, fcp) - 50), 0);
    const scripts = s.frames.filter((f) => f.start + f.duration > fcp).flatMap((f) => f.scripts);
    return { fcpMs: fcp, rowsMs: s.rowsAt, tbtMs, tasks, scripts };
  } finally {
    await page.close().catch(() => {});
  }
}

/** A script's file name (chunk), or what ran when it has none. */
export const scriptName = (s: LoafScript) => (s.url ? new URL(s.url).pathname.split('/').pop()! : `(${s.type}: ${s.invoker})`);

/**
 * The module ids in a bundler chunk (Turbopack's production chunks push `[script, id, factory, id,
 * factory, …]`; ids are derived from the module's path, so the same package file has the same id
 * in the app's build and the floor's, which share the project root). A heuristic on the minified
 * text: a number followed by a factory's head (`(e,t,r)=>`, `e=>`, `function`).
 */
export async function chunkModules(url: string): Promise<Set<number>> {
  const text = await (await fetch(url)).text();
  const ids = new Set<number>();
  for (const m of text.matchAll(/[,[]\s*(\d{1,9}),\s*(?:\([\w$,\s]*\)\s*=>|[\w$]+\s*=>|function\b)/g)) ids.add(Number(m[1]));
  return ids;
}

/**
 * Which scripts are the floor's: a script the floor loads itself (same file name), or one all of
 * whose modules the floor's scripts also hold (a chunk of framework and shared packages that the
 * bundler named differently in the app's build). Every other script holds at least one module
 * the floor does not have: Parley's code or a package only Parley uses.
 */
export async function floorScriptTest(floorUrls: Iterable<string>, appUrls: Iterable<string>): Promise<(url: string) => boolean> {
  const floorNames = new Set<string>();
  const floorModules = new Set<number>();
  for (const url of floorUrls) {
    floorNames.add(new URL(url).pathname.split('/').pop()!);
    for (const id of await chunkModules(url)) floorModules.add(id);
  }
  const verdict = new Map<string, boolean>();
  for (const url of new Set(appUrls)) {
    if (!url) continue;
    const name = new URL(url).pathname.split('/').pop()!;
    verdict.set(url, floorNames.has(name) || [...(await chunkModules(url).catch(() => new Set<number>([-1])))].every((id) => floorModules.has(id)));
  }
  return (url) => verdict.get(url) ?? false;
}

/**
 * Long tasks "from Parley's own code": a long task after FCP in which script entry points (its
 * long animation frame's script entries) in scripts that are not the floor's (floorScriptTest)
 * ran for more than 50 ms. What that can attribute: a chunk's evaluation, and timers, events,
 * messages and promise callbacks whose function lives in such a chunk. What it cannot: work that
 * the framework's code runs on Parley's behalf — React rendering Parley's components (entered from
 * React's scheduler, in react-dom's chunk), Dexie's live-query callbacks, module factories run by
 * the bundler's runtime when a chunk it evaluates requires them — counts as the entry point's
 * script, which may be the floor's. For which functions ran, a CPU profile
 * (bench/profile-first-screen.ts, a diagnostic) is the tool.
 */
export function parleyLongTasks(load: Load, isFloorScript: (url: string) => boolean): { task: LongTask; parleyMs: number; top: string }[] {
  const out: { task: LongTask; parleyMs: number; top: string }[] = [];
  for (const task of load.tasks) {
    const inside = load.scripts.filter((s) => s.start >= task.start - 1 && s.start < task.start + task.duration);
    const own = inside.filter((s) => s.url && !isFloorScript(s.url));
    const parleyMs = own.reduce((sum, s) => sum + s.duration, 0);
    const top = [...inside].sort((a, b) => b.duration - a.duration).slice(0, 3).map((s) => `${scriptName(s)}${s.fn ? ` ${s.fn}` : ''} [${s.type}${s.url && !isFloorScript(s.url) ? ', Parley' : ''}] ${s.duration.toFixed(0)} ms`).join('; ');
    if (parleyMs > 50) out.push({ task, parleyMs, top });
  }
  return out;
}

/** Gzipped (zlib's default level, as servers use) and raw bytes of the given scripts. */
export async function jsBytes(urls: string[]) {
  let raw = 0;
  let gzip = 0;
  for (const url of urls) {
    const res = await fetch(url, { headers: { 'Accept-Encoding': 'identity' } });
    const body = Buffer.from(await res.arrayBuffer());
    raw += body.length;
    gzip += gzipSync(body).length;
  }
  return { raw, gzip };
}

/** The scripts a page's main thread loaded (resource timing), optionally only those requested before a performance mark. */
export function pageScripts(page: Page, beforeMark?: string): Promise<{ name: string; type: string; prefetch: boolean }[]> {
  return page.evaluate((markName) => {
    const mark = (markName && performance.getEntriesByName(markName, 'mark')[0]?.startTime) || Infinity;
    return performance
      .getEntriesByType('resource')
      .map((e) => ({ name: e.name, type: (e as PerformanceResourceTiming).initiatorType, prefetch: e.startTime >= mark }))
      .filter((e) => /\.m?js$/.test(new URL(e.name).pathname) && e.type !== 'fetch' && e.type !== 'other');
  }, beforeMark ?? '');
}

/** A context on the floor's origin whose IndexedDB holds `n` conversations (seeded by /seed). */
export async function floorContext(browser: import('playwright-core').Browser, baseUrl: string, n: number): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 390, height: 844 } });
  await context.addInitScript(OBSERVERS);
  const page = await context.newPage();
  await page.goto(`/seed?n=${n}`);
  await page.locator(`output[data-seeded="${n}"]`).waitFor({ timeout: 120_000 });
  await page.close();
  return context;
}
