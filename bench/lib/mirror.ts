// Shared by the sync scenarios: one data set (seeded through SQLite), served twice from the same
// DATA_DIR — by the app as `npm start` runs it (every extension: the change feed and its live
// stream) and by the app with PARLEY_EXTENSIONS=idempotency,me (a plain server: no feed, so the
// sync lists everything and scans files per conversation) — and one Chromium.
//
// An initial sync is timed from the click on "Sign in" (the token typed into the form, as a user
// does) to the end of the sync worker's first pass, in a fresh browser context each time, and
// checked: every conversation and file mirrored, every file placed in its conversation.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureAppBuild, launchBrowser, startApp, type App } from './app';
import { tempDir } from './proc';
import { BENCH_RATE_LIMITS, runToken, createSchema, seedConversations, seedSyncData } from './seed';
import { plainLimitEnv } from './limits';
import { round } from './stats';

export const SYNC_CONVERSATIONS = Number(process.env.BENCH_SYNC_CONVERSATIONS || 10_000);
export const REPLAY_CONVERSATIONS = 1_000;
/** Only the app with the change feed: its first sync lists, then follows the feed. */
export const PLAIN_EXTENSIONS = 'idempotency,me';
/**
 * The plain server the app's timed runs go to says where the token stands (the rate limit fields),
 * as Parley's server does; BENCH_PLAIN_FIELDS=0 plays one that does not (the app then meets the
 * limit and waits out its 429s, as before the fields).
 */
const PLAIN_APP_EXTENSIONS = process.env.BENCH_PLAIN_FIELDS === '0' ? PLAIN_EXTENSIONS : `${PLAIN_EXTENSIONS},ratelimit`;

export interface SyncWorld {
  /** The app with every extension (change feed, live stream). */
  app: App;
  /** The same data served without the change feed. */
  plainApp: App;
  /**
   * The floors' servers: the same data, with and without the change feed, with rate limits the
   * floors never reach. A floor is a bare loop as fast as the server answers — far faster than a
   * client the default limits are made for — while the app's timed runs go to `app` and
   * `plainApp`, which keep the default limits: the figures then show whether they slow the app.
   */
  floorApp: App;
  plainFloorApp: App;
  browser: Browser;
  dataDir: string;
  alice: { ids: string[]; files: number; active: number };
  /** bob: the replay scenario's user (a small mirror of conversations only). */
  bob: { ids: string[] };
  /** carol: the app scenario's user (a screenful: 60 conversations, 12 with files). */
  carol: { ids: string[] };
}

export interface InitialSync {
  /** From the click on "Sign in" to the end of the first pass (ms). */
  ms: number;
  /** /v1 requests of the context (page and worker) in that time. */
  requests: number;
  idbBytes: number;
  conversations: number;
  files: number;
  /** When each pull phase was first seen, in seconds after the click ('idle' = following the feed). */
  phases: Record<string, number>;
  /** Time spent waiting out 429s (Retry-After) of a server with the default rate limits. */
  rateLimitedMs: number;
  /** /v1 answers 429 (rate_limited) in that time. */
  refused: number;
}

export interface SignedInSession {
  context: BrowserContext;
  page: Page;
  /** /v1 requests seen from this context (page and its dedicated worker), and their answers 429. */
  requests: { count: number; refused: number; reset(): void; paths: string[] };
}

let world: Promise<SyncWorld> | null = null;

/** Conversations of dave, the first screen's user (app and first-screen scenarios): a fifth with 5 files. */
export const FIRST_SCREEN_CONVERSATIONS = Number(process.env.BENCH_FIRST_SCREEN_CONVERSATIONS || 1_000);
const daves = new WeakMap<SyncWorld, { ids: string[]; files: number; active: number }>();
/** dave's data in this world's DATA_DIR, seeded on first use. */
export function daveData(w: SyncWorld): { ids: string[]; files: number; active: number } {
  let d = daves.get(w);
  if (!d) daves.set(w, (d = seedSyncData(w.dataDir, 'dave', FIRST_SCREEN_CONVERSATIONS)));
  return d;
}
let mirror: Promise<{ session: SignedInSession; initial: InitialSync }> | null = null;

