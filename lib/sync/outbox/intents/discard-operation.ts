// The user's "Discard" on an operation.
import { rebuild, type WriteContext } from './context';
import { dropWithDependents } from './drop';
import { discardable } from '../lifecycle';

/**
 * Give up an operation (and whatever can only run after it). The visible rows fall back to the
 * server's state, with any other pending work still on top.
 */
export async function discardOperation(ctx: WriteContext, opId: string): Promise<void> {
  await ctx.write(async () => {
    const op = await ctx.db.outbox.where('id').equals(opId).first();
    if (!op || !discardable(op)) return;
    const touched = await dropWithDependents(ctx, [op]);
    await rebuild(ctx, { conversations: touched, files: touched });
  });
}
