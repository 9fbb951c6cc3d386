// A change the server refused, in plain words (issues 21, 32): what it was ("Rename a.png →
// b.png", "Pin conversation with amelia-hughes"), why it failed, whether trying again can help,
// and whether the device still has the copy of a file the server lost. The words are pure; the
// failed changes dialog renders them.
import type { Conversation } from '../schemas';
import { knownConversation, knownFile, lostOnServer, type FailedOperation, type FileView, type ParleyDb } from '../sync/page';

/** What a conversation update sets (the outbox's patch, as the dialog reads it). */
export type ConversationChange = Partial<Pick<Conversation, 'pinned_message_id' | 'is_pinned' | 'is_muted' | 'archived_at' | 'last_opened_at'>>;

/** What a failed change is about, as the user knows it. */
export interface FailureNames {
  /**
   * The file's name (as the server has it, before a rename), or the conversation's contact or
   * group id; null if this device no longer knows.
   */
  name: string | null;
  /** A rename's new name. */
  newName?: string;
  /** An upload's conversation, by its contact or group id (null if unknown). */
  conversation?: string | null;
  /** A conversation update's fields. */
  change?: ConversationChange;
  /** A file the server lost that this device still holds a copy of: "Upload my copy again" can bring it back. */
  copyOnDevice?: boolean;
}
export type NamedFailure = FailedOperation & FailureNames;

/**
 * The names of failed changes, by operation id: read by the dialog when it opens (not by the
 * status bar's query on every change). The server's word first, as the visible row may show the
 * change itself (a rename's new name). `hasCopy`: whether the device holds a file's bytes, asked
 * only of files the server lost (after the read: it may read Cache Storage, outside IndexedDB).
 */
export async function readFailureNames(
  db: ParleyDb,
  opIds: readonly string[],
  hasCopy: (file: FileView) => Promise<boolean> = async () => false,
): Promise<Record<string, FailureNames>> {
  const lost: Array<[opId: string, file: FileView]> = [];
  const names = await db.transaction('r', [db.outbox, db.files, db.serverFiles, db.conversations, db.serverConversations], async () => {
    const fileName = async (id: string) => (await knownFile(db, id))?.filename ?? null;
    const conversationName = async (id: string) => {
      const c = await knownConversation(db, id);
      return c ? (c.contact_id ?? c.group_id) : null;
    };
    const found: Record<string, FailureNames> = {};
    for (const opId of opIds) {
      const op = await db.outbox.where('id').equals(opId).first();
      if (!op) continue;
      const { body } = op;
      if (op.state === 'failed' && lostOnServer({ kind: body.kind, error: op.error })) {
        const shown = await db.files.get(op.entityId);
        if (shown) lost.push([opId, shown]);
      }
      found[opId] =
        body.kind === 'file.upload'
          ? { name: body.filename, conversation: await conversationName(body.conversationId) }
          : body.kind === 'conversation.create'
            ? { name: body.contact_id ?? body.group_id ?? null }
            : body.kind === 'conversation.update'
              ? { name: await conversationName(op.entityId), change: body.patch }
              : op.entity === 'file'
                ? { name: await fileName(op.entityId), ...(body.kind === 'file.rename' ? { newName: body.filename } : {}) }
                : { name: await conversationName(op.entityId) };
    }
    return found;
  });
  for (const [opId, file] of lost) {
    const named = names[opId];
    if (named) named.copyOnDevice = await hasCopy(file).catch(() => false);
  }
  return names;
}

export interface FailureWords {
  /** What the change was, as the user made it ("Rename a.png → b.png"). */
  title: string;
  /** Why it failed, as a sentence. */
  text: string;
  /** True when sending it again cannot succeed: Retry is not offered, Discard is the main action. */
  final: boolean;
  /** The server lost the file and this device has a copy: "Upload my copy again" comes first. */
  reupload: boolean;
}

const quoted = (name: string | null | undefined, otherwise: string) => (name ? `‘${name}’` : otherwise);
const withWhom = (name: string | null | undefined) => (name ? `conversation with ${name}` : 'a conversation');