export function syncWorld(log: (m: string) => void): Promise<SyncWorld> {
  world ??= (async () => {
    ensureAppBuild(log);
    const dataDir = tempDir('sync');
    await createSchema(dataDir);
    const alice = seedSyncData(dataDir, 'alice', SYNC_CONVERSATIONS);
    const bob = { ids: seedConversations(dataDir, { bob: REPLAY_CONVERSATIONS }).bob! };
    const carol = seedSyncData(dataDir, 'carol', 60);
    log(`seeded alice: ${SYNC_CONVERSATIONS} conversations (${alice.active} with files), ${alice.files} files (rows + bytes); bob: ${REPLAY_CONVERSATIONS} conversations`);
    const app = await startApp(dataDir);
    const plainApp = await startApp(dataDir, { PARLEY_EXTENSIONS: PLAIN_APP_EXTENSIONS, ...plainLimitEnv() });
    const floorApp = await startApp(dataDir, BENCH_RATE_LIMITS);
    const plainFloorApp = await startApp(dataDir, { PARLEY_EXTENSIONS: PLAIN_EXTENSIONS, ...BENCH_RATE_LIMITS });
    const browser = await launchBrowser();
    return { app, plainApp, floorApp, plainFloorApp, browser, dataDir, alice, bob, carol };
  })();
  return world;
}

/** The PIN a bench run with the lock on (BENCH_LOCK=1) sets. */
export const BENCH_PIN = '482915';

/** A fresh context (empty IndexedDB) on the sign-in form, exposing `window.parley` once signed in. */
export async function openSignedOut(browser: Browser, baseUrl: string): Promise<SignedInSession> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 390, height: 844 } });
  // tsx compiles page.evaluate callbacks with esbuild's keepNames: give pages its helper.
  await context.addInitScript('globalThis.__name = globalThis.__name || ((f) => f)');
  await context.addInitScript(() => localStorage.setItem('parley:expose', '1'));
  const requests = {
    count: 0,
    refused: 0,
    paths: [] as string[],
    reset() {
      this.count = 0;
      this.refused = 0;
      this.paths = [];
    },
  };
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/v1/')) {
      requests.count++;
      requests.paths.push(url.pathname + url.search);
    }
  });
  context.on('response', (response) => {
    if (response.status() === 429 && new URL(response.url()).pathname.startsWith('/v1/')) requests.refused++;
  });
  const page = await context.newPage();
  await page.goto('/');
  return { context, page, requests };
}

/**
 * Signs in through the form and times the first sync, from the click to the end of the worker's
 * first pass (`syncNow()` joins the pass the worker began when the page connected).
 */
