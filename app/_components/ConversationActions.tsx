'use client';
// Pin, mute, archive/restore and delete for one conversation; used in list rows and on its page.
import { useState } from 'react';
import type { ConversationView } from '@/lib/sync';
import { conversationTitle } from '@/lib/view/conversations';
import { Dialog } from './Dialog';
import { Icon } from './Icon';
import { useSession } from './session-context';

const nowSeconds = () => Math.floor(Date.now() / 1000);

export function ConversationActions({ conversation, onDeleted, withLabels = false }: { conversation: ConversationView; onDeleted?(): void; withLabels?: boolean }) {
  const { connection } = useSession();
  const [confirming, setConfirming] = useState(false);
  const title = conversationTitle(conversation);
  const update = (patch: Record<string, unknown>) => void connection.client.updateConversation(conversation.id, patch);
  const archived = conversation.archived_at !== null;
  const button = (label: string, icon: Parameters<typeof Icon>[0]['name'], onClick: () => void, pressed?: boolean) => (
    <button type="button" className={withLabels ? 'with-label' : 'icon-button'} aria-label={withLabels ? undefined : `${label} ${title}`} aria-pressed={pressed} title={label} onClick={onClick}>
      <Icon name={icon} />
      {withLabels && <span>{label}</span>}
    </button>
  );

  return (
    <span className="row-actions">
      {button(conversation.is_pinned ? 'Unpin' : 'Pin', 'pin', () => update({ is_pinned: !conversation.is_pinned }), conversation.is_pinned)}
      {button(conversation.is_muted ? 'Unmute' : 'Mute', conversation.is_muted ? 'mute' : 'bell', () => update({ is_muted: !conversation.is_muted }), conversation.is_muted)}
      {button(archived ? 'Restore' : 'Archive', archived ? 'restore' : 'archive', () => update({ archived_at: archived ? null : nowSeconds() }))}
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
                update({ archived_at: nowSeconds() });
                setConfirming(false);
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
              void connection.client.deleteConversation(conversation.id).then(() => onDeleted?.());
            }}
          >
            Delete permanently
          </button>
        </div>
      </Dialog>
    </span>
  );
}
