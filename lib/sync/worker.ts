// What the sync worker uses of the sync core: the engine it runs (with tus uploads and the tabs'
// leadership), the identity check, Background Sync's access. The only import of lib/sync for
// workers/sync.worker.ts and workers/xhr-upload.ts (the service worker has service-worker.ts).
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
export { inputValidators } from './outbox/validate-input';
