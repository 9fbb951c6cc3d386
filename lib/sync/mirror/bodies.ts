// What an operation asks the server to do: its body, as stored in the outbox. Types and one pure
// helper, imported by outbox-row.ts (the stored operation), rebase.ts (which projects them) and
// outbox/operations.ts (the rules over them, which re-exports them for the outbox).

/** Normalised conversation fields an update sets (zod-validated before queueing). */
export interface ConversationPatch {
  pinned_message_id?: string | null;
  is_pinned?: boolean;
  is_muted?: boolean;
  archived_at?: number | null;
  last_opened_at?: number;
}

export interface UploadBody {
  kind: 'file.upload';
  /** The conversation the file goes into (temp or real); always known, also for message uploads. */
  conversationId: string;
  /** Attach to this existing message (temp or real); null = the server creates a new message. */
  messageId: string | null;
  /** The temp id of the message the server will create when messageId is null. */
  tempMessageId: string | null;
  filename: string;
  fileType: string;
  size: number;
  chunkCount: number;
}

/**
 * Whom a conversation is with: a contact or a group, never both. (Operations stored by earlier
 * versions carry the other one as null, hence the optional nulls.)
 */
export type Party = { contact_id: string; group_id?: null } | { group_id: string; contact_id?: null };

/** The party as the API's create input: only the id that is set. */
export function partyOf(party: Party): { contact_id: string } | { group_id: string } {
  return party.contact_id != null ? { contact_id: party.contact_id } : { group_id: party.group_id };
}

export type OpBody =
  | ({ kind: 'conversation.create' } & Party)
  | { kind: 'conversation.update'; patch: ConversationPatch }
  | { kind: 'conversation.delete' }
  | UploadBody
  | { kind: 'file.rename'; filename: string }
  | { kind: 'file.delete' };

export type OpKind = OpBody['kind'];
