// What the page may use of the sync core: reading the mirror, the status, sign-in and sign-out,
// and the client (loaded on the first write). The only import of lib/sync for app/, lib/view and
// lib/offline (the lint enforces it), so a page import of worker code is visible here. Everything
// named here is small or already on the first screen; what is not (the write path, the identity
// checks) is handed out as a loader, so it stays in a chunk of its own. Screens read the mirror
// through the named queries (mirror/queries.ts, server-word.ts), not its tables.
export { SyncInputError } from './core/errors';
export type { FetchLike } from './core/http';
export {
  anonymousDatabaseName,
  databaseExists,
  type DownloadChunk,
  legacyDatabaseName,
  openSyncDb,
  userDatabaseName,
  type ConversationView,
  type FileView,
  type OfflineFile,
  type ParleyDb,
  type SyncState,
} from './mirror/db';
export { lostOnServer } from './mirror/blocking';
export {
  aliasOf,
  allConversations,
  conversationById,
  conversationsByIds,
  fileById,
  fileCount,
  filesOfConversation,
  filesOfConversations,
  hasConversations,
  mirrorIsEmpty,
  pinnedConversations,
  queuedChangeCount,
} from './mirror/queries';
export { knownConversation, knownFile, serverConversationWord } from './mirror/server-word';
export { BY_ARCHIVED_INDEX, indexWords, ORDER_INDEX, searchWords, WORDS_INDEX } from './mirror/list-keys';
export { currentSealer, MirrorLockedError, openBytes, requireSealing, SealedBytes, sealBytes, sealMiddleware, setSealer } from './mirror/seal';
export { deleteMeta, getMeta, setMeta, type MetaValues } from './mirror/meta';
export { MIRROR_CLEARED_KEY, readSyncStatus, type FailedOperation, type MirrorCleared, type SyncStatus } from './engine/status';
export { readUploadProgress, type UploadProgress } from './engine/upload-progress';
export { loadClientModule } from './outbox/lazy-client';
export { queuedUploadBytes } from './outbox/chunks';
export type { CheckFailure, WhoAmI } from './session/identity';
export {
  addReports,
  forgetOpenedFiles,
  NOTHING_REMOVED,
  OPENED_FILES_CACHE,
  removeDatabase,
  thumbnailsDatabaseName,
  type RemovalReport,
} from './session/removal';

/** The cipher of the sealed databases and the derivation of its keys: loaded at unlock (seal.ts, sealer.ts). */
export const loadSealer = () => import('./mirror/sealer');
/** Sealing the rows kept in clear from before the lock (seal-existing.ts): loaded at a set-up or an unlock that needs it. */
export const loadSealExisting = () => import('./mirror/seal-existing');

/** The identity checks (`GET /v1/me`, the probe), with the schemas they validate answers with: loaded when a check is due. */
export const loadIdentity = () => import('./session/identity');
