// 7. The app: first-load JavaScript of the conversations page (`/`, signed in), gzipped, against
//    the floor's (bench/next-noop's /first-screen: Next's app router, one client component, Dexie
//    and useLiveQuery rendering 60 rows; bench/lib/first-screen.ts), measured the same way; and
//    Lighthouse 12 (mobile preset: simulated slow 4G, 4× CPU slowdown) on Debian's Chromium via
//    chrome-launcher, A/B/A with the floor: the signed-in conversations screen with 1,000
//    conversations mirrored (dave: signed in and synced first through puppeteer-core, then the
//    HTTP cache, service worker and Cache Storage cleared by hand and Lighthouse's storage reset
//    turned off: a cold load of a signed-in user whose mirror is on the device), the floor page
//    with 1,000 rows in its IndexedDB (the same preparation), and the sign-in page (standard run,
//    storage reset on); then the accessibility of every other screen (a conversation, the files
//    list, the viewer, the device screen), signed in the same way.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import puppeteer, { type Page as PuppeteerPage } from 'puppeteer-core';
import { CHROMIUM, CHROMIUM_ARGS, openSignedIn } from '../lib/app';
import { floorContext, jsBytes, pageScripts, ROW } from '../lib/first-screen';
import { daveData, FIRST_SCREEN_CONVERSATIONS, releaseAliceMirror, syncWorld } from '../lib/mirror';
import { ensureNoopBuild, startNoop } from '../lib/next-noop';
import { tempDir } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, round } from '../lib/stats';

const LH_RUNS = Number(process.env.BENCH_LIGHTHOUSE_RUNS || 5);

type LighthouseResult = { performance: number; accessibility: number; lcpMs: number; tbtMs: number; failing: string[] };

/**
 * One Lighthouse run in a fresh Chromium profile. `prepare` (if given) runs first in a page of
 * that profile (sign in and sync, or fill the floor's IndexedDB); then the HTTP cache, service
 * worker and Cache Storage of the origin are cleared and Lighthouse runs with its storage reset
 * off, so IndexedDB and localStorage stay and the load is otherwise cold.
 */
