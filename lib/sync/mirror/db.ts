// The local database: everything the UI shows is read from here, everything the user does is
// queued here. One database per user and server (see the names below), so two users on one
// device never see each other's mirror and a new token of the same user keeps its outbox.
import { Dexie, type DexieOptions, type EntityTable } from 'dexie';
import type { Conversation, FileObject } from '../../schemas';
import { BY_ARCHIVED_INDEX, listKeysMiddleware, ORDER_INDEX, WORDS_INDEX } from './list-keys';
import type { OutboxOp } from './outbox-row';
import { type SealedBytes, sealMiddleware } from './seal';

/**
 * How a visible row relates to the server: no pending work, the user's work queued, or work that
 * failed; `reporting`: only the app's bookkeeping is queued (bookkeeping.ts: that the user opened
 * it), which the user sees as synced — but the row is not the server's word (server-word.ts).
 */
export type SyncState = 'synced' | 'pending' | 'failed' | 'reporting';

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

/**
 * The bytes of a queued upload, as ArrayBuffer chunks: Safari fails storing Blob/File in IndexedDB.
 * Sealed on a device with a lock (outbox/chunks.ts reads and writes them).
 */
export interface UploadChunk {
  opId: string;
  index: number;
  bytes: ArrayBuffer | SealedBytes;
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

/**
 * "Keep offline" chosen for a conversation (lib/offline): true keeps its files on the device, false
 * opts a pinned conversation out of "keep pinned conversations offline". No row: the pinned rule.
 */
export interface OfflineKeep {
  conversationId: string;
  keep: boolean;
}

/**
 * A file's bytes on the device (lib/offline): complete (in the service worker's file cache), or
 * partly downloaded (the bytes so far in `downloadChunks`, continued with Range).
 */
export interface OfflineFile {
  fileId: string;
  conversationId: string | null;
  /** The signed URL the bytes are cached under (a rename makes a new one). */
  url: string;
  /** Total size in bytes (the file's file_size, or what the response said). */
  size: number;
  /** Bytes held in downloadChunks while incomplete; equals size once complete. */
  received: number;
  complete: boolean;
  /** When the user last opened it (ms), null if never: least recently opened goes first. */
  lastOpenedAt: number | null;
  /** The response's ETag, sent as If-Range when continuing. */
  etag: string | null;
  /** Response headers kept for the whole response (type, disposition, safety headers). */
  headers: Array<[string, string]>;
}

/** Bytes of a file held on the device, keyed by their offset in it (sealed on a device with a lock: lib/offline/file-bytes.ts). */
export interface DownloadChunk {
  fileId: string;
  offset: number;
  bytes: ArrayBuffer | SealedBytes;
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
  offlineKeep: EntityTable<OfflineKeep, 'conversationId'>;
  offlineFiles: EntityTable<OfflineFile, 'fileId'>;
  downloadChunks: EntityTable<DownloadChunk, 'fileId'>;
  /** What the offline-files downloader last reported (lib/offline); apart from meta, which says whether the mirror is empty. */
  offlineState: EntityTable<MetaRow, 'key'>;
};

// ---- Names. One database per (server origin, user): a new token of the same user finds the same
// outbox. Which name belongs to whom is kept in a device registry (lib/view/device.ts); the
// names themselves say nothing about the user (a hash, or random). ----

const PREFIX = 'parley-sync-';

/** cyrb53: a fast 53-bit string hash; works where crypto.subtle does not (plain-http LAN origins). */
export function hashKey(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** Before databases were keyed by user, each was named after a hash of the token that made it. */
export function legacyDatabaseName(token: string): string {
  return `${PREFIX}${hashKey(token)}`;
}

/** A user the server named (GET /v1/me): the same name on every sign-in of that user. */
export function userDatabaseName(origin: string, userId: string): string {
  return `${PREFIX}u-${hashKey(`${origin} ${userId}`)}`;
}

/** A user the server cannot name (no /v1/me): a fresh name, found again through the registry. */
export function anonymousDatabaseName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return `${PREFIX}d-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * The cross-tab lock of one database's replayer. For a legacy name this is the lock the previous
 * version took (`parley-sync:<token hash>`), so an old and a new tab never replay at once.
 */
export function lockNameFor(database: string): string {
  return `parley-sync:${database.startsWith(PREFIX) ? database.slice(PREFIX.length) : database}`;
}

/** Whether a database of that name exists, without creating it. */
export async function databaseExists(name: string, options: DexieOptions = {}): Promise<boolean> {
  const probe = new Dexie(name, { ...options, addons: [] });
  try {
    await probe.open();
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'NoSuchDatabaseError') return false;
    throw error;
  } finally {
    probe.close();
  }
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
  // Version 5 (the pull and the windowed lists): visible conversations get the indexes of the
  // screen's order (list-keys.ts derives them on every write), visible files are listed newest
  // first, overall and per conversation. Indexes nothing queries are dropped (each one costs a
  // B-tree insert per row written, and the initial sync writes every row): conversations'
  // last_active_at and syncState, files' message_id and syncState, serverFiles' message_id.
  // The upgrade rewrites the visible conversations so the middleware adds their keys.
  db.version(5)
    .stores({
      conversations: `id, contact_id, group_id, ${ORDER_INDEX}, ${BY_ARCHIVED_INDEX}`,
      files: 'id, conversationId, created_at, [conversationId+created_at]',
      serverFiles: 'id, conversationId',
    })
    .upgrade(async (tx) => {
      const table = tx.table('conversations');
      await table.bulkPut(await table.toArray());
    });
  // Version 6: server copies are kept only for rows that pending work changes or hides (rebase.ts);
  // a row without is shown exactly as the server has it, so its visible row is its copy. The
  // initial sync then writes one row per record, not two. Copies nothing pending needs go.
  db.version(6)
    .stores({})
    .upgrade(async (tx) => {
      const ops: OutboxOp[] = await tx.table('outbox').toArray();
      const changed = new Set(ops.map((op) => op.entityId));
      const deleting = new Set(ops.filter((op) => op.body.kind === 'conversation.delete').map((op) => op.entityId));
      await tx
        .table('serverConversations')
        .filter((c: ServerConversation) => !changed.has(c.id))
        .delete();
      await tx
        .table('serverFiles')
        .filter((f: ServerFile) => !changed.has(f.id) && !(f.conversationId !== null && deleting.has(f.conversationId)))
        .delete();
    });
  // Version 7 ("Keep offline", lib/offline): new tables only, nothing existing is touched.
  db.version(7).stores({
    offlineKeep: 'conversationId',
    offlineFiles: 'fileId, conversationId',
    downloadChunks: '[fileId+offset], fileId',
    offlineState: 'key',
  });
  // Version 8 (issue 21, the search that forgives): visible conversations get a multi-entry index
  // of their id's words (list-keys.ts, lib/view/search.ts), so a search reads the rows whose words
  // begin with what was typed instead of every row. The upgrade rewrites the visible conversations
  // so the middleware adds their words.
  db.version(8)
    .stores({ conversations: `id, contact_id, group_id, ${ORDER_INDEX}, ${BY_ARCHIVED_INDEX}, *${WORDS_INDEX}` })
    .upgrade(async (tx) => {
      const table = tx.table('conversations');
      await table.bulkPut(await table.toArray());
    });
  db.use(listKeysMiddleware);
  // Encryption at rest while the device has a lock (seal.ts); a pass-through without one.
  db.use(sealMiddleware);
  return db;
}
