// Shared by the sync scenarios: one app (server.ts) with the seeded data set, one Chromium, and —
// created on first use — alice's mirror after a timed initial sync. One initial sync of 10,000
// conversations + 10,000 files takes minutes on this machine, so it is done once per bench run
// and reused: initial-sync times it, steady-sync syncs on top of it.
import type { Browser } from 'playwright-core';
import { ensureAppBuild, launchBrowser, openSignedIn, startApp, type App, type SignedInPage } from './app';
import { tempDir } from './proc';
import { BENCH_TOKENS, createSchema, seedConversations, seedSyncData } from './seed';

export const SYNC_CONVERSATIONS = Number(process.env.BENCH_SYNC_CONVERSATIONS || 10_000);
export const REPLAY_CONVERSATIONS = 1_000;

export interface SyncWorld {
  app: App;
  browser: Browser;
  dataDir: string;
  alice: { ids: string[]; files: number; active: number };
  /** bob: the replay scenario's user (a small mirror of conversations only). */
  bob: { ids: string[] };
  /** carol: the app scenario's user (a screenful: 60 conversations, 12 with files). */
  carol: { ids: string[] };
}

export interface InitialSync {
  ms: number;
  requests: number;
  idbBytes: number;
  /** Seconds spent in each pull phase (conversations, files, scan), from the pull cursor. */
  phases: Record<string, number>;
}

export interface AliceMirror {
  session: SignedInPage;
  initial: InitialSync;
}

let world: Promise<SyncWorld> | null = null;
let mirror: Promise<AliceMirror> | null = null;

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
    const browser = await launchBrowser();
    return { app, browser, dataDir, alice, bob, carol };
  })();
  return world;
}

export function aliceMirror(log: (m: string) => void): Promise<AliceMirror> {
  mirror ??= (async () => {
    const w = await syncWorld(log);
    const session = await openSignedIn(w.browser, w.app.baseUrl, BENCH_TOKENS.alice);
    log('initial sync running (the sync worker started it when the page connected)…');
    const result = await session.page.evaluate(async () => {
      const p = (window as any).parley;
      const t0 = performance.now();
      const seen: Record<string, number> = {};
      let done = false;
      const watch = (async () => {
        while (!done) {
          const phase = (await p.db.meta.get('pull'))?.value?.phase ?? 'none';
          seen[phase] ??= performance.now() - t0;
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      // The worker began its first pass when the page connected; syncNow() joins that run.
      await p.worker.syncNow();
      const ms = performance.now() - t0;
      done = true;
      await watch;
      const conversations = await p.db.serverConversations.count();
      const files = await p.db.serverFiles.count();
      const placed = await p.db.serverFiles.where('conversationId').above('').count();
      const estimate = await navigator.storage.estimate();
      return { ms, seen, conversations, files, placed, idbBytes: (estimate as any).usageDetails?.indexedDB ?? estimate.usage ?? 0 };
    });
    if (result.conversations !== SYNC_CONVERSATIONS || result.files !== w.alice.files || result.placed !== w.alice.files) {
      throw new Error(`mirror incomplete: ${result.conversations} conversations, ${result.files} files, ${result.placed} placed`);
    }
    // Phase durations from the first time each phase was seen (200 ms resolution).
    const order = ['conversations', 'files', 'scan'];
    const phases: Record<string, number> = {};
    order.forEach((phase, i) => {
      const start = result.seen[phase];
      if (start === undefined) return;
      const next = order.slice(i + 1).map((p) => result.seen[p]).find((t) => t !== undefined) ?? result.ms;
      phases[phase] = (next - start) / 1000;
    });
    return { session, initial: { ms: result.ms, requests: session.requests.count, idbBytes: result.idbBytes, phases } };
  })();
  return mirror;
}

/** Closes alice's page (its worker syncs every minute) so it does not load later measurements. */
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
}