/** A conversation update in words: "Pin and mute conversation with x", "Pin a message in conversation with x". */
export function describeChange(change: ConversationChange, name: string | null | undefined): string {
  const verbs: string[] = [];
  if (change.is_pinned !== undefined) verbs.push(change.is_pinned ? 'pin' : 'unpin');
  if (change.is_muted !== undefined) verbs.push(change.is_muted ? 'mute' : 'unmute');
  if (change.archived_at !== undefined) verbs.push(change.archived_at === null ? 'restore' : 'archive');
  const message = change.pinned_message_id === undefined ? null : change.pinned_message_id ? 'pin a message in' : 'unpin the message of';
  const who = withWhom(name);
  const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  if (verbs.length > 0) {
    const joined = verbs.length === 1 ? verbs[0] : `${verbs.slice(0, -1).join(', ')} and ${verbs.at(-1)}`;
    return sentence(`${joined} ${who}${message ? ` and ${message === 'pin a message in' ? 'pin a message in it' : 'unpin its message'}` : ''}`);
  }
  if (message) return sentence(`${message} ${who}`);
  // Only bookkeeping (that the user opened it): it never fails as a change now (it is dropped on
  // refusal), but one stored by an earlier version may have.
  if (change.last_opened_at !== undefined) return `Note that you opened ${who}`;
  return sentence(`change ${who}`);
}

/** What the change was, named. */
export function titleOf(f: Pick<NamedFailure, 'kind'> & Partial<FailureNames>): string {
  switch (f.kind) {
    case 'conversation.create':
      return f.name ? `New conversation with ${f.name}` : 'New conversation';
    case 'conversation.update':
      return describeChange(f.change ?? {}, f.name);
    case 'conversation.delete':
      return `Delete ${withWhom(f.name)}`;
    case 'file.upload':
      return `Upload ${f.name ?? 'a file'}${f.conversation ? ` to ${withWhom(f.conversation)}` : ''}`;
    case 'file.rename':
      return `Rename ${f.name ?? 'a file'}${f.newName ? ` → ${f.newName}` : ''}`;
    case 'file.delete':
      return `Delete ${f.name ?? 'a file'}`;
  }
}

export function describeFailure(f: FailedOperation & Partial<FailureNames>): FailureWords {
  const title = titleOf(f);
  if (f.blocked) return { title, text: `Waiting on a failed change above${f.name ? ` (${quoted(f.name, '')})` : ''}.`, final: false, reupload: false };
  const status = f.error?.status ?? 0;
  const file = quoted(f.name, 'The file');
  const conversation = quoted(f.name, 'the conversation');
  // Gone on the server: what it was about no longer exists there, so no retry can apply it.
  if (status === 404 || status === 410) {
    const gone = ' was deleted on another device — ';
    switch (f.kind) {
      case 'file.rename':
      case 'file.delete': {
        const what = f.kind === 'file.rename' ? `your rename${f.newName ? ` to ‘${f.newName}’` : ''} cannot be applied.` : 'there is nothing left to delete.';
        const copy = lostOnServer(f) && f.copyOnDevice === true;
        return { title, text: `${file}${gone}${what}${copy ? ' This device still has a copy: upload it again, or discard.' : ''}`, final: true, reupload: copy };
      }
      case 'file.upload':
        return { title, text: `The conversation${f.conversation ? ` with ‘${f.conversation}’` : ''}${gone}${file} cannot be uploaded.`, final: true, reupload: false };
      default:
        return { title, text: `The conversation${f.name ? ` with ${conversation}` : ''}${gone}your change cannot be applied.`, final: true, reupload: false };
    }
  }
  const why = (f.error?.message ?? 'Refused by the server').replace(/\.$/, '');
  const subject = f.kind.startsWith('file.') ? file : `The conversation${f.name ? ` with ${conversation}` : ''}`;
  if (status === 413) return { title, text: `${file} is too large for the server.`, final: true, reupload: false };
  // Another refusal of the request itself (4xx, not a timing or rate one): the same request would
  // be refused again, so Retry is not offered (the user can make the change anew).
  const refused = status >= 400 && status < 500 && ![401, 408, 409, 423, 425, 429].includes(status);
  return { title, text: `${subject}: ${why}.`, final: refused, reupload: false };
}
