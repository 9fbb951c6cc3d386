// Page side of the sync worker: starts it, forwards the page-only triggers (tab visible) and
// nudges it after local writes. The UI gets the client (writes) and reads Dexie directly.
import * as Comlink from 'comlink';
import type { SyncWorkerApi } from '../../workers/sync.worker';
import { createSyncClient, type SyncClient } from './client';
import { databaseNameFor, openSyncDb, type ParleyDb } from './db';

export interface SyncConnection {
  db: ParleyDb;
  client: SyncClient;
  worker: Comlink.Remote<SyncWorkerApi>;
  close(): void;
}

export async function connectSync(options: { userKey: string; baseUrl: string; token: string | null }): Promise<SyncConnection> {
  const raw = new Worker(new URL('../../workers/sync.worker.ts', import.meta.url), { type: 'module' });
  const worker = Comlink.wrap<SyncWorkerApi>(raw);
  const db = openSyncDb(databaseNameFor(options.userKey), { chromeTransactionDurability: 'strict' });
  const client = createSyncClient(db, { onLocalWrite: () => void worker.requestSync() });
  // Safari may evict a non-installed site's storage; ask to keep the outbox.
  void navigator.storage?.persist?.().catch(() => false);
  const onVisible = () => {
    if (document.visibilityState === 'visible') void worker.requestSync();
  };
  document.addEventListener('visibilitychange', onVisible);
  await worker.start(options);
  return {
    db,
    client,
    worker,
    close() {
      document.removeEventListener('visibilitychange', onVisible);
      void worker.stop();
      raw.terminate();
      db.close();
    },
  };
}
