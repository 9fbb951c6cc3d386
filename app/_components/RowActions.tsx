'use client';
// A list row's buttons. Delete is never one tap away on a row (it is in the row's menu, confirmed);
// on a wide screen pin, mute and archive stay at hand beside "More actions", on a phone that is the
// row's one button (names get the room).
import type { ConversationView } from '@/lib/sync/page';
import { TOGGLES, toggleOf, useConversationActions, useOpenRowMenu } from './conversation-actions';
import { Icon } from './Icon';
import { useNarrow } from './useNarrow';

export function RowActions({ conversation }: { conversation: ConversationView }) {
  const narrow = useNarrow();
  const openMenu = useOpenRowMenu();
  const { title, act, alert } = useConversationActions(conversation, { undoable: true });
  return (
    <span className="row-actions">
      {!narrow &&
        TOGGLES.map((what) => {
          const { label, icon, on } = toggleOf(conversation, what);
          return (
            <button key={what} type="button" className="icon-button" aria-label={`${label} ${title}`} aria-pressed={on} title={label} onClick={() => void act(what)}>
              <Icon name={icon} />
            </button>
          );
        })}
      <button type="button" className="icon-button more" aria-label={`More actions for ${title}`} aria-haspopup="dialog" title="More actions" onClick={() => openMenu(conversation)}>
        <span aria-hidden="true">⋯</span>
      </button>
      {alert}
    </span>
  );
}
