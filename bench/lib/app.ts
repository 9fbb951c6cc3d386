// The real app for the browser scenarios: the Next build (built when missing or stale, as
// `npm start` does), served by server.ts — what `npm start` runs — in a child process on a free
// loopback port with its own DATA_DIR; and Debian's Chromium driven by playwright-core.
import { spawnSync } from 'node:child_process';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildState } from '../../scripts/build-state.mjs';
import { freePort, ROOT, startChild, type Child } from './proc';
import { PARLEY_TOKENS } from './seed';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

let buildChecked = false;
/**
 * Same rule as scripts/start.mjs: build when the build's stamp is missing or its digest of the
 * sources differs (contents, not mtimes: the service worker the build writes into public/ is
 * generated, not a source, so a fresh build is not taken for a stale one).
 */
export function ensureAppBuild(log: (m: string) => void): void {
  if (buildChecked) return;
  const state = buildState(ROOT);
  if (!state.current) {
    log(`building the app (npm run build: ${state.reason})…`);
    const started = Date.now();
    const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' }, maxBuffer: 64 * 1024 * 1024 });
    if (result.status !== 0) throw new Error(`npm run build failed:\n${(result.stdout + result.stderr).slice(-4000)}`);
    log(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  buildChecked = true;
}

export interface App {
  baseUrl: string;
  child: Child;
}

/** server.ts (what `npm start` runs after its build check) on a free 127.0.0.1 port. */
export async function startApp(dataDir: string, extraEnv: Record<string, string> = {}): Promise<App> {
  const port = await freePort();
  const child = await startChild(process.execPath, ['--import', 'tsx', 'server.ts'], {
    name: 'server.ts',
    env: {
      PORT: String(port),
      HOSTNAME: '127.0.0.1',
      DATA_DIR: dataDir,
      PARLEY_TOKENS,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      MAX_UPLOAD_BYTES: String(8 * 1024 * 1024),
      // The device lock and encryption at rest (issue 28) are off unless the run asks for them:
      // `BENCH_LOCK=1 npm run bench …` measures the same scenarios with the default policy (a PIN
      // set at sign-in, every row sealed), to compare against a run without.
      LOCK_AFTER_MINUTES: process.env.BENCH_LOCK === '1' ? '5' : '0',
      ...extraEnv,
    },
    ready: /\[parley\] serving /,
    timeoutMs: 90_000,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  // First request compiles nothing in production, but warms Next's handler.
  await fetch(`${baseUrl}/`).then((r) => r.text());
  return { baseUrl, child };
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

export interface SignedInPage {
  context: BrowserContext;
  page: Page;
  /** /v1 requests seen from this context (page and its dedicated worker). */
  requests: { count: number; reset(): void };
  /** Every script URL any part of the context (page, its workers) requested. */
  scripts: Set<string>;
}

/**
 * A fresh browser context (empty IndexedDB), signed in by storing the token as the sign-in form
 * does, with `parley:expose` so the page exposes `window.parley` (the UI's own sync connection).
 */
export async function openSignedIn(browser: Browser, baseUrl: string, token: string): Promise<SignedInPage> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 390, height: 844 } });
  // tsx compiles page.evaluate callbacks with esbuild's keepNames: give pages its helper.
  await context.addInitScript('globalThis.__name = globalThis.__name || ((f) => f)');
  await context.addInitScript((t) => {
    localStorage.setItem('parley:token', t);
    localStorage.setItem('parley:expose', '1');
  }, token);
  const requests = { count: 0, reset() { this.count = 0; } };
  const scripts = new Set<string>();
  context.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/v1/')) requests.count++;
    // Not the service worker's precaching (it fetches every chunk of the app once installed).
    if (request.serviceWorker()) return;
    if (request.resourceType() === 'script' || /\.m?js$/.test(new URL(request.url()).pathname)) scripts.add(request.url());
  });
  const page = await context.newPage();
  await page.goto('/');
  await page.waitForFunction(() => 'parley' in window, null, { timeout: 60_000 });
  return { context, page, requests, scripts };
}

/** Waits until the sync worker has not been syncing for a while (status kept in Dexie). */
export async function waitIdle(page: Page, timeoutMs = 120_000): Promise<void> {
  await page.evaluate(async (timeout) => {
    const p = (window as any).parley;
    const deadline = Date.now() + timeout;
    let quiet = 0;
    while (Date.now() < deadline) {
      const status = (await p.db.meta.get('status'))?.value;
      quiet = status && !status.syncing ? quiet + 1 : 0;
      if (quiet >= 3) return;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error('sync did not go idle');
  }, timeoutMs);
}
