// The one API the UI writes through. Every call validates its input, then in ONE Dexie
// transaction appends to the outbox and rebuilds the affected visible rows, so the change is
// on screen (in every tab, via live queries) at once and survives a crash as a queued intent.
import {
  ConversationCreateInput,
  ConversationUpdateInput,
  FileUpdateInput,
  ID_PATTERN,
  filenameProblem,
} from '../../schemas';
import { SyncInputError } from '../core/errors';
import type { ParleyDb } from '../mirror/db';
import { getMeta } from '../mirror/meta';
import { userWriteScope } from '../mirror/scopes';
import {
  certainlyNotCreated,
  creates,
  isTempId,
  mentionedIds,
  neverSent,
  newOpId,
  newTempId,
  prerequisites,
  type ConversationPatch,
  type OpBody,
  type OutboxOp,
} from './operations';
import { amended, cancelled, discardable, queued, retriedByUser, type NewOp } from './lifecycle';
import { rebuildViews } from '../mirror/rebase';
import { freeBytes, isConnectionLost, isQuotaError, reopen, uploadTooBig, type EstimateStorage } from '../core/storage';

/** Bytes are stored in chunks of this size: big enough to be few, small enough for iOS. */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;

export { SyncInputError };

export interface UploadSource {
  name: string;
  /** Media type; empty or absent lets the server sniff. */
  type?: string;
  bytes: ArrayBuffer | ArrayBufferView | Blob;
}

export interface SyncClientOptions {
  now?: () => number;
  /** Called after every committed local write, e.g. to nudge the sync worker. */
  onLocalWrite?: () => void;
  /** navigator.storage.estimate in the page: an upload that cannot fit is refused before queueing. */
  estimateStorage?: EstimateStorage;
}

export type SyncClient = ReturnType<typeof createSyncClient>;

