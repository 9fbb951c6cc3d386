// A change the server refused, in plain words (issue 21): what it was, which thing it was about,
// why it failed, and whether trying again can help. Pure: the failed changes dialog renders it.
import type { FailedOperation, ParleyDb } from '../sync/page';

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
}
export type NamedFailure = FailedOperation & FailureNames;

/**
 * The names of failed changes, by operation id: read by the dialog when it opens (not by the
 * status bar's query on every change). The server's word first, as the visible row may show the
 * change itself (a rename's new name).
 */
export async function readFailureNames(db: ParleyDb, opIds: readonly string[]): Promise<Record<string, FailureNames>> {
  return db.transaction('r', [db.outbox, db.files, db.serverFiles, db.conversations, db.serverConversations], async () => {
    const fileName = async (id: string) => ((await db.serverFiles.get(id)) ?? (await db.files.get(id)))?.filename ?? null;
    const conversationName = async (id: string) => {
      const c = (await db.serverConversations.get(id)) ?? (await db.conversations.get(id));
      return c ? (c.contact_id ?? c.group_id) : null;
    };
    const names: Record<string, FailureNames> = {};
    for (const opId of opIds) {
      const op = await db.outbox.where('id').equals(opId).first();
      if (!op) continue;
      const { body } = op;
      names[opId] =
        body.kind === 'file.upload'
          ? { name: body.filename, conversation: await conversationName(body.conversationId) }
          : body.kind === 'conversation.create'
            ? { name: body.contact_id ?? body.group_id }
            : op.entity === 'file'
              ? { name: await fileName(op.entityId), ...(body.kind === 'file.rename' ? { newName: body.filename } : {}) }
              : { name: await conversationName(op.entityId) };
    }
    return names;
  });
}

const KIND_LABEL: Record<FailedOperation['kind'], string> = {
  'conversation.create': 'New conversation',
  'conversation.update': 'Change to a conversation',
  'conversation.delete': 'Deleting a conversation',
  'file.upload': 'Upload',
  'file.rename': 'Rename',
  'file.delete': 'Deleting a file',
};

export interface FailureWords {
  /** The kind of change ("Rename"). */
  title: string;
  /** The thing and the cause, as a sentence. */
  text: string;
  /** True when sending it again cannot succeed: Discard is the main action. */
  final: boolean;
}

const quoted = (name: string | null | undefined, otherwise: string) => (name ? `‘${name}’` : otherwise);

export function describeFailure(f: FailedOperation & Partial<FailureNames>): FailureWords {
  const title = KIND_LABEL[f.kind];
  if (f.blocked) return { title, text: `Waiting on a failed change above${f.name ? ` (${quoted(f.name, '')})` : ''}.`, final: false };
  const status = f.error?.status ?? 0;
  const file = quoted(f.name, 'The file');
  const conversation = quoted(f.name, 'the conversation');
  // Gone on the server: what it was about no longer exists there, so no retry can apply it.
  if (status === 404 || status === 410) {
    const gone = ' was deleted on another device — ';
    switch (f.kind) {
      case 'file.rename':
        return { title, text: `${file}${gone}your rename${f.newName ? ` to ‘${f.newName}’` : ''} cannot be applied.`, final: true };
      case 'file.upload':
        return { title, text: `The conversation${f.conversation ? ` with ‘${f.conversation}’` : ''}${gone}${file} cannot be uploaded.`, final: true };
      case 'file.delete':
        return { title, text: `${file}${gone}there is nothing left to delete.`, final: true };
      default:
        return { title, text: `The conversation${f.name ? ` with ${conversation}` : ''}${gone}your change cannot be applied.`, final: true };
    }
  }
  const why = (f.error?.message ?? 'Refused by the server').replace(/\.$/, '');
  const subject = f.kind.startsWith('file.') ? file : `The conversation${f.name ? ` with ${conversation}` : ''}`;
  if (status === 413) return { title, text: `${file} is too large for the server.`, final: true };
  // Another refusal of the request itself (4xx, not a timing or rate one): the same request would
  // be refused again, though the server's rules may since have changed.
  const refused = status >= 400 && status < 500 && ![401, 408, 409, 423, 425, 429].includes(status);
  return { title, text: `${subject}: ${why}.`, final: refused };
}