export async function timedInitialSync(
  browser: Browser,
  baseUrl: string,
  token: string,
  expected: { conversations: number; files: number },
  /** The server asks for the device lock: a PIN is set after signing in (BENCH_LOCK=1 by default). */
  options: { lock?: boolean; beforeSignIn?: (page: Page) => Promise<void> } = {},
): Promise<{ session: SignedInSession; initial: InitialSync }> {
  const lock = options.lock ?? process.env.BENCH_LOCK === '1';
  const session = await openSignedOut(browser, baseUrl);
  const { page, requests } = session;
  // A diagnostic's hook (bench/profile-worker.ts profiles the sync worker from its start).
  await options.beforeSignIn?.(page);
  await page.getByLabel('Access token').fill(token);
  requests.reset();
  let t0 = await page.evaluate(() => performance.now());
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (lock) {
    // The device lock's set-up comes first; the sync is timed from the PIN's submission.
    await page.getByLabel(/PIN \(at least 6 digits\)/).fill(BENCH_PIN);
    await page.getByLabel('The same PIN again').fill(BENCH_PIN);
    t0 = await page.evaluate(() => performance.now());
    await page.getByRole('button', { name: 'Set PIN' }).click();
  }
  await page.waitForFunction(() => 'parley' in window, null, { timeout: 120_000 });
  const result = await page.evaluate(async () => {
    const p = (window as any).parley;
    // When each pull phase was first seen (ms since the page's origin; 50 ms resolution).
    const phases: Record<string, number> = {};
    let done = false;
    const watch = (async () => {
      while (!done) {
        const phase = (await p.db.meta.get('pull'))?.value?.phase ?? 'none';
        phases[phase] ??= performance.now();
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // A server with the default rate limits may refuse part of a very large first sync (429 with
    // Retry-After): the app waits that long and goes on, and so does this timing.
    let report = await p.worker.syncNow();
    let rateLimitedMs = 0;
    for (let waits = 0; report?.pull?.kind === 'rate_limited' && waits < 120; waits++) {
      const ms = Math.max(1, Number(report.pull.retryAfter) || 1) * 1000;
      rateLimitedMs += ms;
      await new Promise((r) => setTimeout(r, ms));
      report = await p.worker.syncNow();
    }
    const t1 = performance.now();
    done = true;
    await watch;
    // Nothing is pending here, so every row is shown as the server has it (no server copies kept).
    const conversations = await p.db.conversations.count();
    const files = await p.db.files.count();
    const placed = await p.db.files.where('conversationId').above('').count();
    const estimate = await navigator.storage.estimate();
    return { t1, phases, report, rateLimitedMs, conversations, files, placed, idbBytes: (estimate as any).usageDetails?.indexedDB ?? estimate.usage ?? 0 };
  });
  // Seconds from the click to each phase's start (to the end for the last).
  const phases = Object.fromEntries(Object.entries(result.phases).map(([phase, at]) => [phase, round((at - t0) / 1000)]));
  const requestCount = requests.count;
  const refused = requests.refused;
  if (result.report?.pull?.kind !== 'done' || result.conversations !== expected.conversations || result.files !== expected.files || result.placed !== expected.files) {
    throw new Error(`mirror incomplete: ${JSON.stringify({ ...result, expected })}`);
  }
  return {
    session,
    initial: { ms: result.t1 - t0, requests: requestCount, idbBytes: result.idbBytes, conversations: result.conversations, files: result.files, phases, rateLimitedMs: result.rateLimitedMs, refused },
  };
}

/** alice's mirror (embedded server, change feed) after a timed initial sync; kept for steady-sync. */
export function aliceMirror(log: (m: string) => void): Promise<{ session: SignedInSession; initial: InitialSync }> {
  mirror ??= (async () => {
    const w = await syncWorld(log);
    const result = await timedInitialSync(w.browser, w.app.baseUrl, runToken('alice'), { conversations: SYNC_CONVERSATIONS, files: w.alice.files });
    log(`alice's mirror: ${(result.initial.ms / 1000).toFixed(2)} s, ${result.initial.requests} requests; phases from the click ${JSON.stringify(result.initial.phases)}`);
    return result;
  })();
  return mirror;
}

/** Closes alice's page (its worker holds a live stream) so it does not load later measurements. */
export async function releaseAliceMirror(): Promise<void> {
  const m = mirror && (await mirror.catch(() => null));
  await m?.session.context.close().catch(() => {});
}

export async function disposeSyncWorld(): Promise<void> {
  const w = world && (await world.catch(() => null));
  const m = mirror && (await mirror.catch(() => null));
  world = mirror = null;
  await m?.session.context.close().catch(() => {});
  await w?.browser.close().catch(() => {});
  await w?.app.child.stop();
  await w?.plainApp.child.stop();
  await w?.floorApp.child.stop();
  await w?.plainFloorApp.child.stop();
}
