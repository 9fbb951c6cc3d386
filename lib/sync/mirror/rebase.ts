// Rebase: the visible row = the server's last word + the pending operations on top, in order.
// The pure part (project*) is what the property test leans on; rebuildViews writes the result.
// Both the client (after queueing) and the engine (after a response or a pulled page) call
// rebuildViews inside their own transaction, so the UI never sees a half-applied state.
import type { Conversation } from '../../schemas';
import type {
  ConversationView,
  FileView,
  ParleyDb,
  ServerConversation,
  ServerFile,
  SyncState,
} from './db';
import { blockedOpIds, mentionedIds } from './blocking';
import { isBookkeeping } from './bookkeeping';
import type { OutboxOp } from './outbox-row';
import { serverWord } from './server-word';

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
        contact_id: body.contact_id ?? null,
        group_id: body.group_id ?? null,
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

/**
 * The row's state from the work on it. The app's bookkeeping never marks a row (bookkeeping.ts); a
 * failed one (stored before it was dropped on refusal) still does, as it still holds up the row.
 */
export function stateOf(ops: readonly OutboxOp[], blocked: ReadonlySet<string>): SyncState {
  if (ops.some((op) => op.state === 'failed' || blocked.has(op.id))) return 'failed';
  if (ops.some((op) => !isBookkeeping(op.body))) return 'pending';
  return ops.length > 0 ? 'reporting' : 'synced';
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
    const nowSeconds = Math.floor(nowMs / 1000);
    await rebuildRows<ServerConversation, ConversationView>(index, conversationIds, {
      copies: db.serverConversations,
      visible: db.conversations,
      hidden: () => false,
      project: (id, server, ops) => projectConversation(id, server, ops, nowSeconds),
    });
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
    await rebuildRows<ServerFile, FileView>(index, [...fileIds], {
      copies: db.serverFiles,
      visible: db.files,
      // Its conversation's queued delete hides it: the server's word is kept meanwhile.
      hidden: (server, ops) => {
        const conversationId = fileConversation(server, ops);
        return conversationId !== null && index.deletingConversations.has(conversationId);
      },
      project: (id, server, ops, hidden) => {
        const view = projectFile(id, server, ops, hidden);
        return view && { ...view, conversationId: view.conversationId ?? fileConversation(server, ops) };
      },
    });
  }
}

/** The conversation a file is in: the server's word, else its queued upload's. */
function fileConversation(server: ServerFile | undefined, ops: readonly OutboxOp[]): string | null {
  const upload = ops.find((op) => op.body.kind === 'file.upload');
  return server?.conversationId ?? (upload?.body.kind === 'file.upload' ? upload.body.conversationId : null);
}

/** What a rebuild does with a table. */
interface RowTable<T> {
  bulkGet(ids: string[]): Promise<(T | undefined)[]>;
  bulkPut(rows: readonly T[]): Promise<unknown>;
  bulkDelete(ids: string[]): Promise<void>;
}

/** How one kind of row is rebuilt: where its copies and visible rows live, and its projection. */
interface RowKind<S extends { id: string }, V extends S & { syncState: SyncState }> {
  copies: RowTable<S>;
  visible: RowTable<V>;
  /** Pending work elsewhere hides the row (it then keeps its copy, as if work touched it). */
  hidden(server: S | undefined, ops: readonly OutboxOp[]): boolean;
  project(id: string, server: S | undefined, ops: readonly OutboxOp[], hidden: boolean): S | null;
}

/**
 * Rebuilds the visible rows of one kind, taking a copy (from the synced visible row) when work
 * first touches a row and dropping it once the row is settled again.
 */
async function rebuildRows<S extends { id: string }, V extends S & { syncState: SyncState }>(
  index: PendingIndex,
  ids: string[],
  kind: RowKind<S, V>,
): Promise<void> {
  const { rows, copied } = await serverWord(kind.copies, kind.visible, ids);
  const puts: V[] = [];
  const deletes: string[] = [];
  const takeCopies: S[] = [];
  const dropCopies: string[] = [];
  ids.forEach((id, i) => {
    const ops = index.byEntity.get(id) ?? [];
    const server = rows[i] as S | undefined;
    const hidden = kind.hidden(server, ops);
    if (ops.length === 0 && !hidden) {
      // Settled: shown as the server has it, and that row is the copy from now on.
      if (copied[i]) dropCopies.push(id);
      if (server && copied[i]) puts.push({ ...server, syncState: 'synced' } as V);
      else if (!server) deletes.push(id);
      return;
    }
    if (server && !copied[i]) takeCopies.push(server);
    const view = kind.project(id, server, ops, hidden);
    if (view) puts.push({ ...view, syncState: stateOf(ops, index.blocked) } as V);
    else deletes.push(id);
  });
  if (takeCopies.length > 0) await kind.copies.bulkPut(takeCopies);
  if (dropCopies.length > 0) await kind.copies.bulkDelete(dropCopies);
  if (puts.length > 0) await kind.visible.bulkPut(puts);
  if (deletes.length > 0) await kind.visible.bulkDelete(deletes);
}
