// The user deletes a conversation (with its files).
import { newOp, opsFor, rebuild, requireConversation, resolve, type WriteContext } from './context';
import { dropWithDependents } from './drop';
import { certainlyNotCreated, neverSent } from '../operations';

export async function deleteConversation(ctx: WriteContext, rawId: string): Promise<void> {
  await ctx.write(async () => {
    const id = await resolve(ctx, rawId);
    await requireConversation(ctx, id);
    const ops = await opsFor(ctx, id);
    const create = ops.find((op) => op.body.kind === 'conversation.create');
    let touched: Set<string>;
    if (create && certainlyNotCreated(create)) {
      // Never reached the server: create + delete cancel out, with everything put into it.
      touched = await dropWithDependents(ctx, [create]);
    } else {
      // Unsent updates of something about to be deleted are pointless.
      touched = await dropWithDependents(ctx, ops.filter((op) => op.body.kind === 'conversation.update' && neverSent(op)));
      await ctx.db.outbox.add(newOp(ctx, 'conversation', id, { kind: 'conversation.delete' }));
      touched.add(id);
    }
    await rebuild(ctx, { conversations: [id, ...touched], files: touched });
  });
}
