// The user uploads a file into a conversation (or onto a message of it). The bytes are copied into
// IndexedDB (chunks.ts) with the queued operation, and stay there until the server has them.
import { ID_PATTERN, filenameProblem } from '../../../schemas';
import { SyncInputError } from '../../core/errors';
import { freeBytes, isQuotaError, uploadTooBig } from '../../core/storage';
import { newOp, rebuild, requireConversation, resolve, type WriteContext } from './context';
import { isTempId, newTempId } from '../operations';
import { chunkCountOf, storeChunks } from '../chunks';

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
  const problem = filenameProblem(source.name);
  if (problem) throw new SyncInputError(`filename ${problem}`, 'filename');
  if (target.messageId && !ID_PATTERN.test(target.messageId) && !isTempId(target.messageId)) {
    throw new SyncInputError('message_id is not a message id', 'message_id');
  }
  // Refused at once, before the bytes are copied, when the device cannot hold them until sent.
  const needed = byteLength(source.bytes);
  const available = await freeBytes(ctx.estimateStorage);
  if (available !== null && needed > available) throw uploadTooBig(source.name, needed, available);
  // Read before the transaction: IndexedDB transactions close across non-IDB awaits.
  const buffer = await toArrayBuffer(source.bytes);
  const fileType = source.type || (source.bytes instanceof Blob && source.bytes.type) || 'application/octet-stream';
  // A full quota met while storing the chunks aborts the whole transaction (op and chunks).
  const refuseIfFull = (error: unknown): never => {
    throw isQuotaError(error) ? uploadTooBig(source.name, buffer.byteLength, null) : error;
  };
  return ctx
    .write(async () => {
      const conversationId = await resolve(ctx, target.conversationId);
      await requireConversation(ctx, conversationId);
      const messageId = target.messageId ? await resolve(ctx, target.messageId) : null;
      const id = newTempId();
      const op = newOp(ctx, 'file', id, {
        kind: 'file.upload',
        conversationId,
        messageId,
        tempMessageId: messageId ? null : newTempId(),
        filename: source.name,
        fileType,
        size: buffer.byteLength,
        chunkCount: chunkCountOf(buffer.byteLength),
      });
      await ctx.db.outbox.add(op);
      await storeChunks(ctx.db, op.id, buffer);
      await rebuild(ctx, { files: [id] });
      return id;
    })
    .catch(refuseIfFull);
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