export function createSyncClient(db: ParleyDb, options: SyncClientOptions = {}) {
  const now = options.now ?? (() => Date.now());
  const tables = userWriteScope(db);

  function newOp(entity: OutboxOp['entity'], entityId: string, body: OpBody, after?: string[]): NewOp {
    return queued({ id: newOpId(), entity, entityId, body, now: now(), after });
  }

  async function write<T>(work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await db.transaction('rw', tables, work);
    } catch (error) {
      // The transaction was rolled back as a whole, so one retry cannot double anything.
      // iOS drops the connection ("Connection to Indexed Database server lost"; Dexie then
      // answers DatabaseClosedError and does not reopen by itself): reopen, then retry once.
      if (isConnectionLost(error)) await reopen(db);
      // Safari's IndexedDB sometimes fails a write with UnknownError and succeeds on a retry.
      else if (!(error instanceof Error && error.name === 'UnknownError')) throw error;
      result = await db.transaction('rw', tables, work);
    }
    options.onLocalWrite?.();
    return result;
  }

  /** A temp id the UI still holds may have been replaced by the server's id meanwhile. */
  async function resolve(id: string): Promise<string> {
    if (!isTempId(id)) return id;
    return (await db.idAliases.get(id))?.realId ?? id;
  }

  async function opsFor(entityId: string): Promise<OutboxOp[]> {
    return db.outbox.where('entityId').equals(entityId).sortBy('seq');
  }

  async function requireConversation(id: string): Promise<void> {
    if (!(await db.conversations.get(id))) throw new SyncInputError(`no conversation ${id}`, 'id');
  }

  /** Whether a queued operation brings this temp id into existence. */
  async function willCreate(tempId: string): Promise<boolean> {
    let found = false;
    await db.outbox.each((op) => {
      if (creates(op).includes(tempId)) found = true;
    });
    return found;
  }

  async function requireFile(id: string): Promise<void> {
    if (!(await db.files.get(id))) throw new SyncInputError(`no file ${id}`, 'id');
  }

  /**
   * Remove operations and everything that can only run after them (their creations' users).
   * `keep`: the initial operations' rows stay (their queued bytes go): a cancelled upload that
   * still has to be ended on the server.
   */
  async function cancel(initial: OutboxOp[], keep = false): Promise<Set<string>> {
    const all = await db.outbox.orderBy('seq').toArray();
    const doomed = new Set(initial.map((op) => op.id));
    const gone = new Set<string>();
    for (const op of initial) creates(op).forEach((id) => gone.add(id));
    for (const op of all) {
      if (doomed.has(op.id)) continue;
      if (gone.has(op.entityId) || prerequisites(op).some((id) => gone.has(id))) {
        doomed.add(op.id);
        creates(op).forEach((id) => gone.add(id));
      }
    }
    const touched = new Set<string>();
    for (const op of all.filter((o) => doomed.has(o.id))) {
      mentionedIds(op).forEach((id) => touched.add(id));
      if (op.body.kind === 'file.upload') await db.uploadChunks.where('opId').equals(op.id).delete();
    }
    if (keep) initial.forEach((op) => doomed.delete(op.id));
    await db.outbox.where('id').anyOf([...doomed]).delete();
    return touched;
  }

  /** Conversations with this contact (or group) whose delete is queued: a new create goes after them. */
  async function queuedDeletesOf(who: { contact_id: string } | { group_id: string }): Promise<string[]> {
    const deletes = await db.outbox.filter((op) => op.body.kind === 'conversation.delete').toArray();
    const ids: string[] = [];
    for (const del of deletes) {
      const known = await db.serverConversations.get(del.entityId);
      const create = known ? undefined : (await opsFor(del.entityId)).find((op) => op.body.kind === 'conversation.create');
      const of = known ?? (create?.body.kind === 'conversation.create' ? create.body : null);
      if (!of) continue;
      const same = 'contact_id' in who ? of.contact_id === who.contact_id : of.group_id === who.group_id;
      if (same) ids.push(del.entityId);
    }
    return ids;
  }

  async function rebuild(ids: { conversations?: Iterable<string>; files?: Iterable<string> }) {
    await rebuildViews(db, ids, now());
  }

  function normalisePatch(input: unknown): ConversationPatch {
    const parsed = ConversationUpdateInput.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SyncInputError(issue?.message ?? 'invalid update', issue?.path.join('.'));
    }
    const patch: ConversationPatch = {};
    for (const [key, value] of Object.entries(parsed.data)) {
      if (value !== undefined) (patch as Record<string, unknown>)[key] = value;
    }
    return patch;
  }

  /** A file's deletion (inside the caller's transaction): a never-sent upload simply goes. */
  async function deleteIn(rawId: string): Promise<void> {
    const id = await resolve(rawId);
    await requireFile(id);
    const ops = await opsFor(id);
    const upload = ops.find((op) => op.body.kind === 'file.upload');
    const all = await db.outbox.toArray();
    const messageUsedLater =
      upload?.body.kind === 'file.upload' &&
      upload.body.tempMessageId !== null &&
      all.some((op) => op.id !== upload.id && mentionedIds(op).includes((upload.body as { tempMessageId: string }).tempMessageId));
    if (upload && certainlyNotCreated(upload) && !messageUsedLater) {
      await cancel([upload]);
    } else {
      await cancel(ops.filter((op) => op.body.kind === 'file.rename' && neverSent(op)));
      await db.outbox.add(newOp('file', id, { kind: 'file.delete' }));
    }
    await rebuild({ files: [id] });
  }

  const api = {
    resolveId: resolve,

    /** Returns the new conversation's id (a temp id until the create is replayed). */
    async createConversation(input: ConversationCreateInput): Promise<string> {
      const parsed = ConversationCreateInput.safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new SyncInputError(issue?.message ?? 'invalid input', issue?.path.join('.'));
      }
      const { contact_id, group_id } = parsed.data;
      const party: { contact_id: string } | { group_id: string } | null =
        contact_id != null && group_id == null ? { contact_id } : group_id != null && contact_id == null ? { group_id } : null;
      if (!party) throw new SyncInputError('exactly one of contact_id and group_id is required');
      return write(async () => {
        const after = await queuedDeletesOf(party);
        // One conversation per contact/group, as on the server: reuse the one we already show —
        // unless one with the same contact is still to be deleted: what we show may be that very
        // conversation under another id (a create whose answer was lost), so start a new one.
        const existing =
          'contact_id' in party
            ? await db.conversations.where('contact_id').equals(party.contact_id).first()
            : await db.conversations.where('group_id').equals(party.group_id).first();
        if (existing && after.length === 0) return existing.id;
        const id = newTempId();
        await db.outbox.add(newOp('conversation', id, { kind: 'conversation.create', ...party }, after));
        await rebuild({ conversations: [id] });
        return id;
      });
    },

    async updateConversation(rawId: string, input: ConversationUpdateInput | Record<string, unknown>): Promise<void> {
      // The message of an upload still queued has a temp id, which the API's schema refuses: it
      // is checked below instead (the outbox must be going to create it), and the replay sends
      // the pin once the upload has made the real message (remapOp swaps the id).
      const raw = (input ?? {}) as Record<string, unknown>;
      const localPin = typeof raw.pinned_message_id === 'string' && isTempId(raw.pinned_message_id) ? raw.pinned_message_id : null;
      const patch = normalisePatch(localPin ? { ...raw, pinned_message_id: undefined } : input);
      if (localPin) patch.pinned_message_id = localPin;
      if (Object.keys(patch).length === 0) return;
      await write(async () => {
        const id = await resolve(rawId);
        await requireConversation(id);
        if (localPin) {
          patch.pinned_message_id = await resolve(localPin);
          if (isTempId(patch.pinned_message_id) && !(await willCreate(patch.pinned_message_id))) {
            throw new SyncInputError('this message is no longer going to be sent', 'pinned_message_id');
          }
        }
        const last = (await opsFor(id)).at(-1);
        const pinsLocalMessage = patch.pinned_message_id ? isTempId(patch.pinned_message_id) : false;
        // Consecutive unsent updates of one conversation become one request: same end state.
        const merged =
          last && last.body.kind === 'conversation.update' && !pinsLocalMessage
            ? amended(last, { kind: 'conversation.update', patch: { ...last.body.patch, ...patch } })
            : null;
        if (last && merged) {
          await db.outbox.update(last.seq, merged);
        } else {
          await db.outbox.add(newOp('conversation', id, { kind: 'conversation.update', patch }));
        }
        await rebuild({ conversations: [id] });
      });
    },

    /** Reports that the user opened the conversation (the last_opened_at extension). */
    async markOpened(id: string, atSeconds?: number): Promise<void> {
      if ((await getMeta(db, 'serverLacksLastOpened')) === true) return; // the server cannot store it
      await api.updateConversation(id, { last_opened_at: atSeconds ?? Math.floor(now() / 1000) });
    },

    async deleteConversation(rawId: string): Promise<void> {
      await write(async () => {
        const id = await resolve(rawId);
        await requireConversation(id);
        const ops = await opsFor(id);
        const create = ops.find((op) => op.body.kind === 'conversation.create');
        let touched: Set<string>;
        if (create && certainlyNotCreated(create)) {
          // Never reached the server: create + delete cancel out, with everything put into it.
          touched = await cancel([create]);
        } else {
          // Unsent updates of something about to be deleted are pointless.
          touched = await cancel(ops.filter((op) => op.body.kind === 'conversation.update' && neverSent(op)));
          await db.outbox.add(newOp('conversation', id, { kind: 'conversation.delete' }));
          touched.add(id);
        }
        await rebuild({ conversations: [id, ...touched], files: touched });
      });
    },

    /** Queues an upload; returns the file's (temp) id. The bytes stay in IndexedDB until sent. */
    async uploadFile(target: { conversationId: string; messageId?: string }, source: UploadSource): Promise<string> {
      const problem = filenameProblem(source.name);
      if (problem) throw new SyncInputError(`filename ${problem}`, 'filename');
      if (target.messageId && !ID_PATTERN.test(target.messageId) && !isTempId(target.messageId)) {
        throw new SyncInputError('message_id is not a message id', 'message_id');
      }
      // Refused at once, before the bytes are copied, when the device cannot hold them until sent.
      const needed = byteLength(source.bytes);
      const available = await freeBytes(options.estimateStorage);
      if (available !== null && needed > available) throw uploadTooBig(source.name, needed, available);
      // Read before the transaction: IndexedDB transactions close across non-IDB awaits.
      const buffer = await toArrayBuffer(source.bytes);
      const fileType = source.type || (source.bytes instanceof Blob && source.bytes.type) || 'application/octet-stream';
      // A full quota met while storing the chunks aborts the whole transaction (op and chunks).
      const refuseIfFull = (error: unknown): never => {
        throw isQuotaError(error) ? uploadTooBig(source.name, buffer.byteLength, null) : error;
      };
      return write(async () => {
        const conversationId = await resolve(target.conversationId);
        await requireConversation(conversationId);
        const messageId = target.messageId ? await resolve(target.messageId) : null;
        const id = newTempId();
        const chunkCount = Math.max(1, Math.ceil(buffer.byteLength / UPLOAD_CHUNK_BYTES));
        const op = newOp('file', id, {
          kind: 'file.upload',
          conversationId,
          messageId,
          tempMessageId: messageId ? null : newTempId(),
          filename: source.name,
          fileType,
          size: buffer.byteLength,
          chunkCount,
        });
        await db.outbox.add(op);
        const chunks = [];
        for (let index = 0; index < chunkCount; index++) {
          const start = index * UPLOAD_CHUNK_BYTES;
          chunks.push({ opId: op.id, index, bytes: buffer.slice(start, start + UPLOAD_CHUNK_BYTES) });
        }
        await db.uploadChunks.bulkAdd(chunks);
        await rebuild({ files: [id] });
        return id;
      }).catch(refuseIfFull);
    },

    async renameFile(rawId: string, filename: string): Promise<void> {
      const parsed = FileUpdateInput.safeParse({ filename });
      if (!parsed.success) throw new SyncInputError(`filename ${parsed.error.issues[0]?.message}`, 'filename');
      await write(async () => {
        const id = await resolve(rawId);
        await requireFile(id);
        const last = (await opsFor(id)).at(-1);
        // Not sent yet: send the final name only.
        const renamed = last && (last.body.kind === 'file.upload' || last.body.kind === 'file.rename') ? amended(last, { ...last.body, filename }) : null;
        if (last && renamed) {
          await db.outbox.update(last.seq, renamed);
        } else {
          await db.outbox.add(newOp('file', id, { kind: 'file.rename', filename }));
        }
        await rebuild({ files: [id] });
      });
    },

    async deleteFile(rawId: string): Promise<void> {
      // An async function: Dexie follows its awaits through the transaction only when it can tell.
      await write(async () => deleteIn(rawId));
    },

    /**
     * The user's "Cancel upload" on a file's row, in one transaction: its queued bytes and the
     * upload's operation go, with whatever waits on it (a queued pin of its message, a rename of
     * the file). `dropped`: it never reached the server. `cancelling`: it may have (a tus upload
     * begun, a request out): the operation becomes the upload's cancellation (lifecycle.ts
     * `cancelled`), which the replay sends — the upload terminated, a running transfer aborted, and
     * the file deleted if the upload completed meanwhile. `deleted`: the upload had already
     * completed: the file is deleted (as deleteFile).
     */
    async cancelUpload(rawId: string): Promise<'dropped' | 'cancelling' | 'deleted'> {
      return write(async () => {
        const id = await resolve(rawId);
        await requireFile(id);
        const upload = (await opsFor(id)).find((op) => op.body.kind === 'file.upload');
        if (!upload) {
          await deleteIn(id);
          return 'deleted';
        }
        if (certainlyNotCreated(upload) && !upload.tus?.url) {
          const touched = await cancel([upload]);
          await rebuild({ conversations: touched, files: [id, ...touched] });
          return 'dropped';
        }
        const touched = await cancel([upload], true);
        await db.outbox.update(upload.seq, cancelled(upload));
        await rebuild({ conversations: touched, files: [id, ...touched] });
        return 'cancelling';
      });
    },

    /** Put a failed operation back in the queue (e.g. after the user fixed what the server objected to). */
    async retryOperation(opId: string): Promise<void> {
      await write(async () => {
        const op = await db.outbox.where('id').equals(opId).first();
        if (!op || op.state !== 'failed') return;
        await db.outbox.update(op.seq, retriedByUser);
        await rebuild({ conversations: mentionedIds(op), files: mentionedIds(op) });
      });
    },

    /**
     * Give up an operation (and whatever can only run after it). The visible rows fall back to
     * the server's state, with any other pending work still on top.
     */
    async discardOperation(opId: string): Promise<void> {
      await write(async () => {
        const op = await db.outbox.where('id').equals(opId).first();
        if (!op || !discardable(op)) return;
        const touched = await cancel([op]);
        await rebuild({ conversations: touched, files: touched });
      });
    },
  };
  return api;
}

function byteLength(bytes: ArrayBuffer | ArrayBufferView | Blob): number {
  return bytes instanceof Blob ? bytes.size : bytes.byteLength;
}

async function toArrayBuffer(bytes: ArrayBuffer | ArrayBufferView | Blob): Promise<ArrayBuffer> {
  if (bytes instanceof ArrayBuffer) return bytes.slice(0);
  if (ArrayBuffer.isView(bytes)) {
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice().buffer;
  }
  return bytes.arrayBuffer();
}
