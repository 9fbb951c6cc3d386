// The sync core's public surface for the UI.
//   Writes:  createSyncClient(db) → client.createConversation(...) etc. (or connectSync(), which
//            also starts the worker and nudges it after each write).
//   Reads:   Dexie live queries on db.conversations / db.files (visible rows, with syncState),
//            readSyncStatus(db) for the status bar, db.idAliases to follow a temp id.
export { createSyncClient, SyncInputError, UPLOAD_CHUNK_BYTES, type SyncClient, type UploadSource } from './client';
export { connectSync, type SyncConnection } from './connect';
export { databaseNameFor, deleteSyncDb, openSyncDb, type ConversationView, type FileView, type ParleyDb, type SyncState } from './db';
export { SyncEngine, type Clock, type EngineDeps, type SyncReport } from './engine';
export { isTempId } from './operations';
export { readSyncStatus, type FailedOperation, type SyncStatus } from './status';
