// "Upload my copy again" (issue 32): the server lost a file — a change to it was answered 404 or
// 410 — that this device still holds (the caller reads the bytes: a queued upload's chunks, or the
// device's kept and opened files). The failed change becomes a new upload of those bytes, under
// the name the user gave the file, into the same conversation. One transaction replaces the one
// with the other, so they never both exist: a second tap, or another tab, finds nothing left to
// replace and queues nothing, and the upload's own key makes it one file on the server.
import { SyncInputError } from '../../core/errors';
import { lostOnServer } from '../../mirror/blocking';
import { forget } from '../../mirror/store';
import { opsFor, rebuild, type WriteContext } from './context';
import { dropWithDependents } from './drop';
import { prepareUpload, queueUpload, type UploadSource } from './upload-file';

/**
 * Replaces the failed operation `opId` (on a file the server lost) with an upload of `source` into
 * the file's conversation. Returns the new file's temp id, or null when there is nothing to replace
 * (already replaced or discarded, elsewhere too, or the change is not one on a lost file).
 */
export async function reuploadFile(ctx: WriteContext, opId: string, source: UploadSource): Promise<string | null> {
  const prepared = await prepareUpload(ctx, source);
  const { db } = ctx;
  return ctx
    .write(async () => {
      const op = await db.outbox.where('id').equals(opId).first();
      if (!op || op.state !== 'failed' || !lostOnServer({ kind: op.body.kind, error: op.error })) return null;
      const fileId = op.entityId;
      const conversationId = ((await db.serverFiles.get(fileId)) ?? (await db.files.get(fileId)))?.conversationId ?? null;
      if (!conversationId) throw new SyncInputError('this device does not know which conversation the file was in', 'id');
      // Nothing else queued on the lost file can apply to it any more: it all goes with the change.
      const touched = await dropWithDependents(ctx, await opsFor(ctx, fileId));
      await forget(db, { files: [fileId] });
      const id = await queueUpload(ctx, { conversationId, messageId: null }, prepared);
      await rebuild(ctx, { files: [...touched, id] });
      return id;
    })
    .catch(prepared.refuseIfFull);
}
