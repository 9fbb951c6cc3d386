// "Keep offline" on a device with a lock (issue 28): the downloader's passes (downloader.ts) run in
// the SYNC WORKER, with the bytes kept as sealed chunks in the user's database (file-bytes.ts).
//
// Why the sync worker: the service worker never holds the keys, so it cannot write a sealed row;
// the sync worker is started with them at unlock and ended at lock (app/_components/lock), so no
// download runs, and no key is held, while the device is locked. It is off the main thread (the
// cipher runs in JavaScript: sealing megabytes on the page would stall it) and has fetch and the
// Network Information API. There is one per tab: a Web Lock per database lets one pass run at a
// time across tabs (the others then find nothing to do).
//
// Woken by: its start (each unlock), the page (a "Keep offline" toggle, a setting, a file opened:
// settings.ts wakeDownloader posts on a BroadcastChannel), the network coming back, connection
// changes, and — at most every 30 s, as the service worker is by the app's requests — the
// database's changes that can change what is kept (files pulled, conversations pinned: Dexie's
// `storagemutated`). Not after every change: a pass reads every conversation (the pinned rule),
// and an initial sync commits thousands of rows in the same worker.
//
// The user's own changes go first: while the outbox has changes to send (`busy`), a pass waits
// (up to `yieldMs`, 30 s, so a queue stuck on a failing change does not hold downloads for ever).
// Both run in this worker: a download's sealing and writes would otherwise slow the replay of what
// the user did offline, which is what they are waiting for.
import { Dexie, type ObservabilitySet } from 'dexie';
import { runPass, type DownloaderDeps, type PassResult } from './downloader';
import { networkConnection, offlineChannelName } from './settings';

/** Tables whose changes can change what a pass does (not those a pass writes itself). */
const WATCHED = ['files', 'conversations', 'offlineKeep', 'idAliases'];

export interface SealedDownloadsOptions {
  database: string;
  deps: DownloaderDeps;
  locks?: Pick<LockManager, 'request'>;
  /** The least time between passes woken by the database's changes (default 30 s). */
  changeGapMs?: number;
  /** Each pass's result (tests). */
  onPass?: (result: PassResult) => void;
  /** Whether the user's changes are still being sent: a pass waits for them (up to `yieldMs`). */
  busy?: () => Promise<boolean>;
  /** The longest a pass waits for `busy` (default 30 s); checked every `busyPollMs` (250 ms). */
  yieldMs?: number;
  busyPollMs?: number;
}

export interface SealedDownloads {
  /** Runs a pass soon (one more after the running one, if any). */
  wake(): void;
  /** Stops waking; a pass under way ends with the worker. Resolves once no pass of ours runs. */
  stop(): Promise<void>;
  /** Resolves once no pass is running (tests). */
  idle(): Promise<void>;
}

export function startSealedDownloads({ database, deps, locks, changeGapMs = 30_000, onPass, busy, yieldMs = 30_000, busyPollMs = 250 }: SealedDownloadsOptions): SealedDownloads {
  let stopped = false;
  let lastPassAt = -Infinity;
  let running: Promise<void> | null = null;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const yieldToChanges = async () => {
    const until = Date.now() + yieldMs;
    while (busy && !stopped && Date.now() < until && (await busy().catch(() => false))) await new Promise((resolve) => setTimeout(resolve, busyPollMs));
  };

  const onePass = async () => {
    await yieldToChanges();
    const pass = async () => {
      if (stopped) return;
      lastPassAt = Date.now();
      const result = await runPass(database, deps).catch((error: unknown) => {
        console.warn('[parley] keep offline:', error);
        return null;
      });
      if (result) onPass?.(result);
    };
    if (locks) await locks.request(`parley-offline:${database}`, pass);
    else await pass();
  };

  const wake = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await onePass();
        } while (again && !stopped);
      } finally {
        running = null;
      }
    })();
  };

  const changed = () => {
    if (stopped || timer !== null) return;
    timer = setTimeout(
      () => {
        timer = null;
        wake();
      },
      Math.max(0, lastPassAt + changeGapMs - Date.now()),
    );
  };

  const prefixes = WATCHED.map((table) => `idb://${database}/${table}/`);
  const onMutated = (parts: ObservabilitySet) => {
    if (Object.keys(parts).some((key) => prefixes.some((prefix) => key.startsWith(prefix)))) changed();
  };
  Dexie.on('storagemutated', onMutated);

  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(offlineChannelName(database)) : null;
  if (channel) channel.onmessage = () => wake();

  const connection = networkConnection(globalThis.navigator);
  connection?.addEventListener?.('change', wake);

  wake();
  return {
    wake,
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      Dexie.on.storagemutated.unsubscribe(onMutated);
      channel?.close();
      connection?.removeEventListener?.('change', wake);
      await running;
    },
    async idle() {
      while (running) await running;
    },
  };
}
