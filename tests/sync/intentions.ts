// The property test's ledger: every intention the user expressed through the sync client, the
// operation that carries it, and — at the end, once the network is healthy — its fate. Each
// intention must have exactly one legitimate fate:
//   applied      it is on the server exactly once, with its fields;
//   superseded   a later intention of the same user changed the same thing again;
//   deleted      a later intention of the user deleted it, or another device deleted it;
//   failed       the server refused it and the app showed it under "failed" (readSyncStatus);
//   dropped      the app's bookkeeping (a report of opening) went quietly: its conversation is
//                gone, or the server refused it;
//   refused      the client refused it at once (its target was no longer on screen).
// Anything else — a create, an upload or an edit that silently vanished — fails the test.
import { expect } from 'vitest';
import type { Conversation, FileObject } from '../../lib/schemas';
import type { ParleyDb } from '../../lib/sync/mirror/db';

export type Field = 'is_pinned' | 'archived_at' | 'last_opened_at' | 'pinned_message_id';

export type Intention = { index: number; carrier: string | null } & (
  | { kind: 'create'; handle: string; contact: string }
  /** `value` of pinned_message_id is a message handle (resolved at the end). */
  | { kind: 'update'; handle: string; field: Field; value: unknown }
  | { kind: 'deleteConv'; handle: string }
  | { kind: 'upload'; n: number; handle: string; conversationHandle: string; messageHandle: string | null; name: string; size: number }
  | { kind: 'rename'; n: number; name: string }
  | { kind: 'deleteFile'; n: number }
  /** The user's Retry of a failed operation: it must be sent again, with this key. */
  | { kind: 'retry'; opId: string; key: string; entityHandle: string; conversationHandle: string | null }
  | { kind: 'refused'; what: string }
);

/**
 * `dropped`: the app's bookkeeping (an open report, lib/sync/mirror/bookkeeping.ts) given up
 * quietly, never shown as failed: its conversation is not on the server (its create failed, or it
 * was deleted elsewhere), or the server refused it.
 */
export type Fate = 'applied' | 'superseded' | 'deleted' | 'failed' | 'refused' | 'dropped';

type Distribute<T> = T extends unknown ? Omit<T, 'index' | 'carrier'> & { carrier?: string | null } : never;

export class Ledger {
  readonly intentions: Intention[] = [];
  /** Server ids another device deleted. */
  readonly remoteDeleted = new Set<string>();

  record(intention: Distribute<Intention>): Intention {
    const entry = { carrier: null, ...intention, index: this.intentions.length } as Intention;
    this.intentions.push(entry);
    return entry;
  }

  upload(n: number) {
    return this.intentions.find((i): i is Extract<Intention, { kind: 'upload' }> => i.kind === 'upload' && i.n === n);
  }

  uploads() {
    return this.intentions.filter((i): i is Extract<Intention, { kind: 'upload' }> => i.kind === 'upload');
  }
}

/** The queued create of a conversation (a create that returned a conversation already shown has none of its own). */
export async function createOpOf(db: ParleyDb, handle: string): Promise<string | null> {
  const op = await db.outbox.where('entityId').equals(handle).filter((o) => o.body.kind === 'conversation.create').first();
  return op?.id ?? null;
}

/** The operation that now carries a change to `entityId` (the last queued for it), if any. */
export async function lastOpOf(db: ParleyDb, entityId: string, kinds: string[]): Promise<string | null> {
  const last = (await db.outbox.where('entityId').equals(entityId).sortBy('seq')).at(-1);
  return last && kinds.includes(last.body.kind) ? last.id : null;
}

export interface FinalState {
  conversations: Map<string, Conversation>;
  files: Array<{ file: FileObject; conversationId: string }>;
  /** Operation ids the app listed under "failed" (failed or blocked) once the network healed. */
  shownFailed: Set<string>;
  /** Idempotency-Keys of every write the device sent. */
  sentKeys: Set<string>;
  /** The writes the server refused (a 4xx other than "gone"), as `<method> <path> <body>`. */
  refusedWrites: Set<string>;
  resolve: (handle: string) => Promise<string>;
}

