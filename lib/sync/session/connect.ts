// Page side of the sync worker: starts it, forwards the page-only triggers (tab visible) and
// nudges it after local writes. The UI gets the client (writes) and reads Dexie directly.
import * as Comlink from 'comlink';
import type { SyncWorkerApi } from '../../../workers/sync.worker';
import { syncTagFor } from './sync-tag';
import type { SyncClient } from '../outbox/client';
import { openSyncDb, type ParleyDb } from '../mirror/db';
import { currentSealer } from '../mirror/seal';
import { createLazySyncClient } from '../outbox/lazy-client';

export interface SyncConnection {
  db: ParleyDb;
  /**
   * Settles once the worker has started (after `before`). The page reads `db` before that: the
   * first rows do not wait for the worker's code to load. What is asked of the worker meanwhile
   * (a sync, a wake) may find it not yet started and do nothing, which loses nothing: it syncs at
   * once when it starts, and the outbox holds every write.
   */
  started: Promise<void>;
  client: SyncClient;
  worker: Comlink.Remote<SyncWorkerApi>;
  /** Starts the worker again after a `worker.stop()` (benchmarks, tests), with this page's keys as at the start. */
  restart(token: string | null): Promise<void>;
  close(): void;
}

/** The page's connection to the user's database (connectSync's, or opened before it for the first rows). */
export const openConnectionDb = (database: string): ParleyDb => openSyncDb(database, { chromeTransactionDurability: 'strict' });

/**
 * `database`: the user's database name (lib/view/session.ts decides which one). `before`: what must
 * be done with the database before the worker touches it (the worker's code loads meanwhile).
 */
export function connectSync(
  options: { database: string; baseUrl: string; token: string | null },
  before?: (db: ParleyDb) => Promise<unknown>,
  /** That database, already opened by the page (its first rows read early); closed with the connection. */
  opened?: ParleyDb,
): SyncConnection {
  const raw = new Worker(new URL('../../../workers/sync.worker.ts', import.meta.url), { type: 'module' });
  const worker = Comlink.wrap<SyncWorkerApi>(raw);
  const db = opened ?? openConnectionDb(options.database);
  // Loaded on the first write: the first screen only reads (see lazy-client.ts).
  const client = createLazySyncClient(db, {
    // In the worker, not on the page (intents/validation.ts); they may be asked before it has started.
    validate: worker.inputs,
    onLocalWrite: () => {
      void worker.requestSync();
      // The service worker holds no keys: on a device with a lock it could not read the outbox.
      if (!currentSealer()) registerBackgroundSync(options.database);
    },
    // An upload that cannot fit is refused before it is queued (see client.uploadFile).
    estimateStorage: navigator.storage?.estimate ? () => navigator.storage.estimate() : undefined,
  });
  // Safari may evict a non-installed site's storage; ask to keep the outbox.
  void navigator.storage?.persist?.().catch(() => false);
  // Returning to the app and the network coming back end every backoff: the user expects their
  // changes to go now. A dedicated worker may never see `online` itself, so the page forwards it.
  const onVisible = () => {
    if (document.visibilityState === 'visible') void worker.wake();
  };
  const onOnline = () => void worker.setOnline(true);
  const onOffline = () => void worker.setOnline(false);
  document.addEventListener('visibilitychange', onVisible);
  window.addEventListener('online', onOnline);
  window.addEventListener('offline', onOffline);
  // The worker seals and opens rows with the page's keys while the device is unlocked (seal.ts).
  const started = Promise.resolve(before?.(db)).then(async () => {
    await worker.start({ ...options, keys: currentSealer()?.keys ?? null });
    if (!navigator.onLine) await worker.setOnline(false);
  });
  return {
    db,
    started,
    client,
    worker,
    restart: (token) => worker.start({ ...options, token, keys: currentSealer()?.keys ?? null }),
    close() {
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener('online', onOnline);
      window.removeEventListener('offline', onOffline);
      void worker.stop();
      raw.terminate();
      db.close();
    },
  };
}

/** The part of ServiceWorkerRegistration that Background Sync adds (not in TypeScript's DOM types). */
interface WithSyncManager {
  sync?: { register(tag: string): Promise<void> };
}

/**
 * Where Background Sync exists (Chromium, Android), the service worker sends the queued changes
 * when connectivity returns, even if the app was closed meanwhile (lib/sync/session/background.ts).
 * Elsewhere the worker's own triggers (a write, `online`, the tab becoming visible) are all.
 */
function registerBackgroundSync(database: string): void {
  if (!('serviceWorker' in navigator) || !('SyncManager' in self)) return;
  void navigator.serviceWorker.ready
    .then((registration) => (registration as ServiceWorkerRegistration & WithSyncManager).sync?.register(syncTagFor(database)))
    .catch(() => {});
}
