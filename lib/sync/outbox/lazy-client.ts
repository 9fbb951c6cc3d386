// The page's client, loaded on its first call. The client rebuilds rows (rebase.ts) and has its
// input checked by the sync worker with the shared zod schemas (intents/validation.ts): code that
// no screen needs before the user's first write, so the first screen does not wait for it. Same API, same validation
// (the real client does it), only every method's first call awaits one dynamic import.
import type { SyncClient, SyncClientOptions } from './client';
import type { ParleyDb } from '../mirror/db';

/** The client's module; called again it is the same (already loaded) module. */
export const loadClientModule = () => import('./client');

export function createLazySyncClient(db: ParleyDb, options: SyncClientOptions): SyncClient {
  let loaded: Promise<SyncClient> | null = null;
  const client = () => (loaded ??= loadClientModule().then(({ createSyncClient }) => createSyncClient(db, options)));
  // Every method, typed by SyncClient: TypeScript fails here when the client gains or loses one.
  return {
    resolveId: async (...args) => (await client()).resolveId(...args),
    createConversation: async (...args) => (await client()).createConversation(...args),
    updateConversation: async (...args) => (await client()).updateConversation(...args),
    markOpened: async (...args) => (await client()).markOpened(...args),
    deleteConversation: async (...args) => (await client()).deleteConversation(...args),
    uploadFile: async (...args) => (await client()).uploadFile(...args),
    renameFile: async (...args) => (await client()).renameFile(...args),
    deleteFile: async (...args) => (await client()).deleteFile(...args),
    cancelUpload: async (...args) => (await client()).cancelUpload(...args),
    retryOperation: async (...args) => (await client()).retryOperation(...args),
    discardOperation: async (...args) => (await client()).discardOperation(...args),
    reuploadFile: async (...args) => (await client()).reuploadFile(...args),
  };
}
