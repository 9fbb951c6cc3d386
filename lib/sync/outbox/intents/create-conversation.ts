// The user starts a conversation with a contact or a group.
import type { ConversationCreateInput } from '../../../schemas';
import { SyncInputError } from '../../core/errors';
import { validData } from './validation';
import { newOp, opsFor, rebuild, type WriteContext } from './context';
import { newTempId } from '../operations';
import { serverConversationWord } from '../../mirror/server-word';

type Party = { contact_id: string } | { group_id: string };

/** Returns the new conversation's id (a temp id until the create is replayed). */
export async function createConversation(ctx: WriteContext, input: ConversationCreateInput): Promise<string> {
  const { contact_id, group_id } = validData(await ctx.validate.conversationCreate(input), ({ message, path }) => new SyncInputError(message, path));
  const party: Party | null =
    contact_id != null && group_id == null ? { contact_id } : group_id != null && contact_id == null ? { group_id } : null;
  if (!party) throw new SyncInputError('exactly one of contact_id and group_id is required');
  const { db } = ctx;
  return ctx.write(async () => {
    const after = await queuedDeletesOf(ctx, party);
    // One conversation per contact/group, as on the server: reuse the one we already show —
    // unless one with the same contact is still to be deleted: what we show may be that very
    // conversation under another id (a create whose answer was lost), so start a new one.
    const shown =
      'contact_id' in party
        ? await db.conversations.where('contact_id').equals(party.contact_id).toArray()
        : await db.conversations.where('group_id').equals(party.group_id).toArray();
    const [first] = shown;
    if (first && after.length === 0) return first.id;
    // Still, one this user started after those same deletes is the new one, not that copy: the
    // same again opens it rather than a second conversation with the same contact.
    for (const conversation of shown) if (await startedAfter(ctx, conversation.id, after)) return conversation.id;
    const id = newTempId();
    await db.outbox.add(newOp(ctx, 'conversation', id, { kind: 'conversation.create', ...party }, after));
    await rebuild(ctx, { conversations: [id] });
    return id;
  });
}

/** Whether `id` is a conversation still to be created, queued behind each of these deletes. */
async function startedAfter(ctx: WriteContext, id: string, deletes: readonly string[]): Promise<boolean> {
  const create = (await opsFor(ctx, id)).find((op) => op.body.kind === 'conversation.create');
  return create !== undefined && deletes.every((del) => create.after?.includes(del));
}

/** Conversations with this contact (or group) whose delete is queued: a new create goes after them. */
async function queuedDeletesOf(ctx: WriteContext, who: Party): Promise<string[]> {
  const { db } = ctx;
  const deletes = await db.outbox.filter((op) => op.body.kind === 'conversation.delete').toArray();
  const ids: string[] = [];
  for (const del of deletes) {
    const [known] = await serverConversationWord(db, [del.entityId]);
    const create = known ? undefined : (await opsFor(ctx, del.entityId)).find((op) => op.body.kind === 'conversation.create');
    const of = known ?? (create?.body.kind === 'conversation.create' ? create.body : null);
    if (!of) continue;
    const same = 'contact_id' in who ? of.contact_id === who.contact_id : of.group_id === who.group_id;
    if (same) ids.push(del.entityId);
  }
  return ids;
}
