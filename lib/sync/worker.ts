// What the workers use of the sync core: the engine the sync worker runs (with tus uploads and
// the tabs' leadership), the identity check, and the service worker's background flush.
// The only import of lib/sync for workers/ (the lint enforces it).
export type { UploadLike } from './core/http';
export { openSyncDb, type ParleyDb } from './mirror/db';
export { SyncEngine, type EngineDeps, type SyncReport } from './engine/engine';
export type { OpenTabChannel } from './engine/leader';
export { resumableUploads } from './outbox/resumable-upload';
export { databaseLock, databaseOfTag, flushOutbox, storeBackgroundAccess } from './session/background';
export { whoAmI, type WhoAmI } from './session/identity';
export { OPENED_FILES_CACHE } from './session/removal';