async function lighthouseRun(
  url: string,
  label: string,
  prepare?: (page: PuppeteerPage) => Promise<void>,
  categories: string[] = ['performance', 'accessibility'],
): Promise<LighthouseResult> {
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: [...CHROMIUM_ARGS, '--headless=new'], userDataDir: tempDir('lighthouse') });
  try {
    const flags = { port: chrome.port, output: 'json' as const, logLevel: 'error' as const, onlyCategories: categories };
    let result;
    if (prepare) {
      const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${chrome.port}`, defaultViewport: null });
      const page = await browser.newPage();
      await prepare(page);
      const cdp = await page.createCDPSession();
      await cdp.send('Storage.clearDataForOrigin', { origin: new URL(url).origin, storageTypes: 'service_workers,cache_storage' });
      await cdp.send('Network.clearBrowserCache');
      await page.goto('about:blank');
      result = await lighthouse(url, { ...flags, disableStorageReset: true }, undefined, page as never);
      await browser.disconnect();
    } else {
      result = await lighthouse(url, flags);
    }
    const lhr = result!.lhr;
    if (lhr.runtimeError) throw new Error(`lighthouse: ${lhr.runtimeError.message}`);
    // BENCH_LIGHTHOUSE_DUMP=dir keeps each report (long tasks, bootup time, main-thread breakdown)
    // for whoever works on the score next.
    if (process.env.BENCH_LIGHTHOUSE_DUMP) {
      mkdirSync(process.env.BENCH_LIGHTHOUSE_DUMP, { recursive: true });
      writeFileSync(join(process.env.BENCH_LIGHTHOUSE_DUMP, `lighthouse-${label}-${Date.now()}.json`), JSON.stringify(lhr));
    }
    return {
      performance: Math.round((lhr.categories.performance?.score ?? NaN) * 100),
      accessibility: Math.round((lhr.categories.accessibility?.score ?? NaN) * 100),
      lcpMs: lhr.audits['largest-contentful-paint']?.numericValue ?? NaN,
      tbtMs: lhr.audits['total-blocking-time']?.numericValue ?? NaN,
      // The accessibility audits that failed, by id (what to fix when the score is below 100).
      failing: (lhr.categories.accessibility?.auditRefs ?? []).filter((a) => a.weight > 0 && lhr.audits[a.id]?.score === 0).map((a) => a.id),
    };
  } finally {
    chrome.kill();
  }
}

/** Signs in with `token` and waits until the mirror is complete ("All synced"). */
const signedInAndSynced = (base: string, token: string) => async (page: PuppeteerPage) => {
  await page.goto(`${base}/`);
  await page.evaluate((t) => localStorage.setItem('parley:token', t), token);
  await page.goto(`${base}/`);
  await page.waitForFunction(() => document.querySelector('[data-testid="sync-status"]')?.textContent?.includes('All synced'), { timeout: 180_000, polling: 250 });
};

/** Fills the floor's IndexedDB with `n` conversations. */
const floorSeeded = (base: string, n: number) => async (page: PuppeteerPage) => {
  await page.goto(`${base}/seed?n=${n}`);
  await page.waitForSelector(`output[data-seeded="${n}"]`, { timeout: 120_000 });
};

export const app: Scenario = {
  name: 'app',
  title: 'The app: first-load JS of / (signed in) and Lighthouse (mobile) on Debian Chromium, each against the floor page',
  async run({ log }) {
    await releaseAliceMirror();
    const w = await syncWorld(log);
    const base = w.app.baseUrl;

    // First-load JS: the scripts the page's main thread loaded (resource timing), cold context.
    const session = await openSignedIn(w.browser, base, runToken('carol'));
    // Not 'networkidle': the sync worker's change feed is one request that stays open. Instead:
    // the first screen is shown, the mirror is complete, and no script the page asked for is
    // still loading (those asked for later, e.g. on the first write, are not the first screen's).
    const loading = new Set<string>();
    session.page.on('request', (r) => void (r.resourceType() === 'script' && loading.add(r.url())));
    session.page.on('requestfinished', (r) => void loading.delete(r.url()));
    session.page.on('requestfailed', (r) => void loading.delete(r.url()));
    await session.page.getByRole('heading', { name: 'Conversations' }).waitFor({ timeout: 30_000 });
    await session.page.getByTestId('sync-status').filter({ hasText: 'All synced' }).waitFor({ timeout: 120_000 });
    for (const deadline = Date.now() + 30_000; loading.size > 0; await new Promise((r) => setTimeout(r, 100))) {
      if (Date.now() > deadline) throw new Error(`scripts still loading: ${[...loading].join(', ')}`);
    }
    // Scripts requested before the app's idle-time prefetch began (the mark of
    // app/_components/preload.ts: the screens and the write path the first screen does not need,
    // fetched once it is idle); that prefetch is reported apart.
    const all = await pageScripts(session.page, 'parley:offline-preload');
    const entries = all.filter((e) => !e.prefetch);
    const firstLoad = entries.map((e) => e.name);
    const prefetched = await jsBytes(all.filter((e) => e.prefetch).map((e) => e.name));
    log(`page scripts: ${entries.map((e) => `${new URL(e.name).pathname.split('/').pop()} (${e.type})`).join(', ')}`);
    const workerScripts = session.scripts;
    await session.context.close();
    const page = await jsBytes(firstLoad);
    // (The service worker's own scripts, /sw.js and its IndexedDB half /sw-background.js, are not the sync worker's.)
    const later = [...workerScripts].filter((u) => !all.some((e) => e.name === u) && !/^\/sw(-background)?\.js$/.test(new URL(u).pathname));
    const worker = await jsBytes(later);
    log(`first-load JS: ${firstLoad.length} scripts, ${(page.raw / 1024).toFixed(0)} KiB raw, ${(page.gzip / 1024).toFixed(1)} KiB gzipped; sync worker: ${later.length} scripts, ${(worker.gzip / 1024).toFixed(1)} KiB gzipped`);

    // The floor's first-load JS, the same way: a cold load of /first-screen (60 rows in its
    // IndexedDB) until its rows are shown and no script it asked for is still loading.
    await ensureNoopBuild(log);
    const noop = await startNoop();
    let floorJs: { raw: number; gzip: number };
    const lhFloor: LighthouseResult[] = [];
    const lhApp: LighthouseResult[] = [];
    const signedOut: LighthouseResult[] = [];
    try {
      const floor = await floorContext(w.browser, noop.baseUrl, 60);
      const floorPage = await floor.newPage();
      const floorLoading = new Set<string>();
      floorPage.on('request', (r) => void (r.resourceType() === 'script' && floorLoading.add(r.url())));
      floorPage.on('requestfinished', (r) => void floorLoading.delete(r.url()));
      floorPage.on('requestfailed', (r) => void floorLoading.delete(r.url()));
      await floorPage.goto('/first-screen');
      await floorPage.locator(ROW).first().waitFor({ timeout: 60_000 });
      for (const deadline = Date.now() + 30_000; floorLoading.size > 0; await new Promise((r) => setTimeout(r, 100))) {
        if (Date.now() > deadline) throw new Error(`floor scripts still loading: ${[...floorLoading].join(', ')}`);
      }
      const floorScripts = await pageScripts(floorPage);
      log(`floor scripts: ${floorScripts.map((e) => new URL(e.name).pathname.split('/').pop()).join(', ')}`);
      floorJs = await jsBytes(floorScripts.map((e) => e.name));
      await floor.close();
      log(`floor first-load JS: ${floorScripts.length} scripts, ${(floorJs.raw / 1024).toFixed(0)} KiB raw, ${(floorJs.gzip / 1024).toFixed(1)} KiB gzipped`);

      // Lighthouse, A/B/A: floor, app, floor, …, floor; both with 1,000 conversations on the device.
      const n = FIRST_SCREEN_CONVERSATIONS;
      daveData(w);
      const floorRun = async (r: number) => {
        lhFloor.push(await lighthouseRun(`${noop.baseUrl}/first-screen`, 'floor', floorSeeded(noop.baseUrl, n)));
        log(`lighthouse ${r + 1}/${LH_RUNS + 1} floor (${n} rows in IndexedDB): ${JSON.stringify(lhFloor.at(-1))}`);
      };
      for (let r = 0; r < LH_RUNS; r++) {
        await floorRun(r);
        lhApp.push(await lighthouseRun(`${base}/`, 'signed-in', signedInAndSynced(base, runToken('dave'))));
        log(`lighthouse ${r + 1}/${LH_RUNS} conversations screen (${n} mirrored): ${JSON.stringify(lhApp.at(-1))}`);
      }
      await floorRun(LH_RUNS);
    } finally {
      await noop.child.stop();
    }
    signedOut.push(await lighthouseRun(`${base}/`, 'sign-in'));
    log(`lighthouse sign-in page: ${JSON.stringify(signedOut[0])}`);
    // Accessibility of every other screen, signed in with the same mirror (Lighthouse's score is
    // axe-core's audits, weighted): a conversation with files, the files list, a file in the
    // viewer, the device screen.
    const dave = runToken('dave');
    const filesOf = async (id: string) =>
      ((await (await fetch(`${base}/v1/files?conversation_id=${encodeURIComponent(id)}&limit=1`, { headers: { authorization: `Bearer ${dave}` } })).json()).data ?? []) as { id: string }[];
    let withFiles = daveData(w).ids[0]!;
    let file: { id: string } | undefined;
    for (const id of daveData(w).ids.slice(0, 20)) {
      [file] = await filesOf(id);
      if (file) {
        withFiles = id;
        break;
      }
    }
    const screens: [string, string][] = [
      ['conversation', `/?c=${encodeURIComponent(withFiles)}`],
      ['files', '/?view=files'],
      ...(file ? [['file viewer', `/?file=${encodeURIComponent(file.id)}`] as [string, string]] : []),
      ['device', '/?view=device'],
    ];
    const screenA11y: { screen: string; result: LighthouseResult }[] = [];
    for (const [screen, path] of screens) {
      const result = await lighthouseRun(`${base}${path}`, `a11y-${screen.replace(' ', '-')}`, signedInAndSynced(base, dave), ['accessibility']);
      screenA11y.push({ screen, result });
      log(`lighthouse ${screen} screen: accessibility ${result.accessibility}${result.failing.length ? ` (failing: ${result.failing.join(', ')})` : ''}`);
    }
    const med = (xs: LighthouseResult[], k: 'performance' | 'accessibility' | 'lcpMs' | 'tbtMs') => median(xs.map((x) => x[k]));
    const n = FIRST_SCREEN_CONVERSATIONS.toLocaleString('en-US');
    return [
      { name: 'first-load JS of / (main thread, gzipped)', value: round(page.gzip / 1024, 1), unit: 'KiB' },
      { name: 'first-load JS of / (uncompressed)', value: round(page.raw / 1024, 1), unit: 'KiB' },
      { name: 'first-load JS of the floor (Next app router + Dexie + useLiveQuery, 60 rows; gzipped)', value: round(floorJs.gzip / 1024, 1), unit: 'KiB' },
      { name: 'first-load JS of the floor (uncompressed)', value: round(floorJs.raw / 1024, 1), unit: 'KiB' },
      { name: 'first-load JS of / minus the floor\'s (gzipped)', value: round((page.gzip - floorJs.gzip) / 1024, 1), unit: 'KiB', target: { op: '<=', value: 25 } },
      { name: 'prefetched once the first screen is idle (write path, other screens; gzipped)', value: round(prefetched.gzip / 1024, 1), unit: 'KiB' },
      { name: 'sync worker JS (loaded by the worker, gzipped)', value: round(worker.gzip / 1024, 1), unit: 'KiB' },
      { name: `Lighthouse mobile, floor page (${n} rows in IndexedDB): performance (median of ${LH_RUNS + 1}, A/B/A)`, value: med(lhFloor, 'performance'), unit: '' },
      { name: `Lighthouse mobile, conversations screen (signed in, ${n} mirrored): performance (median of ${LH_RUNS})`, value: med(lhApp, 'performance'), unit: '' },
      { name: 'Lighthouse mobile: floor minus conversations screen (performance points)', value: med(lhFloor, 'performance') - med(lhApp, 'performance'), unit: '', target: { op: '<=', value: 5 } },
      { name: 'Lighthouse mobile, conversations screen: accessibility', value: med(lhApp, 'accessibility'), unit: '', target: { op: '>=', value: 100 } },
      { name: 'Lighthouse mobile, conversations screen: LCP', value: round(med(lhApp, 'lcpMs'), 0), unit: 'ms' },
      { name: 'Lighthouse mobile, conversations screen: TBT', value: round(med(lhApp, 'tbtMs'), 0), unit: 'ms' },
      { name: 'Lighthouse mobile, floor page: LCP', value: round(med(lhFloor, 'lcpMs'), 0), unit: 'ms' },
      { name: 'Lighthouse mobile, floor page: TBT', value: round(med(lhFloor, 'tbtMs'), 0), unit: 'ms' },
      { name: 'Lighthouse mobile, conversations screen: TBT vs floor', value: round(med(lhApp, 'tbtMs') / med(lhFloor, 'tbtMs'), 2), unit: '×' },
      { name: 'Lighthouse mobile, sign-in page: performance (1 run)', value: signedOut[0]!.performance, unit: '' },
      { name: 'Lighthouse mobile, sign-in page: accessibility', value: signedOut[0]!.accessibility, unit: '', target: { op: '>=', value: 100 } },
      ...screenA11y.map(({ screen, result }) => ({ name: `Lighthouse mobile, ${screen} screen: accessibility`, value: result.accessibility, unit: '', target: { op: '>=' as const, value: 100 } })),
    ];
  },
};
