// The sync worker: one per tab, but only the holder of the `navigator.locks` lock replays and
// pulls at a time; the others wait their turn (and then usually find nothing to do). Tabs see
// the results through Dexie live queries, not through this worker.
//
// Load it with: new Worker(new URL('../workers/sync.worker.ts', import.meta.url), { type: 'module' })
import * as Comlink from 'comlink';
import { databaseNameFor, openSyncDb, type ParleyDb } from '../lib/sync/db';
import { SyncEngine, type SyncReport } from '../lib/sync/engine';

export interface SyncWorkerConfig {
  /** Which user's database (see databaseNameFor). */
  userKey: string;
  /** Origin serving /v1, e.g. location.origin. */
  baseUrl: string;
  token: string | null;
  periodMs?: number;
}

let engine: SyncEngine | null = null;
let db: ParleyDb | null = null;
let mirrorDb: ParleyDb | null = null;
let token: string | null = null;

function lockFor(userKey: string) {
  const locks = (self.navigator as Navigator | undefined)?.locks;
  return <T>(fn: () => Promise<T>): Promise<T> =>
    locks ? (locks.request(`parley-sync:${userKey}`, fn) as Promise<T>) : fn();
}

const api = {
  /** Opens the user's database and starts syncing (at once, then on triggers and periodically). */
  async start(config: SyncWorkerConfig): Promise<void> {
    api.stop();
    token = config.token;
    const name = databaseNameFor(config.userKey);
    // User intent (the outbox) must survive a crash; the pulled mirror can be pulled again.
    db = openSyncDb(name, { chromeTransactionDurability: 'strict' });
    mirrorDb = openSyncDb(name, { chromeTransactionDurability: 'relaxed' });
    engine = new SyncEngine({
      db,
      mirrorDb,
      fetch: (input, init) => fetch(input, init),
      baseUrl: config.baseUrl,
      getToken: () => token,
      withLock: lockFor(config.userKey),
      periodMs: config.periodMs,
      // Long enough for a large upload on a slow link; a hung request must not stall sync forever.
      requestTimeoutMs: 10 * 60_000,
    });
    engine.start();
  },

  stop(): void {
    engine?.stop();
    engine = null;
    db?.close();
    mirrorDb?.close();
    db = mirrorDb = null;
  },

  /** After a local write, `visibilitychange` to visible, or anything else worth a sync. */
  requestSync(): void {
    engine?.requestSync();
  },

  /** Sync now and report (e.g. a "sync now" button). */
  async syncNow(): Promise<SyncReport | null> {
    return engine ? engine.syncOnce() : null;
  },

  /** A fresh token after "sign in again": resumes a sync paused by a 401. */
  async setToken(next: string | null): Promise<void> {
    token = next;
    if (next) await engine?.signedIn();
  },
};

export type SyncWorkerApi = typeof api;

self.addEventListener('online', () => void engine?.setOnline(true));
self.addEventListener('offline', () => void engine?.setOnline(false));

Comlink.expose(api);
