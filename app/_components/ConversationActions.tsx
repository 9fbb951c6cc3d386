'use client';
// Pin, mute, archive/restore and delete for one conversation; used in list rows and on its page.
import { useState } from 'react';
import type { ConversationView } from '@/lib/sync/page';
import { conversationTitle } from '@/lib/view/conversations';
import { useAction } from './ActionAlert';
import { Dialog } from './Dialog';
import { Icon } from './Icon';
import { useSession } from './session-context';

const nowSeconds = () => Math.floor(Date.now() / 1000);

export function ConversationActions({ conversation, onDeleted, withLabels = false }: { conversation: ConversationView; onDeleted?(): void; withLabels?: boolean }) {
  const { connection } = useSession();
  const [confirming, setConfirming] = useState(false);
  const title = conversationTitle(conversation);
  // Every action is awaited: a refusal (storage full, a conversation gone meanwhile…) is shown.
  const { run, alert } = useAction();
  const update = (what: string, patch: Record<string, unknown>) => run(`${what} “${title}”`, () => connection.client.updateConversation(conversation.id, patch));
  const archived = conversation.archived_at !== null;
  const button = (label: string, icon: Parameters<typeof Icon>[0]['name'], onClick: () => void, pressed?: boolean) => (
    <button type="button" className={withLabels ? 'with-label' : 'icon-button'} aria-label={withLabels ? undefined : `${label} ${title}`} aria-pressed={pressed} title={label} onClick={onClick}>
      <Icon name={icon} />
      {withLabels && <span>{label}</span>}
    </button>
  );

  return (
    <span className="row-actions">
      {button(conversation.is_pinned ? 'Unpin' : 'Pin', 'pin', () => void update(conversation.is_pinned ? 'unpin' : 'pin', { is_pinned: !conversation.is_pinned }), conversation.is_pinned)}
      {button(conversation.is_muted ? 'Unmute' : 'Mute', conversation.is_muted ? 'mute' : 'bell', () => void update(conversation.is_muted ? 'unmute' : 'mute', { is_muted: !conversation.is_muted }), conversation.is_muted)}
      {button(archived ? 'Restore' : 'Archive', archived ? 'restore' : 'archive', () => void update(archived ? 'restore' : 'archive', { archived_at: archived ? null : nowSeconds() }))}
      {button('Delete', 'trash', () => setConfirming(true))}
      <Dialog title={`Delete “${title}”?`} open={confirming} onClose={() => setConfirming(false)}>
        <p>
          Deleting is <strong>permanent</strong>: the conversation, its messages and all its files are removed from the server and cannot be
          recovered. To hide it and keep everything, archive it instead.
        </p>
        <div className="actions">
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
          {!archived && (
            <button
              type="button"
              onClick={() => {
                setConfirming(false);
                void update('archive', { archived_at: nowSeconds() });
              }}
            >
              Archive instead
            </button>
          )}
          <button
            type="button"
            className="danger"
            onClick={() => {
              setConfirming(false);
              void run(`delete “${title}”`, () => connection.client.deleteConversation(conversation.id)).then((done) => done && onDeleted?.());
            }}
          >
            Delete permanently
          </button>
        </div>
      </Dialog>
      {alert}
    </span>
  );
}
