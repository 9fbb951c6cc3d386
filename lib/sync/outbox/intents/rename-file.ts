// The user renames a file.
import { SyncInputError } from '../../core/errors';
import { validData } from './validation';
import { newOp, opsFor, rebuild, requireFile, resolve, type WriteContext } from './context';
import { amended } from '../lifecycle';

export async function renameFile(ctx: WriteContext, rawId: string, filename: string): Promise<void> {
  validData(await ctx.validate.fileUpdate({ filename }), ({ message }) => new SyncInputError(`filename ${message}`, 'filename'));
  await ctx.write(async () => {
    const id = await resolve(ctx, rawId);
    await requireFile(ctx, id);
    const last = (await opsFor(ctx, id)).at(-1);
    // Not sent yet: send the final name only.
    const renamed = last && (last.body.kind === 'file.upload' || last.body.kind === 'file.rename') ? amended(last, { ...last.body, filename }) : null;
    if (last && renamed) {
      await ctx.db.outbox.update(last.seq, renamed);
    } else {
      await ctx.db.outbox.add(newOp(ctx, 'file', id, { kind: 'file.rename', filename }));
    }
    await rebuild(ctx, { files: [id] });
  });
}
