// The user's "Retry" on a failed operation.
import { rebuild, type WriteContext } from './context';
import { mentionedIds } from '../operations';
import { retriedByUser } from '../lifecycle';

/** Put a failed operation back in the queue (e.g. after the user fixed what the server objected to). */
export async function retryOperation(ctx: WriteContext, opId: string): Promise<void> {
  await ctx.write(async () => {
    const op = await ctx.db.outbox.where('id').equals(opId).first();
    if (!op || op.state !== 'failed') return;
    await ctx.db.outbox.update(op.seq, retriedByUser);
    await rebuild(ctx, { conversations: mentionedIds(op), files: mentionedIds(op) });
  });
}
