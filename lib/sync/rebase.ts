// Rebase: the visible row = the server's last word + the pending operations on top, in order.
// The pure part (project*) is what the property test leans on; rebuildViews writes the result.
// Both the client (after queueing) and the engine (after a response or a pulled page) call
// rebuildViews inside their own transaction, so the UI never sees a half-applied state.
import type { Conversation } from '../schemas';
import type {
  ConversationView,
  FileView,
  ParleyDb,
  ServerConversation,
  ServerFile,
  SyncState,
} from './db';
import { blockedOpIds, mentionedIds, type OutboxOp } from './operations';

/** The conversation as the user should see it, or null when it does not (or no longer) exist. */
export function projectConversation(
  id: string,
  server: ServerConversation | undefined,
  ops: readonly OutboxOp[],
  nowSeconds: number,
): Conversation | null {
  let current: Conversation | null = server ? { ...server } : null;
  for (const op of ops) {
    const body = op.body;
    if (body.kind === 'conversation.create') {
      current ??= {
        id,
        contact_id: body.contact_id,
        group_id: body.group_id,
        pinned_message_id: null,
        is_pinned: false,
        is_muted: false,
        last_active_at: null,
        last_opened_at: null,
        created_at: Math.floor(op.createdAt / 1000) || nowSeconds,
        archived_at: null,
      };
    } else if (body.kind === 'conversation.update') {
      if (current) current = { ...current, ...body.patch };
    } else if (body.kind === 'conversation.delete') {
      current = null;
    }
  }
  return current;
}

/** The file as the user should see it, or null. `conversationGone`: its conversation is being deleted. */
export function projectFile(
  id: string,
  server: ServerFile | undefined,
  ops: readonly OutboxOp[],
  conversationGone: boolean,
): Omit<FileView, 'syncState'> | null {
  if (conversationGone) return null;
  let current: Omit<FileView, 'syncState'> | null = server
    ? { ...server }
    : null;
  for (const op of ops) {
    const body = op.body;
    if (body.kind === 'file.upload') {
      current ??= {
        id,
        message_id: body.messageId ?? body.tempMessageId ?? '',
        filename: body.filename,
        // No URL until the server has the bytes; the UI shows the local bytes meanwhile.
        file_url: '',
        file_type: body.fileType,
        file_size: body.size,
        created_at: Math.floor(op.createdAt / 1000),
        conversationId: body.conversationId,
      };
    } else if (body.kind === 'file.rename') {
      if (current) current = { ...current, filename: body.filename };
    } else if (body.kind === 'file.delete') {
      current = null;
    }
  }
  return current;
}

function stateOf(ops: readonly OutboxOp[], blocked: Set<string>): SyncState {
  if (ops.some((op) => op.state === 'failed' || blocked.has(op.id))) return 'failed';
  return ops.length > 0 ? 'pending' : 'synced';
}

/** Pending work indexed by every id it mentions. */
export interface PendingIndex {
  byEntity: Map<string, OutboxOp[]>;
  mentioned: Set<string>;
  blocked: Set<string>;
  /** Conversations with a queued delete: their files are hidden already. */
  deletingConversations: Set<string>;
}

export function indexPending(ordered: readonly OutboxOp[]): PendingIndex {
  const byEntity = new Map<string, OutboxOp[]>();
  const mentioned = new Set<string>();
  const deletingConversations = new Set<string>();
  for (const op of ordered) {
    const list = byEntity.get(op.entityId) ?? [];
    list.push(op);
    byEntity.set(op.entityId, list);
    for (const id of mentionedIds(op)) mentioned.add(id);
    if (op.body.kind === 'conversation.delete') deletingConversations.add(op.entityId);
  }
  return { byEntity, mentioned, blocked: blockedOpIds(ordered), deletingConversations };
}

export async function loadPending(db: ParleyDb): Promise<PendingIndex> {
  return indexPending(await db.outbox.orderBy('seq').toArray());
}

/** The visible row without its sync state: the server object it mirrors (when it is `synced`). */
function asServerCopy<T extends { syncState: SyncState }>(row: T | undefined): Omit<T, 'syncState'> | undefined {
  if (!row || row.syncState !== 'synced') return undefined;
  const { syncState: _state, ...server } = row;
  return server;
}

/**
 * The server's last word on these rows: the kept server copy, or else the visible row when it is
 * `synced` (no pending work: shown exactly as the server has it). Undefined: not on the server as
 * far as we know (a local create, or gone).
 */
async function serverBases<S, V extends { syncState: SyncState }>(
  copies: { bulkGet(ids: string[]): Promise<(S | undefined)[]> },
  visible: { bulkGet(ids: string[]): Promise<(V | undefined)[]> },
  ids: string[],
): Promise<{ base: (S | Omit<V, 'syncState'> | undefined)[]; copied: boolean[] }> {
  const kept = await copies.bulkGet(ids);
  const missing = ids.filter((_, i) => kept[i] === undefined);
  const shown = missing.length > 0 ? await visible.bulkGet(missing) : [];
  let next = 0;
  const base = kept.map((copy) => copy ?? asServerCopy(shown[next++]));
  return { base, copied: kept.map((copy) => copy !== undefined) };
}

