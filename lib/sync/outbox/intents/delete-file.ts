// The user deletes a file.
import { newOp, opsFor, rebuild, requireFile, resolve, type WriteContext } from './context';
import { dropWithDependents } from './drop';
import { certainlyNotCreated, mentionedIds, neverSent } from '../operations';

export async function deleteFile(ctx: WriteContext, rawId: string): Promise<void> {
  // An async function: Dexie follows its awaits through the transaction only when it can tell.
  await ctx.write(async () => deleteFileIn(ctx, rawId));
}

/** A file's deletion, inside the caller's transaction: a never-sent upload simply goes. */
export async function deleteFileIn(ctx: WriteContext, rawId: string): Promise<void> {
  const { db } = ctx;
  const id = await resolve(ctx, rawId);
  await requireFile(ctx, id);
  const ops = await opsFor(ctx, id);
  const upload = ops.find((op) => op.body.kind === 'file.upload');
  const all = await db.outbox.toArray();
  const messageUsedLater =
    upload?.body.kind === 'file.upload' &&
    upload.body.tempMessageId !== null &&
    all.some((op) => op.id !== upload.id && mentionedIds(op).includes((upload.body as { tempMessageId: string }).tempMessageId));
  if (upload && certainlyNotCreated(upload) && !messageUsedLater) {
    await dropWithDependents(ctx, [upload]);
  } else {
    await dropWithDependents(ctx, ops.filter((op) => op.body.kind === 'file.rename' && neverSent(op)));
    await db.outbox.add(newOp(ctx, 'file', id, { kind: 'file.delete' }));
  }
  await rebuild(ctx, { files: [id] });
}
