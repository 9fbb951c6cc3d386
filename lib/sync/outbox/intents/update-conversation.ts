// The user changes a conversation (mute, archive, pin a message, …), or opens it.
import type { ConversationUpdateInput } from '../../../schemas';
import { SyncInputError } from '../../core/errors';
import { validData } from './validation';
import { getMeta } from '../../mirror/meta';
import { newOp, opsFor, rebuild, requireConversation, resolve, type WriteContext } from './context';
import { creates, isTempId, type ConversationPatch } from '../operations';
import { amended } from '../lifecycle';

export async function updateConversation(
  ctx: WriteContext,
  rawId: string,
  input: ConversationUpdateInput | Record<string, unknown>,
): Promise<void> {
  // The message of an upload still queued has a temp id, which the API's schema refuses: it
  // is checked below instead (the outbox must be going to create it), and the replay sends
  // the pin once the upload has made the real message (remapOp swaps the id).
  const raw = (input ?? {}) as Record<string, unknown>;
  const localPin = typeof raw.pinned_message_id === 'string' && isTempId(raw.pinned_message_id) ? raw.pinned_message_id : null;
  const patch = await normalisePatch(ctx, localPin ? { ...raw, pinned_message_id: undefined } : input);
  if (localPin) patch.pinned_message_id = localPin;
  if (Object.keys(patch).length === 0) return;
  const { db } = ctx;
  await ctx.write(async () => {
    const id = await resolve(ctx, rawId);
    await requireConversation(ctx, id);
    if (localPin) {
      patch.pinned_message_id = await resolve(ctx, localPin);
      if (isTempId(patch.pinned_message_id) && !(await willCreate(ctx, patch.pinned_message_id))) {
        throw new SyncInputError('this message is no longer going to be sent', 'pinned_message_id');
      }
    }
    const last = (await opsFor(ctx, id)).at(-1);
    const pinsLocalMessage = patch.pinned_message_id ? isTempId(patch.pinned_message_id) : false;
    // Consecutive unsent updates of one conversation become one request: same end state. Not
    // across a change queued since to a conversation still to be created: the server may answer
    // its create with this very conversation (409 conversation_exists, adopted), and that change
    // must not be overtaken by this one (operations.ts `readyBatch` keeps the order).
    const merged =
      last && last.body.kind === 'conversation.update' && !pinsLocalMessage && !(await uncreatedConversationChangedSince(ctx, last.seq))
        ? amended(last, { kind: 'conversation.update', patch: { ...last.body.patch, ...patch } })
        : null;
    if (last && merged) {
      await db.outbox.update(last.seq, merged);
    } else {
      await db.outbox.add(newOp(ctx, 'conversation', id, { kind: 'conversation.update', patch }));
    }
    await rebuild(ctx, { conversations: [id] });
  });
}

/** Reports that the user opened the conversation (the last_opened_at extension). */
export async function markOpened(ctx: WriteContext, id: string, atSeconds?: number): Promise<void> {
  if ((await getMeta(ctx.db, 'serverLacksLastOpened')) === true) return; // the server cannot store it
  await updateConversation(ctx, id, { last_opened_at: atSeconds ?? Math.floor(ctx.now() / 1000) });
}

async function normalisePatch(ctx: WriteContext, input: unknown): Promise<ConversationPatch> {
  const data = validData(await ctx.validate.conversationUpdate(input), ({ message, path }) => new SyncInputError(message, path));
  const patch: ConversationPatch = {};
  for (const [key, value] of Object.entries(data)) {
    if (value !== undefined) (patch as Record<string, unknown>)[key] = value;
  }
  return patch;
}

/** Whether an operation on a conversation not created yet (its create, or a change to it) was queued after `seq`. */
async function uncreatedConversationChangedSince(ctx: WriteContext, seq: number): Promise<boolean> {
  const later = await ctx.db.outbox.where('seq').above(seq).toArray();
  return later.some((op) => op.entity === 'conversation' && isTempId(op.entityId));
}

/** Whether a queued operation brings this temp id into existence. */
async function willCreate(ctx: WriteContext, tempId: string): Promise<boolean> {
  let found = false;
  await ctx.db.outbox.each((op) => {
    if (creates(op).includes(tempId)) found = true;
  });
  return found;
}
