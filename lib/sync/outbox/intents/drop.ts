// Dropping queued operations together with everything that can only run after them — what a
// discard, a cancelled upload, and a delete of something never created all need.
import type { WriteContext } from './context';
import { creates, mentionedIds, prerequisites, type OutboxOp } from '../operations';
import { dropChunks } from '../chunks';

/**
 * Removes operations and everything that can only run after them (their creations' users), with
 * the queued bytes of any upload among them. `keep`: the initial operations' rows stay (their
 * queued bytes go): a cancelled upload that still has to be ended on the server. Returns the ids
 * the removed operations mentioned (the rows to rebuild).
 */
export async function dropWithDependents(ctx: WriteContext, initial: OutboxOp[], keep = false): Promise<Set<string>> {
  const { db } = ctx;
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
    if (op.body.kind === 'file.upload') await dropChunks(db, [op.id]);
  }
  if (keep) initial.forEach((op) => doomed.delete(op.id));
  await db.outbox.where('id').anyOf([...doomed]).delete();
  return touched;
}
