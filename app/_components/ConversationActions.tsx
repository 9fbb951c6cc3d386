'use client';
// A conversation's actions on its page: pin, mute and archive/restore as a compact bar's buttons
// (ConversationToggles), and the permanent delete in the head's "More actions" sheet (ConversationMore),
// away from them and always confirmed (DeleteDialog, also the list's row menu's). Not on the first
// screen: the list's rows have RowActions.
import { useState } from 'react';
import type { ConversationView } from '@/lib/sync/page';
import { conversationTitle } from '@/lib/view/conversations';
import { humanTime } from '@/lib/view/format';
import { TOGGLES, toggleOf, type useConversationActions } from './conversation-actions';
import { Dialog } from './Dialog';
import { Icon } from './Icon';

type Actions = ReturnType<typeof useConversationActions>;

/** The bar's toggles; `actions` (useConversationActions) is shared with ConversationMore, whose caller renders its alert. */
export function ConversationToggles({ conversation, actions: { act } }: { conversation: ConversationView; actions: Actions }) {
  return (
    <>
      {TOGGLES.map((what) => {
        const { label, icon, on } = toggleOf(conversation, what);
        return (
          <button key={what} type="button" aria-pressed={on} title={label} onClick={() => void act(what)}>
            <Icon name={icon} />
            <span>{label}</span>
          </button>
        );
      })}
    </>
  );
}

type Step = 'menu' | 'delete' | null;

/** "More actions": the conversation's dates, and Delete… (which asks first). */
export function ConversationMore({ conversation, actions: { title, act, remove } }: { conversation: ConversationView; actions: Actions }) {
  const [step, setStep] = useState<Step>(null);
  // A dialog's close event also comes when the next step's dialog replaces it: only its own step ends.
  const closed = (which: Step) => () => step === which && setStep(null);
  return (
    <>
      <button type="button" className="icon-button more" aria-label="More actions" aria-haspopup="dialog" title="More actions" onClick={() => setStep('menu')}>
        <span aria-hidden="true">⋯</span>
      </button>
      <Dialog title={title} open={step === 'menu'} onClose={closed('menu')} className="sheet">
        <dl className="conversation-facts">
          <dt>Created</dt>
          <dd>{humanTime(conversation.created_at)}</dd>
          <dt>Last active</dt>
          <dd>{humanTime(conversation.last_active_at)}</dd>
          {conversation.archived_at !== null && (
            <>
              <dt>Archived</dt>
              <dd>{humanTime(conversation.archived_at)}</dd>
            </>
          )}
        </dl>
        <div className="sheet-actions">
          <button type="button" className="delete" onClick={() => setStep('delete')}>
            <Icon name="trash" />
            Delete…
          </button>
          <button type="button" onClick={() => setStep(null)}>
            Cancel
          </button>
        </div>
      </Dialog>
      <DeleteDialog conversation={conversation} open={step === 'delete'} onClose={closed('delete')} onArchive={() => void act('archive')} onDelete={remove} />
    </>
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
