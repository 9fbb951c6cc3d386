// The sync worker: one per tab, but only the holder of the `navigator.locks` lock replays and
// pulls at a time; the others wait their turn (and then usually find nothing to do). Tabs see
// the results through Dexie live queries, not through this worker. Only one worker per database
// (the leader, lib/sync/engine/leader.ts) holds the live stream: a stream per tab would take all six
// of the browser's connections to the server.
//
// Load it with: new Worker(new URL('../workers/sync.worker.ts', import.meta.url), { type: 'module' })
import * as Comlink from 'comlink';
import { createSealer, databaseLock, type InputValidators, loadInputValidators, UNSENT_STATES, type MirrorKeys, openSyncDb, setSealer, type OpenTabChannel, type ParleyDb, resumableUploads, storeBackgroundAccess, SyncEngine, type SyncReport, whoAmI, type WhoAmI } from '../lib/sync/worker';
import { databaseChunkFiles } from '../lib/offline/file-bytes';
import type { ConnectionLike } from '../lib/offline/policy';
import { startSealedDownloads, type SealedDownloads } from '../lib/offline/sealed-downloads';
import { xhrUpload } from './xhr-upload';

export interface SyncWorkerConfig {
  /** The user's database (its IndexedDB name; see lib/sync/mirror/db.ts). */
  database: string;
  /** Origin serving /v1, e.g. location.origin. */
  baseUrl: string;
  token: string | null;
  periodMs?: number;
  /** The keys of the sealed databases (issue 28), while the device is unlocked; null without a lock. */
  keys?: MirrorKeys | null;
}

let engine: SyncEngine | null = null;
let db: ParleyDb | null = null;
let mirrorDb: ParleyDb | null = null;
let token: string | null = null;
/** "Keep offline" on a device with a lock: here, where the keys are (lib/offline/sealed-downloads.ts). */
let downloads: SealedDownloads | null = null;

function lockFor(database: string) {
  // The service worker's Background Sync takes the same lock (lib/sync/session/background.ts).
  return databaseLock((self.navigator as Navigator | undefined)?.locks, database);
}

let baseUrl = '';

/** The tabs' BroadcastChannel, as lib/sync/engine/leader.ts takes it (absent in very old browsers). */
const openTabChannel: OpenTabChannel | undefined =
  typeof BroadcastChannel === 'function'
    ? (name, onMessage) => {
        const channel = new BroadcastChannel(name);
        channel.onmessage = (event) => onMessage(event.data);
        return { post: (message) => channel.postMessage(message), close: () => channel.close() };
      }
    : undefined;

/**
 * The service worker replays with the token this worker was last given (Background Sync). Not on a
 * locked device: the service worker holds no keys, so it could not read the outbox anyway.
 */
let sealed = false;
function shareToken(): void {
  if (db && !sealed) void storeBackgroundAccess(db, { baseUrl, token }).catch(() => {});
}

