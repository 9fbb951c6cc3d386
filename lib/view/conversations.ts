// Which conversations a list shows and in what order, before any column sort the user picks.
import type { Conversation } from '../schemas';

export type TriState = 'any' | 'yes' | 'no';

export interface ConversationFilters {
  muted: TriState;
  pinned: TriState;
  /** Archived ones are hidden unless asked for. */
  archived: TriState;
  kind: 'any' | 'contact' | 'group';
  text: string;
}

export const DEFAULT_FILTERS: ConversationFilters = { muted: 'any', pinned: 'any', archived: 'no', kind: 'any', text: '' };

const matches = (state: TriState, value: boolean) => state === 'any' || (state === 'yes') === value;

export function conversationTitle(c: Pick<Conversation, 'contact_id' | 'group_id'>): string {
  return c.contact_id ?? c.group_id ?? '';
}

export function filterConversations<C extends Conversation>(rows: readonly C[], f: ConversationFilters): C[] {
  const text = f.text.trim().toLowerCase();
  return rows.filter(
    (c) =>
      matches(f.muted, c.is_muted) &&
      matches(f.pinned, c.is_pinned) &&
      matches(f.archived, c.archived_at !== null) &&
      (f.kind === 'any' || (f.kind === 'contact' ? c.contact_id !== null : c.group_id !== null)) &&
      (text === '' || conversationTitle(c).toLowerCase().includes(text)),
  );
}

/** Pinned first, then most recently active (or created), newest first. */
export function defaultOrder<C extends Conversation>(rows: readonly C[]): C[] {
  const activity = (c: Conversation) => c.last_active_at ?? c.created_at;
  return [...rows].sort(
    (a, b) => Number(b.is_pinned) - Number(a.is_pinned) || activity(b) - activity(a) || b.created_at - a.created_at,
  );
}
