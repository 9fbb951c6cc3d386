'use client';
// The row menu's sheet (RowMenu): titled with the conversation's name, pin, mute, archive/restore,
// "Delete…" (which asks first) and Cancel; a done toggle offers its Undo like a swipe's.
import type { ConversationView } from '@/lib/sync/page';
import { conversationTitle } from '@/lib/view/conversations';
import { TOGGLES, toggleOf, useConversationActions } from './conversation-actions';
import { DeleteDialog } from './ConversationActions';
import { Dialog } from './Dialog';

export type Step = 'menu' | 'delete' | null;

export function RowMenuSheet({ conversation, step, onStep }: { conversation: ConversationView; step: Step; onStep(step: Step): void }) {
  const { act, remove, alert } = useConversationActions(conversation, { undoable: true });
  // A dialog's close event also comes when the next step's dialog replaces it: only its own step ends.
  const closed = (which: Step) => () => step === which && onStep(null);
  return (
    <>
      <Dialog title={conversationTitle(conversation)} open={step === 'menu'} onClose={closed('menu')} className="sheet">
        <div className="sheet-actions">
          {TOGGLES.map((what) => (
            <button
              key={what}
              type="button"
              onClick={() => {
                onStep(null);
                void act(what);
              }}
            >
              {toggleOf(conversation, what).label}
            </button>
          ))}
          <button type="button" className="delete" onClick={() => onStep('delete')}>
            Delete…
          </button>
          <button type="button" onClick={() => onStep(null)}>
            Cancel
          </button>
        </div>
      </Dialog>
      <DeleteDialog conversation={conversation} open={step === 'delete'} onClose={closed('delete')} onArchive={() => void act('archive')} onDelete={remove} />
      {alert}
    </>
  );
}
