// The user uploads a file into a conversation (or onto a message of it). The bytes are copied into
// IndexedDB (chunks.ts) with the queued operation, and stay there until the server has them.
import { ID_PATTERN, filenameProblem } from '../../../name-rules';
import { SyncInputError } from '../../core/errors';
import { freeBytes, isQuotaError, uploadTooBig } from '../../core/storage';
import { newOp, rebuild, requireConversation, resolve, type WriteContext } from './context';
import { isTempId, newTempId } from '../operations';
import { chunkCountOf, prepareChunks, storeChunks } from '../chunks';
import type { SealedBytes } from '../../mirror/seal';

export interface UploadSource {
  name: string;
  /** Media type; empty or absent lets the server sniff. */
  type?: string;
  bytes: ArrayBuffer | ArrayBufferView | Blob;
}

/** Queues an upload; returns the file's (temp) id. The bytes stay in IndexedDB until sent. */
export async function uploadFile(
  ctx: WriteContext,
  target: { conversationId: string; messageId?: string },
  source: UploadSource,
): Promise<string> {
  if (target.messageId && !ID_PATTERN.test(target.messageId) && !isTempId(target.messageId)) {
    throw new SyncInputError('message_id is not a message id', 'message_id');
  }
  const prepared = await prepareUpload(ctx, source);
  return ctx
    .write(async () => {
      const conversationId = await resolve(ctx, target.conversationId);
      const messageId = target.messageId ? await resolve(ctx, target.messageId) : null;
      return queueUpload(ctx, { conversationId, messageId }, prepared);
    })
    .catch(prepared.refuseIfFull);
}

/** An upload's bytes and type, read before the transaction (IndexedDB transactions close across non-IDB awaits). */
export interface PreparedUpload {
  name: string;
  fileType: string;
  buffer: ArrayBuffer;
  /** The bytes as they are stored: chunked, sealed on a device with a lock. */
  chunks: Array<ArrayBuffer | SealedBytes>;
  /** A full quota met while storing the chunks aborts the whole transaction: said as "too big". */
  refuseIfFull(error: unknown): never;
}

/** Checks an upload and reads its bytes: refused at once, before they are copied, when the device cannot hold them until sent. */
export async function prepareUpload(ctx: WriteContext, source: UploadSource): Promise<PreparedUpload> {
  const problem = filenameProblem(source.name);
  if (problem) throw new SyncInputError(`filename ${problem}`, 'filename');
  const needed = byteLength(source.bytes);
  const available = await freeBytes(ctx.estimateStorage);
  if (available !== null && needed > available) throw uploadTooBig(source.name, needed, available);
  const buffer = await toArrayBuffer(source.bytes);
  const fileType = source.type || (source.bytes instanceof Blob && source.bytes.type) || 'application/octet-stream';
  return {
    name: source.name,
    fileType,
    buffer,
    chunks: await prepareChunks(buffer),
    refuseIfFull: (error: unknown): never => {
      throw isQuotaError(error) ? uploadTooBig(source.name, buffer.byteLength, null) : error;
    },
  };
}

/**
 * Inside the write's transaction: the upload operation and its bytes, the file's row shown.
 * Returns the file's temp id. `target`: resolved ids (a message of the conversation, or a new one).
 */
export async function queueUpload(ctx: WriteContext, target: { conversationId: string; messageId: string | null }, upload: PreparedUpload): Promise<string> {
  const { conversationId, messageId } = target;
  await requireConversation(ctx, conversationId);
  const id = newTempId();
  const op = newOp(ctx, 'file', id, {
    kind: 'file.upload',
    conversationId,
    messageId,
    tempMessageId: messageId ? null : newTempId(),
    filename: upload.name,
    fileType: upload.fileType,
    size: upload.buffer.byteLength,
    chunkCount: chunkCountOf(upload.buffer.byteLength),
  });
  await ctx.db.outbox.add(op);
  await storeChunks(ctx.db, op.id, upload.chunks);
  await rebuild(ctx, { files: [id] });
  return id;
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
