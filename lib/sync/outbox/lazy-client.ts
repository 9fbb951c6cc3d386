// The page's client, loaded on its first call. The client validates with the shared zod schemas
// (lib/schemas.ts) and rebuilds rows (rebase.ts): ~35 KiB gzipped that no screen needs before
// the user's first write, so the first screen does not wait for it. Same API, same validation
// (the real client does it), only every method's first call awaits one dynamic import.
import type { SyncClient, SyncClientOptions } from './client';
import type { ParleyDb } from '../mirror/db';

/** Every method of SyncClient; TypeScript fails here when the client gains or loses one. */
const METHODS = {
  resolveId: true,
  createConversation: true,
  updateConversation: true,
  markOpened: true,
  deleteConversation: true,
  uploadFile: true,
  renameFile: true,
  deleteFile: true,
  cancelUpload: true,
  retryOperation: true,
  discardOperation: true,
  reuploadFile: true,
} as const satisfies Record<keyof SyncClient, true>;

/** The client's module; called again it is the same (already loaded) module. */
export const loadClientModule = () => import('./client');

export function createLazySyncClient(db: ParleyDb, options: SyncClientOptions = {}): SyncClient {
  let loaded: Promise<SyncClient> | null = null;
  const client = () => (loaded ??= loadClientModule().then(({ createSyncClient }) => createSyncClient(db, options)));
  const lazy: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const name of Object.keys(METHODS) as (keyof SyncClient)[]) {
    lazy[name] = async (...args: unknown[]) => ((await client())[name] as (...a: unknown[]) => Promise<unknown>)(...args);
  }
  return lazy as unknown as SyncClient;
}