/** Checks every intention's fate; returns how many ended in each (per kind). */
export async function checkFates(ledger: Ledger, state: FinalState): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const count = (kind: string, fate: Fate) => counts.set(`${kind}:${fate}`, (counts.get(`${kind}:${fate}`) ?? 0) + 1);
  const { intentions, remoteDeleted } = ledger;
  const resolved = new Map<string, string>();
  const resolve = async (handle: string) => {
    if (!resolved.has(handle)) resolved.set(handle, await state.resolve(handle));
    return resolved.get(handle)!;
  };
  const failed = (i: Intention) => i.carrier !== null && state.shownFailed.has(i.carrier);

  // Deletions the user asked for, by the id they resolve to, with their place in the order.
  const deletions: Array<{ index: number; id: string }> = [];
  for (const i of intentions) {
    if (i.kind === 'deleteConv') deletions.push({ index: i.index, id: await resolve(i.handle) });
    if (i.kind === 'deleteFile') deletions.push({ index: i.index, id: await resolve(ledger.upload(i.n)!.handle) });
  }
  const deletedLater = (i: Intention, ids: string[]) =>
    ids.some((id) => remoteDeleted.has(id) || deletions.some((d) => d.index > i.index && d.id === id));
  const copiesOf = (n: number) => state.files.filter(({ file }) => new RegExp(`^u${n}(r\\d+)?\\.txt$`).test(file.filename));

  // The last intention per (conversation, field) decides the field; earlier ones are superseded.
  const lastUpdate = new Map<string, number>();
  for (const i of intentions) if (i.kind === 'update') lastUpdate.set(`${await resolve(i.handle)} ${i.field}`, i.index);
  // Likewise the last name given to each upload (the upload's own or a rename).
  const lastName = new Map<number, Intention>();
  for (const i of intentions) if (i.kind === 'upload' || i.kind === 'rename') lastName.set(i.n, i);

  for (const i of intentions) {
    const where = JSON.stringify(i);
    switch (i.kind) {
      case 'create': {
        const id = await resolve(i.handle);
        const sameContact = [...state.conversations.values()].filter((c) => c.contact_id === i.contact);
        expect(sameContact.length, `conversations with ${i.contact}`).toBeLessThanOrEqual(1);
        if (failed(i)) count(i.kind, 'failed');
        else if (deletedLater(i, [id])) count(i.kind, 'deleted');
        else {
          expect(state.conversations.get(id), `created conversation missing: ${where}`).toMatchObject({ contact_id: i.contact });
          count(i.kind, 'applied');
        }
        break;
      }
      case 'update': {
        const id = await resolve(i.handle);
        if (lastUpdate.get(`${id} ${i.field}`) !== i.index) count(i.kind, 'superseded');
        else if (failed(i)) count(i.kind, 'failed');
        else if (deletedLater(i, [id])) count(i.kind, 'deleted');
        else if (i.field === 'last_opened_at' && !state.conversations.has(id)) count(i.kind, 'dropped');
        // A report of opening that the server refused goes quietly (outbox/settle.ts): never shown.
        // Only this very report, refused as it was sent (a report alone, with this time).
        else if (
          i.field === 'last_opened_at' &&
          state.refusedWrites.has(`PUT /v1/conversations/${id} ${JSON.stringify({ last_opened_at: i.value })}`) &&
          state.conversations.get(id)?.last_opened_at !== i.value
        )
          count(i.kind, 'dropped');
        else {
          const expected = i.field === 'pinned_message_id' ? await resolve(i.value as string) : i.value;
          const conversation = state.conversations.get(id);
          expect(conversation, `updated conversation missing: ${where}`).toBeDefined();
          expect(conversation![i.field], `${i.field} of ${id}: ${where}`).toEqual(expected);
          count(i.field === 'pinned_message_id' ? 'pin' : i.kind, 'applied');
        }
        break;
      }
      case 'deleteConv': {
        if (failed(i)) count(i.kind, 'failed');
        else {
          expect(state.conversations.has(await resolve(i.handle)), `deleted conversation still there: ${where}`).toBe(false);
          count(i.kind, 'applied');
        }
        break;
      }
      case 'upload': {
        const fileId = await resolve(i.handle);
        const conversationId = await resolve(i.conversationHandle);
        const copies = copiesOf(i.n);
        expect(copies.length, `copies of upload ${i.n}`).toBeLessThanOrEqual(1);
        const kind = i.messageHandle ? 'attach' : 'upload';
        if (failed(i)) count(kind, 'failed');
        else if (deletedLater(i, [fileId, conversationId])) count(kind, 'deleted');
        else {
          expect(copies, `upload missing: ${where}`).toHaveLength(1);
          const [{ file, conversationId: inConversation }] = copies as [(typeof copies)[0]];
          expect(file.id).toBe(fileId);
          expect(inConversation).toBe(conversationId);
          expect(file.file_size).toBe(i.size * 7);
          if (i.messageHandle) expect(file.message_id, `attached to the wrong message: ${where}`).toBe(await resolve(i.messageHandle));
          const named = lastName.get(i.n)!;
          const names = intentions.filter((j) => (j.kind === 'upload' || j.kind === 'rename') && j.n === i.n).map((j) => (j as { name: string }).name);
          if (failed(named)) expect(names).toContain(file.filename);
          else expect(file.filename, `name of upload ${i.n}`).toBe((named as { name: string }).name);
          count(kind, 'applied');
        }
        break;
      }
      case 'rename': {
        // Its effect is checked with its upload (the last name wins); here only its own fate.
        count(i.kind, lastName.get(i.n) !== i ? 'superseded' : failed(i) ? 'failed' : 'applied');
        break;
      }
      case 'deleteFile': {
        if (failed(i)) count(i.kind, 'failed');
        else {
          expect(copiesOf(i.n), `deleted file still there: ${where}`).toHaveLength(0);
          count(i.kind, 'applied');
        }
        break;
      }
      case 'retry': {
        const ids = [await resolve(i.entityHandle), ...(i.conversationHandle ? [await resolve(i.conversationHandle)] : [])];
        if (state.sentKeys.has(i.key)) count(i.kind, failed(i) ? 'failed' : 'applied');
        else {
          // Not sent again: only if the user deleted what it was about before it could go.
          expect(deletedLater(i, ids), `a retried operation was never sent again: ${where}`).toBe(true);
          count(i.kind, 'deleted');
        }
        break;
      }
      case 'refused':
        count(i.kind, 'refused');
        break;
    }
  }
  return counts;
}
