// 7. The app: first-load JavaScript of the conversations page (`/`, signed in), gzipped; and
//    Lighthouse 12 (mobile preset: simulated slow 4G, 4× CPU slowdown) on Debian's Chromium via
//    chrome-launcher — the signed-in conversations screen (token put in localStorage through
//    puppeteer-core before the run, Lighthouse's storage reset off but cache, service worker,
//    Cache Storage and IndexedDB cleared by hand: a cold load of a signed-in user) and the
//    sign-in page (standard run, storage reset on).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import puppeteer from 'puppeteer-core';
import { CHROMIUM, CHROMIUM_ARGS, openSignedIn } from '../lib/app';
import { releaseAliceMirror, syncWorld } from '../lib/mirror';
import { tempDir } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, round } from '../lib/stats';

const LH_RUNS = Number(process.env.BENCH_LIGHTHOUSE_RUNS || 3);

async function jsBytes(urls: string[]) {
  let raw = 0;
  let gzip = 0;
  for (const url of urls) {
    const res = await fetch(url, { headers: { 'Accept-Encoding': 'identity' } });
    const body = Buffer.from(await res.arrayBuffer());
    raw += body.length;
    gzip += gzipSync(body).length; // zlib's default level, as servers use
  }
  return { raw, gzip };
}

async function lighthouseRun(url: string, token: string | null): Promise<{ performance: number; accessibility: number; lcpMs: number; tbtMs: number }> {
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: [...CHROMIUM_ARGS, '--headless=new'], userDataDir: tempDir('lighthouse') });
  try {
    const flags = { port: chrome.port, output: 'json' as const, logLevel: 'error' as const, onlyCategories: ['performance', 'accessibility'] };
    let result;
    if (token) {
      const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${chrome.port}`, defaultViewport: null });
      const page = await browser.newPage();
      await page.goto(url);
      await page.evaluate((t) => localStorage.setItem('parley:token', t), token);
      const cdp = await page.createCDPSession();
      await cdp.send('Storage.clearDataForOrigin', { origin: new URL(url).origin, storageTypes: 'service_workers,cache_storage,indexeddb' });
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
      writeFileSync(join(process.env.BENCH_LIGHTHOUSE_DUMP, `lighthouse-${token ? 'signed-in' : 'sign-in'}-${Date.now()}.json`), JSON.stringify(lhr));
    }
    return {
      performance: Math.round((lhr.categories.performance?.score ?? NaN) * 100),
      accessibility: Math.round((lhr.categories.accessibility?.score ?? NaN) * 100),
      lcpMs: lhr.audits['largest-contentful-paint']?.numericValue ?? NaN,
      tbtMs: lhr.audits['total-blocking-time']?.numericValue ?? NaN,
    };
  } finally {
    chrome.kill();
  }
}

export const app: Scenario = {
  name: 'app',
  title: 'The app: first-load JS of / (signed in) and Lighthouse (mobile) on Debian Chromium',
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
    const all: { name: string; type: string; prefetch: boolean }[] = await session.page.evaluate(() => {
      const mark = performance.getEntriesByName('parley:offline-preload', 'mark')[0]?.startTime ?? Infinity;
      return performance
        .getEntriesByType('resource')
        .map((e) => ({ name: e.name, type: (e as PerformanceResourceTiming).initiatorType, prefetch: e.startTime >= mark }))
        .filter((e) => /\.m?js$/.test(new URL(e.name).pathname) && e.type !== 'fetch' && e.type !== 'other');
    });
    const entries = all.filter((e) => !e.prefetch);
    const pageScripts = entries.map((e) => e.name);
    const prefetched = await jsBytes(all.filter((e) => e.prefetch).map((e) => e.name));
    log(`page scripts: ${entries.map((e) => `${new URL(e.name).pathname.split('/').pop()} (${e.type})`).join(', ')}`);
    const workerScripts = session.scripts;
    await session.context.close();
    const page = await jsBytes(pageScripts);
    const later = [...workerScripts].filter((u) => !all.some((e) => e.name === u) && !u.endsWith('/sw.js'));
    const worker = await jsBytes(later);
    log(`first-load JS: ${pageScripts.length} scripts, ${(page.raw / 1024).toFixed(0)} KiB raw, ${(page.gzip / 1024).toFixed(1)} KiB gzipped; sync worker: ${later.length} scripts, ${(worker.gzip / 1024).toFixed(1)} KiB gzipped`);

    const signedIn: Awaited<ReturnType<typeof lighthouseRun>>[] = [];
    const signedOut: Awaited<ReturnType<typeof lighthouseRun>>[] = [];
    for (let r = 0; r < LH_RUNS; r++) {
      signedIn.push(await lighthouseRun(`${base}/`, runToken('carol')));
      log(`lighthouse ${r + 1}/${LH_RUNS} conversations screen: ${JSON.stringify(signedIn.at(-1))}`);
    }
    signedOut.push(await lighthouseRun(`${base}/`, null));
    log(`lighthouse sign-in page: ${JSON.stringify(signedOut[0])}`);
    const med = (xs: typeof signedIn, k: keyof (typeof signedIn)[number]) => median(xs.map((x) => x[k]));
    return [
      { name: 'first-load JS of / (main thread, gzipped)', value: round(page.gzip / 1024, 1), unit: 'KiB', target: { op: '<=', value: 150 } },
      { name: 'first-load JS of / (uncompressed)', value: round(page.raw / 1024, 1), unit: 'KiB' },
      { name: 'prefetched once the first screen is idle (write path, other screens; gzipped)', value: round(prefetched.gzip / 1024, 1), unit: 'KiB' },
      { name: 'sync worker JS (loaded by the worker, gzipped)', value: round(worker.gzip / 1024, 1), unit: 'KiB' },
      { name: `Lighthouse mobile, conversations screen (signed in): performance (median of ${LH_RUNS})`, value: med(signedIn, 'performance'), unit: '', target: { op: '>=', value: 95 } },
      { name: 'Lighthouse mobile, conversations screen: accessibility', value: med(signedIn, 'accessibility'), unit: '', target: { op: '>=', value: 100 } },
      { name: 'Lighthouse mobile, conversations screen: LCP', value: round(med(signedIn, 'lcpMs'), 0), unit: 'ms' },
      { name: 'Lighthouse mobile, conversations screen: TBT', value: round(med(signedIn, 'tbtMs'), 0), unit: 'ms' },
      { name: 'Lighthouse mobile, sign-in page: performance (1 run)', value: signedOut[0]!.performance, unit: '', target: { op: '>=', value: 95 } },
      { name: 'Lighthouse mobile, sign-in page: accessibility', value: signedOut[0]!.accessibility, unit: '', target: { op: '>=', value: 100 } },
    ];
  },
};
