// The sync core's public surface for the UI.
//   Writes:  createSyncClient(db) → client.createConversation(...) etc. (or connectSync(), which
//            also starts the worker and nudges it after each write).
//   Reads:   Dexie live queries on db.conversations / db.files (visible rows, with syncState),
//            readSyncStatus(db) for the status bar, db.idAliases to follow a temp id.
export { createSyncClient, UPLOAD_CHUNK_BYTES, type SyncClient, type UploadSource } from './client';
export { SyncInputError } from './errors';
export { connectSync, type SyncConnection } from './connect';
export { openSyncDb, type ConversationView, type FileView, type ParleyDb, type SyncState } from './db';
export { SyncEngine, type Clock, type EngineDeps, type SyncReport } from './engine';
export { isTempId } from './operations';
export { readFirstSyncProgress } from './pull-progress';
export type { PullProgress } from './pull';
export { NOTHING_REMOVED, type RemovalReport } from './removal';
export { readUploadProgress, type UploadProgress } from './upload-progress';
export { readSyncStatus, type FailedOperation, type SyncStatus } from './status';
