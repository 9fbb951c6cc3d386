// The local database: everything the UI shows is read from here, everything the user does is
// queued here. One database per signed-in user (the name is a parameter), so signing out is
// "close and forget the name" and two users on one device never see each other's mirror.
import { Dexie, type DexieOptions, type EntityTable } from 'dexie';
import type { Conversation, FileObject } from '../schemas';
import type { OutboxOp } from './operations';

/** How a visible row relates to the server: no pending work, work queued, or work that failed. */
export type SyncState = 'synced' | 'pending' | 'failed';

/**
 * What the UI lists. The fields of the server object exactly (temp ids and a provisional object
 * while a create is not yet replayed), plus `syncState`. Rebuilt from the server copy and the
 * outbox whenever either changes (see rebase.ts), so it never has to be edited by hand.
 */
export interface ConversationView extends Conversation {
  syncState: SyncState;
}

export interface FileView extends FileObject {
  /** The conversation the file belongs to; null until learned (the file object does not say). */
  conversationId: string | null;
  syncState: SyncState;
}

/** The last state the server returned for a conversation: the base that pending work is rebased on. */
export type ServerConversation = Conversation;

export interface ServerFile extends FileObject {
  conversationId: string | null;
}

/** The bytes of a queued upload, as ArrayBuffer chunks: Safari fails storing Blob/File in IndexedDB. */
export interface UploadChunk {
  opId: string;
  index: number;
  bytes: ArrayBuffer;
}

/** A temp id that has been replaced by the server's id, so a UI holding the old one can follow. */
export interface IdAlias {
  tempId: string;
  realId: string;
}

/**
 * A conversation whose files were listed completely (GET /v1/files?conversation_id=) while its
 * last_active_at had this value. An upload raises last_active_at, so an unchanged value means no
 * file can have been added since and the conversation need not be listed again.
 */
export interface FileScan {
  conversationId: string;
  lastActiveAt: number | null;
  /** Pull pass of that listing. */
  passId: number;
}

export interface MetaRow {
  key: string;
  value: unknown;
}

export type ParleyDb = Dexie & {
  conversations: EntityTable<ConversationView, 'id'>;
  files: EntityTable<FileView, 'id'>;
  serverConversations: EntityTable<ServerConversation, 'id'>;
  serverFiles: EntityTable<ServerFile, 'id'>;
  outbox: EntityTable<OutboxOp, 'seq'>;
  uploadChunks: EntityTable<UploadChunk, 'opId'>;
  idAliases: EntityTable<IdAlias, 'tempId'>;
  fileScans: EntityTable<FileScan, 'conversationId'>;
  meta: EntityTable<MetaRow, 'key'>;
};

/** The database name for one signed-in user. */
export function databaseNameFor(userKey: string): string {
  return `parley-sync-${userKey}`;
}

/** Signing out: the user's mirror and outbox go, unsynced changes included (the UI asks first). */
export function deleteSyncDb(userKey: string): Promise<void> {
  return Dexie.delete(databaseNameFor(userKey));
}

/**
 * Opens (lazily) the sync database. `options` lets tests hand in their own IDBFactory
 * (`{ indexedDB, IDBKeyRange }`) so every test gets an empty, isolated database.
 */
export function openSyncDb(name: string, options: DexieOptions = {}): ParleyDb {
  const db = new Dexie(name, options) as ParleyDb;
  // Version 1. Each later schema change adds `db.version(n).stores({...}).upgrade(tx => ...)`
  // below, never edits this one: browsers holding version 1 must be able to step forward.
  db.version(1).stores({
    conversations: 'id, contact_id, group_id, last_active_at, syncState',
    files: 'id, conversationId, message_id, syncState',
    serverConversations: 'id, seenInPass',
    serverFiles: 'id, conversationId, seenInPass',
    // seq gives the global replay order; id (the Idempotency-Key) is unique.
    outbox: '++seq, &id, entityId, state',
    uploadChunks: '[opId+index], opId',
    idAliases: 'tempId, realId',
    fileScans: 'conversationId',
    meta: 'key',
  });
  // Version 2 exists to prove the upgrade path: it adds an index on files' message, which pull
  // uses, and backfills nothing (indexes are built by IndexedDB itself).
  db.version(2)
    .stores({ serverFiles: 'id, conversationId, seenInPass, message_id' })
    .upgrade(async (tx) => {
      // Rows written by version 1 before the `conversationId` bookkeeping existed would lack it;
      // normalise to null so queries on "unknown conversation" find them.
      await tx
        .table('serverFiles')
        .toCollection()
        .modify((row: Partial<ServerFile>) => {
          if (row.conversationId === undefined) row.conversationId = null;
        });
    });
  // Version 3 drops `seenInPass`: the sweep works from the ids of a complete listing (pull.ts),
  // so the per-row pass number was written on every change and read by nothing.
  db.version(3)
    .stores({ serverConversations: 'id', serverFiles: 'id, conversationId, message_id' })
    .upgrade(async (tx) => {
      for (const table of ['serverConversations', 'serverFiles']) {
        await tx
          .table(table)
          .toCollection()
          .modify((row: Record<string, unknown>) => {
            delete row.seenInPass;
          });
      }
    });
  return db;
}

// ---- Small typed accessors for the meta table. ----

export async function getMeta<T>(db: ParleyDb, key: string): Promise<T | undefined> {
  const row = await db.meta.get(key);
  return row?.value as T | undefined;
}

export async function setMeta<T>(db: ParleyDb, key: string, value: T): Promise<void> {
  await db.meta.put({ key, value });
}