const api = {
  /** Opens the user's database and starts syncing (at once, then on triggers and periodically). */
  async start(config: SyncWorkerConfig): Promise<void> {
    api.stop();
    token = config.token;
    const name = config.database;
    // Before any database opens: with keys, every row is sealed (lib/sync/mirror/seal.ts).
    sealed = !!config.keys;
    setSealer(config.keys ? createSealer(config.keys) : null);
    // User intent (the outbox) must survive a crash; the pulled mirror can be pulled again.
    db = openSyncDb(name, { chromeTransactionDurability: 'strict' });
    mirrorDb = openSyncDb(name, { chromeTransactionDurability: 'relaxed' });
    engine = new SyncEngine({
      db,
      mirrorDb,
      fetch: (input, init) => fetch(input, init),
      baseUrl: config.baseUrl,
      getToken: () => token,
      withLock: lockFor(config.database),
      periodMs: config.periodMs,
      // A hung request must not stall sync forever. Uploads are not bound by it: a request that
      // moves no byte (and gets no answer) for 30 s is abandoned, however long the transfer — a
      // tus one resumes from the server's offset, a POST /v1/files is sent again with its key.
      requestTimeoutMs: 10 * 60_000,
      // Uploads through tus where the server offers it: a cut, a reload or a crash resumes them.
      resumable: resumableUploads,
      // The change feed's live stream, while the server has it: other devices' changes arrive in
      // about a second, and the periodic sync becomes a slow safety net. stop() closes it.
      live: {},
      // One stream for all the tabs of this database: the leader's (see lib/sync/engine/leader.ts).
      tabs: { database: config.database, locks: (self.navigator as Navigator | undefined)?.locks, openChannel: openTabChannel },
      // XMLHttpRequest reports upload progress (fetch cannot); it exists in dedicated workers.
      upload: typeof XMLHttpRequest === 'function' ? xhrUpload : undefined,
    });
    engine.start();
    void loadInputValidators().catch(() => {});
    baseUrl = config.baseUrl;
    shareToken();
    if (self.navigator?.onLine === false) void engine.setOnline(false);
    if (config.keys) {
      const changes = db;
      const busy = async () => (await changes.outbox.where('state').anyOf(UNSENT_STATES).count()) > 0;
      downloads = startSealedDownloads({ database: name, deps: sealedDownloader(), locks: self.navigator?.locks, busy });
    }
  },

  stop(): void {
    void downloads?.stop();
    downloads = null;
    engine?.stop();
    engine = null;
    db?.close();
    mirrorDb?.close();
    db = mirrorDb = null;
  },

  /** After a local write, or anything else worth a (debounced) sync. */
  requestSync(): void {
    engine?.requestSync();
  },

  /** The app became visible again: end every backoff and sync at once. */
  async wake(): Promise<void> {
    await engine?.wake();
  },

  /**
   * The page's `online`/`offline` (a dedicated worker may never get them itself) and its
   * navigator.onLine at start. Coming online ends every backoff and syncs at once.
   */
  async setOnline(online: boolean): Promise<void> {
    if (online) downloads?.wake();
    await engine?.setOnline(online);
  },

  /** "Sync now": end every backoff, sync and report. */
  async syncNow(): Promise<SyncReport | null> {
    return engine ? engine.syncNow() : null;
  },

  /**
   * Whose token this is (lib/sync/session/identity.ts), asked from here for the page's start-up owner
   * check: this worker has the schemas loaded anyway, the page would load zod just for it.
   */
  async whoAmI(baseUrl: string, token: string): Promise<WhoAmI> {
    return whoAmI({ fetch: (input, init) => fetch(input, init), baseUrl, requestTimeoutMs: 30_000 }, token);
  },

  /**
   * The page's input checks (lib/sync/outbox/intents/validation.ts): the API's zod schemas, which
   * the page does not evaluate (on its main thread they were a long task). Loaded after the start,
   * or on first use; they need no start.
   */
  inputs: Comlink.proxy<InputValidators>({
    conversationCreate: async (input) => (await loadInputValidators()).conversationCreate(input),
    conversationUpdate: async (input) => (await loadInputValidators()).conversationUpdate(input),
    fileUpdate: async (input) => (await loadInputValidators()).fileUpdate(input),
  }),

  /** A fresh token after "sign in again": resumes a sync paused by a 401. */
  async setToken(next: string | null): Promise<void> {
    token = next;
    shareToken();
    if (next) await engine?.signedIn();
  },
};

export type SyncWorkerApi = typeof api;

/** The downloader's world here: the bytes go into the sealed database, never Cache Storage. */
function sealedDownloader() {
  const nav = self.navigator as Navigator & { connection?: ConnectionLike };
  return {
    fetch: (input: string, init?: RequestInit) => fetch(input, init),
    store: databaseChunkFiles(),
    origin: self.location.origin,
    connection: () => nav.connection ?? null,
    quota: async () => (await nav.storage?.estimate?.().catch(() => null))?.quota ?? null,
    now: () => Date.now(),
    wait: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  };
}

self.addEventListener('online', () => {
  downloads?.wake();
  void engine?.setOnline(true);
});
self.addEventListener('offline', () => void engine?.setOnline(false));

Comlink.expose(api);
