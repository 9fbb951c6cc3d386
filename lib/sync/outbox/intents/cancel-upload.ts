// The user's "Cancel upload" on a file's row.
import { opsFor, rebuild, requireFile, resolve, type WriteContext } from './context';
import { deleteFileIn } from './delete-file';
import { dropWithDependents } from './drop';
import { certainlyNotCreated } from '../operations';
import { cancelled } from '../lifecycle';

/**
 * In one transaction: the upload's queued bytes and its operation go, with whatever waits on it
 * (a queued pin of its message, a rename of the file). `dropped`: it never reached the server.
 * `cancelling`: it may have (a tus upload begun, a request out): the operation becomes the
 * upload's cancellation (lifecycle.ts `cancelled`), which the replay sends (cancellation.ts) — the
 * upload terminated, a running transfer aborted, and the file deleted if the upload completed
 * meanwhile. `deleted`: the upload had already completed: the file is deleted (as deleteFile).
 */
export async function cancelUpload(ctx: WriteContext, rawId: string): Promise<'dropped' | 'cancelling' | 'deleted'> {
  return ctx.write(async () => {
    const id = await resolve(ctx, rawId);
    await requireFile(ctx, id);
    const upload = (await opsFor(ctx, id)).find((op) => op.body.kind === 'file.upload');
    if (!upload) {
      await deleteFileIn(ctx, id);
      return 'deleted';
    }
    if (certainlyNotCreated(upload) && !upload.tus?.url) {
      const touched = await dropWithDependents(ctx, [upload]);
      await rebuild(ctx, { conversations: touched, files: [id, ...touched] });
      return 'dropped';
    }
    const touched = await dropWithDependents(ctx, [upload], true);
    await ctx.db.outbox.update(upload.seq, cancelled(upload));
    await rebuild(ctx, { conversations: touched, files: [id, ...touched] });
    return 'cancelling';
  });
}
