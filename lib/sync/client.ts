// The one API the UI writes through. Every call validates its input, then in ONE Dexie
// transaction appends to the outbox and rebuilds the affected visible rows, so the change is
// on screen (in every tab, via live queries) at once and survives a crash as a queued intent.
import {
  ConversationCreateInput,
  ConversationUpdateInput,
  FileUpdateInput,
  ID_PATTERN,
  filenameProblem,
} from '../schemas';
import { NO_LAST_OPENED_KEY } from './apply';
import { getMeta, type ParleyDb } from './db';
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
import { rebuildViews } from './rebase';

/** Bytes are stored in chunks of this size: big enough to be few, small enough for iOS. */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;

/** Thrown for input the server would reject anyway, or for an id that is not in the mirror. */
export class SyncInputError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'SyncInputError';
  }
}

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
}

export type SyncClient = ReturnType<typeof createSyncClient>;

export function createSyncClient(db: ParleyDb, options: SyncClientOptions = {}) {
  const now = options.now ?? (() => Date.now());
  const tables = [
    db.conversations,
    db.files,
    db.serverConversations,
    db.serverFiles,
    db.outbox,
    db.uploadChunks,
    db.idAliases,
  ];

  function newOp(entity: OutboxOp['entity'], entityId: string, body: OpBody): OutboxOp {
    const at = now();
    return {
      id: newOpId(),
      entity,
      entityId,
      body,
      state: 'queued',
      attempts: 0,
      nextAttemptAt: 0,
      firstSentAt: null,
      outcomeUnknown: false,
      error: null,
      createdAt: at,
    };
  }

  async function write<T>(work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await db.transaction('rw', tables, work);
    } catch (error) {
      // Safari's IndexedDB sometimes fails a write with UnknownError and succeeds on a retry.
      if (!(error instanceof Error && error.name === 'UnknownError')) throw error;
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

  async function requireFile(id: string): Promise<void> {
    if (!(await db.files.get(id))) throw new SyncInputError(`no file ${id}`, 'id');
  }

  /** Remove operations and everything that can only run after them (their creations' users). */
  async function cancel(initial: OutboxOp[]): Promise<Set<string>> {
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
    await db.outbox.where('id').anyOf([...doomed]).delete();
    return touched;
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

  const api = {
    resolveId: resolve,

    /** Returns the new conversation's id (a temp id until the create is replayed). */
    async createConversation(input: ConversationCreateInput): Promise<string> {
      const parsed = ConversationCreateInput.safeParse(input);
      if (!parsed.success) throw new SyncInputError(parsed.error.issues[0]?.message ?? 'invalid input');
      const { contact_id = null, group_id = null } = parsed.data;
      if ((contact_id === null) === (group_id === null)) {
        throw new SyncInputError('exactly one of contact_id and group_id is required');
      }
      return write(async () => {
        // One conversation per contact/group, as on the server: reuse the one we already show.
        const existing = contact_id
          ? await db.conversations.where('contact_id').equals(contact_id).first()
          : await db.conversations.where('group_id').equals(group_id!).first();
        if (existing) return existing.id;
        const id = newTempId();
        await db.outbox.add(newOp('conversation', id, { kind: 'conversation.create', contact_id, group_id }));
        await rebuild({ conversations: [id] });
        return id;
      });
    },

    async updateConversation(rawId: string, input: ConversationUpdateInput | Record<string, unknown>): Promise<void> {
      const patch = normalisePatch(input);
      if (Object.keys(patch).length === 0) return;
      await write(async () => {
        const id = await resolve(rawId);
        await requireConversation(id);
        const last = (await opsFor(id)).at(-1);
        const pinsLocalMessage = patch.pinned_message_id ? isTempId(patch.pinned_message_id) : false;
        // Consecutive unsent updates of one conversation become one request: same end state.
        if (last && last.body.kind === 'conversation.update' && neverSent(last) && !pinsLocalMessage) {
          await db.outbox.update(last.seq!, { body: { kind: 'conversation.update', patch: { ...last.body.patch, ...patch } } });
        } else {
          await db.outbox.add(newOp('conversation', id, { kind: 'conversation.update', patch }));
        }
        await rebuild({ conversations: [id] });
      });
    },

    /** Reports that the user opened the conversation (the last_opened_at extension). */
    async markOpened(id: string, atSeconds?: number): Promise<void> {
      if ((await getMeta<boolean>(db, NO_LAST_OPENED_KEY)) === true) return; // the server cannot store it
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
      // Read before the transaction: IndexedDB transactions close across non-IDB awaits.
      const buffer = await toArrayBuffer(source.bytes);
      const fileType = source.type || (source.bytes instanceof Blob && source.bytes.type) || 'application/octet-stream';
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
      });
    },

    async renameFile(rawId: string, filename: string): Promise<void> {
      const parsed = FileUpdateInput.safeParse({ filename });
      if (!parsed.success) throw new SyncInputError(`filename ${parsed.error.issues[0]?.message}`, 'filename');
      await write(async () => {
        const id = await resolve(rawId);
        await requireFile(id);
        const last = (await opsFor(id)).at(-1);
        if (last && neverSent(last) && (last.body.kind === 'file.upload' || last.body.kind === 'file.rename')) {
          // Not sent yet: send the final name only.
          await db.outbox.update(last.seq!, { body: { ...last.body, filename } });
        } else {
          await db.outbox.add(newOp('file', id, { kind: 'file.rename', filename }));
        }
        await rebuild({ files: [id] });
      });
    },

    async deleteFile(rawId: string): Promise<void> {
      await write(async () => {
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
      });
    },

    /** Put a failed operation back in the queue (e.g. after the user fixed what the server objected to). */
    async retryOperation(opId: string): Promise<void> {
      await write(async () => {
        const op = await db.outbox.where('id').equals(opId).first();
        if (!op || op.state !== 'failed') return;
        await db.outbox.update(op.seq!, { state: 'queued', error: null, attempts: 0, nextAttemptAt: 0 });
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
        if (!op || op.state === 'inflight') return;
        const touched = await cancel([op]);
        await rebuild({ conversations: touched, files: touched });
      });
    },
  };
  return api;
}

async function toArrayBuffer(bytes: ArrayBuffer | ArrayBufferView | Blob): Promise<ArrayBuffer> {
  if (bytes instanceof ArrayBuffer) return bytes.slice(0);
  if (ArrayBuffer.isView(bytes)) {
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice().buffer;
  }
  return bytes.arrayBuffer();
}
