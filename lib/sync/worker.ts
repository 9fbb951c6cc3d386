// What the sync worker uses of the sync core: the engine it runs (with tus uploads and the tabs'
// leadership), the identity check, Background Sync's access. The only import of lib/sync for
// workers/sync.worker.ts and workers/xhr-upload.ts (the service worker has service-worker.ts).
import type { InputValidators } from './outbox/intents/validation';

export type { UploadLike } from './core/http';
export { openSyncDb, type ParleyDb } from './mirror/db';
export { UNSENT_STATES } from './outbox/lifecycle';
export { setSealer, type MirrorKeys } from './mirror/seal';
export { createSealer } from './mirror/sealer';
export { SyncEngine, type SyncReport } from './engine/engine';
export type { OpenTabChannel } from './engine/leader';
export { resumableUploads } from './outbox/resumable-upload';
export { databaseLock, storeBackgroundAccess } from './session/background';
export { whoAmI, type WhoAmI } from './session/identity';
export type { InputValidators } from './outbox/intents/validation';

let validators: Promise<InputValidators> | null = null;
/**
 * The page's input checks (outbox/validate-input.ts), loaded once the worker has started and on
 * first use: they need zod's classic build (38 KiB gzipped), the worker's own reads only zod/mini,
 * so its start does not wait for them. A failed load is tried again on the next use.
 */
export function loadInputValidators(): Promise<InputValidators> {
  validators ??= import('./outbox/validate-input').then(
    (m) => m.inputValidators,
    (error: unknown) => {
      validators = null;
      throw error;
    },
  );
  return validators;
}
