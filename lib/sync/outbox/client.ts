// The one API the UI writes through: one function per user intent (intents/), each validating its
// input, then in ONE Dexie transaction appending to the outbox and rebuilding the affected
// visible rows (intents/context.ts), so the change is on screen (in every tab, via live queries)
// at once and survives a crash as a queued intent. This file only binds them to one database.
import type { ParleyDb } from '../mirror/db';
import { createWriteContext, resolve, type SyncClientOptions, type WriteContext } from './intents/context';
import { createConversation } from './intents/create-conversation';
import { markOpened, updateConversation } from './intents/update-conversation';
import { deleteConversation } from './intents/delete-conversation';
import { uploadFile } from './intents/upload-file';
import { renameFile } from './intents/rename-file';
import { deleteFile } from './intents/delete-file';
import { cancelUpload } from './intents/cancel-upload';
import { retryOperation } from './intents/retry-operation';
import { discardOperation } from './intents/discard-operation';
import { reuploadFile } from './intents/reupload-file';

export { SyncInputError } from '../core/errors';
export { UPLOAD_CHUNK_BYTES } from './chunks';
export type { SyncClientOptions } from './intents/context';
export type { UploadSource } from './intents/upload-file';

export type SyncClient = ReturnType<typeof createSyncClient>;

export function createSyncClient(db: ParleyDb, options: SyncClientOptions) {
  const ctx = createWriteContext(db, options);
  // Each intent with this client's context: (ctx, ...args) => result becomes (...args) => result.
  const bound =
    <A extends unknown[], R>(intent: (ctx: WriteContext, ...args: A) => R) =>
    (...args: A): R =>
      intent(ctx, ...args);
  return {
    /** A temp id the UI still holds may have been replaced by the server's id meanwhile. */
    resolveId: bound(resolve),
    /** Returns the new conversation's id (a temp id until the create is replayed). */
    createConversation: bound(createConversation),
    updateConversation: bound(updateConversation),
    /** Reports that the user opened the conversation (the last_opened_at extension). */
    markOpened: bound(markOpened),
    deleteConversation: bound(deleteConversation),
    /** Queues an upload; returns the file's (temp) id. The bytes stay in IndexedDB until sent. */
    uploadFile: bound(uploadFile),
    renameFile: bound(renameFile),
    deleteFile: bound(deleteFile),
    /** The row's "Cancel upload": 'dropped' | 'cancelling' | 'deleted' (intents/cancel-upload.ts). */
    cancelUpload: bound(cancelUpload),
    /** Put a failed operation back in the queue. */
    retryOperation: bound(retryOperation),
    /** Give up an operation (and whatever can only run after it). */
    discardOperation: bound(discardOperation),
    /** "Upload my copy again": a failed change on a file the server lost becomes an upload of the device's copy; null if nothing to replace. */
    reuploadFile: bound(reuploadFile),
  };
}
