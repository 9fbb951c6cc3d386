'use client';
// A conversation's actions on its page: pin, mute, archive/restore and delete as labelled buttons,
// delete always confirmed (DeleteDialog, also the list's row menu's). Not on the first screen: the
// list's rows have RowActions.
import { useState } from 'react';
import type { ConversationView } from '@/lib/sync/page';
import { conversationTitle } from '@/lib/view/conversations';
import { TOGGLES, toggleOf, useConversationActions } from './conversation-actions';
import { Dialog } from './Dialog';
import { Icon } from './Icon';

export function ConversationActions({ conversation, onDeleted }: { conversation: ConversationView; onDeleted?(): void }) {
  const [confirming, setConfirming] = useState(false);
  const { act, remove, alert } = useConversationActions(conversation, { onDeleted });
  return (
    <span className="row-actions">
      {TOGGLES.map((what) => {
        const { label, icon, on } = toggleOf(conversation, what);
        return (
          <button key={what} type="button" className="with-label" aria-pressed={on} title={label} onClick={() => void act(what)}>
            <Icon name={icon} />
            <span>{label}</span>
          </button>
        );
      })}
      <button type="button" className="with-label" title="Delete" onClick={() => setConfirming(true)}>
        <Icon name="trash" />
        <span>Delete</span>
      </button>
      <DeleteDialog conversation={conversation} open={confirming} onClose={() => setConfirming(false)} onArchive={() => void act('archive')} onDelete={remove} />
      {alert}
    </span>
  );
}

/** The permanent delete, always confirmed, with archiving offered instead. */
export function DeleteDialog({ conversation, open, onClose, onArchive, onDelete }: { conversation: ConversationView; open: boolean; onClose(): void; onArchive(): void; onDelete(): void }) {
  const then = (action: () => void) => () => {
    onClose();
    action();
  };
  return (
    <Dialog title={`Delete “${conversationTitle(conversation)}”?`} open={open} onClose={onClose}>
      <p>
        Deleting is <strong>permanent</strong>: the conversation, its messages and all its files are removed from the server and cannot be
        recovered. To hide it and keep everything, archive it instead.
      </p>
      <div className="actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        {conversation.archived_at === null && (
          <button type="button" onClick={then(onArchive)}>
            Archive instead
          </button>
        )}
        <button type="button" className="danger" onClick={then(onDelete)}>
          Delete permanently
        </button>
      </div>
    </Dialog>
  );
}