/**
 * Recompute the visible rows for these ids from the server's last word and the outbox. Must run
 * inside a readwrite transaction over conversations, files, serverConversations, serverFiles
 * and outbox. Files of listed conversations are recomputed too (a delete hides them).
 *
 * Server copies are sparse: a row with no pending work is its own server copy (`synced`), so
 * only rows that pending work changes or hides keep one. This is where copies come and go: one
 * is taken (from the synced visible row) when work first touches a row, and dropped once the
 * row is settled again. A caller that learns a row is gone from the server deletes its visible
 * row as well as its copy before rebuilding (store.ts `forget`), or the visible row would stand
 * in for the copy.
 */
export async function rebuildViews(
  db: ParleyDb,
  ids: { conversations?: Iterable<string>; files?: Iterable<string> },
  nowMs: number,
  pending?: PendingIndex,
): Promise<void> {
  const index = pending ?? (await loadPending(db));
  const conversationIds = [...new Set(ids.conversations ?? [])];
  const fileIds = new Set(ids.files ?? []);

  if (conversationIds.length > 0) {
    const { base, copied } = await serverBases(db.serverConversations, db.conversations, conversationIds);
    const puts: ConversationView[] = [];
    const deletes: string[] = [];
    const takeCopies: ServerConversation[] = [];
    const dropCopies: string[] = [];
    conversationIds.forEach((id, i) => {
      const ops = index.byEntity.get(id) ?? [];
      const server = base[i] as ServerConversation | undefined;
      if (ops.length === 0) {
        // Settled: shown as the server has it, and that row is the copy from now on.
        if (copied[i]) dropCopies.push(id);
        if (server && copied[i]) puts.push({ ...server, syncState: 'synced' });
        else if (!server) deletes.push(id);
        return;
      }
      if (server && !copied[i]) takeCopies.push(server);
      const view = projectConversation(id, server, ops, Math.floor(nowMs / 1000));
      if (view) puts.push({ ...view, syncState: stateOf(ops, index.blocked) });
      else deletes.push(id);
    });
    if (takeCopies.length > 0) await db.serverConversations.bulkPut(takeCopies);
    if (dropCopies.length > 0) await db.serverConversations.bulkDelete(dropCopies);
    if (puts.length > 0) await db.conversations.bulkPut(puts);
    if (deletes.length > 0) await db.conversations.bulkDelete(deletes);
    // Files shown under these conversations, whether they come from the server or the outbox.
    for (const key of await db.serverFiles.where('conversationId').anyOf(conversationIds).primaryKeys()) {
      fileIds.add(key);
    }
    for (const key of await db.files.where('conversationId').anyOf(conversationIds).primaryKeys()) {
      fileIds.add(key);
    }
    const wanted = new Set(conversationIds);
    for (const [entityId, ops] of index.byEntity) {
      for (const op of ops) {
        if (op.body.kind === 'file.upload' && wanted.has(op.body.conversationId)) fileIds.add(entityId);
      }
    }
  }

  if (fileIds.size > 0) {
    const list = [...fileIds];
    const { base, copied } = await serverBases(db.serverFiles, db.files, list);
    const puts: FileView[] = [];
    const deletes: string[] = [];
    const takeCopies: ServerFile[] = [];
    const dropCopies: string[] = [];
    list.forEach((id, i) => {
      const ops = index.byEntity.get(id) ?? [];
      const server = base[i] as ServerFile | undefined;
      const upload = ops.find((op) => op.body.kind === 'file.upload');
      const conversationId =
        server?.conversationId ?? (upload?.body.kind === 'file.upload' ? upload.body.conversationId : null);
      const gone = conversationId !== null && index.deletingConversations.has(conversationId);
      if (ops.length === 0 && !gone) {
        if (copied[i]) dropCopies.push(id);
        if (server && copied[i]) puts.push({ ...server, syncState: 'synced' });
        else if (!server) deletes.push(id);
        return;
      }
      // Pending work changes it, or its conversation's queued delete hides it: keep the server's word.
      if (server && !copied[i]) takeCopies.push(server);
      const view = projectFile(id, server, ops, gone);
      if (view) puts.push({ ...view, conversationId: view.conversationId ?? conversationId, syncState: stateOf(ops, index.blocked) });
      else deletes.push(id);
    });
    if (takeCopies.length > 0) await db.serverFiles.bulkPut(takeCopies);
    if (dropCopies.length > 0) await db.serverFiles.bulkDelete(dropCopies);
    if (puts.length > 0) await db.files.bulkPut(puts);
    if (deletes.length > 0) await db.files.bulkDelete(deletes);
  }
}

/** Every table a rebuild touches, for transaction scopes. */
export function viewTables(db: ParleyDb) {
  return [db.conversations, db.files, db.serverConversations, db.serverFiles, db.outbox] as const;
}
