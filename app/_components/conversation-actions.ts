'use client';
// What the actions on a conversation do, shared by its page, its list row, the row's swipe and the
// row's menu: one client call each (connection.client), its failure shown (useAction), and from a
// list row an Undo in the snackbar.
import { createContext, useContext } from 'react';
import type { ConversationView } from '@/lib/sync/page';
import { conversationTitle } from '@/lib/view/conversations';
import { useAction } from './ActionAlert';
import type { IconName } from './Icon';
import { useSession } from './session-context';
import { showUndo } from './Snackbar';

export type Toggle = 'pin' | 'mute' | 'archive';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * A toggle as it applies to `c` now: its button's word and icon, whether it is on, what is said once
 * done, the change and its inverse (the values before, which Undo sends).
 */
/** An icon's name, checked and kept as `IconName` in the toggle's (inferred) type. */
const iconNamed = (name: IconName): IconName => name;

export function toggleOf(c: ConversationView, what: Toggle) {
  if (what === 'pin') return { label: c.is_pinned ? 'Unpin' : 'Pin', icon: iconNamed('pin'), on: c.is_pinned, done: c.is_pinned ? 'Unpinned' : 'Pinned', patch: { is_pinned: !c.is_pinned }, undo: { is_pinned: c.is_pinned } };
  if (what === 'mute') return { label: c.is_muted ? 'Unmute' : 'Mute', icon: iconNamed(c.is_muted ? 'mute' : 'bell'), on: c.is_muted, done: c.is_muted ? 'Unmuted' : 'Muted', patch: { is_muted: !c.is_muted }, undo: { is_muted: c.is_muted } };
  const archived = c.archived_at !== null;
  return { label: archived ? 'Restore' : 'Archive', icon: iconNamed(archived ? 'restore' : 'archive'), on: undefined, done: archived ? 'Restored' : 'Archived', patch: { archived_at: archived ? null : nowSeconds() }, undo: { archived_at: c.archived_at } };
}
export const TOGGLES: Toggle[] = ['pin', 'mute', 'archive'];

/**
 * `act(toggle)` and `remove()` for one conversation. Every action is awaited: a refusal (storage
 * full, a conversation gone meanwhile…) is shown by `alert`, which the caller renders. With
 * `undoable`, a done toggle offers its inverse in the snackbar.
 */
export function useConversationActions(conversation: ConversationView, { undoable = false, onDeleted }: { undoable?: boolean; onDeleted?(): void } = {}) {
  const { client } = useSession().connection;
  const { run, alert } = useAction();
  const { id } = conversation;
  const title = conversationTitle(conversation);
  const act = async (what: Toggle) => {
    const { label, done, patch, undo } = toggleOf(conversation, what);
    const verb = label.toLowerCase();
    // The change is in the outbox once this resolves, so closing the app keeps it; Undo is one more
    // queued change (the values before), never a held-back original.
    if ((await run(`${verb} “${title}”`, () => client.updateConversation(id, patch))) && undoable) {
      showUndo({ message: `${done} ‘${title}’`, what: `undo the ${verb} of “${title}”`, undo: () => client.updateConversation(id, undo) });
    }
  };
  const remove = () => void run(`delete “${title}”`, () => client.deleteConversation(id)).then((deleted) => deleted && onDeleted?.());
  return { title, act, remove, alert };
}

/** Opens the list's one row menu (RowMenu) for a conversation; a no-op outside the list. */
export const OpenRowMenu = createContext<(conversation: ConversationView) => void>(() => undefined);
export const useOpenRowMenu = () => useContext(OpenRowMenu);
