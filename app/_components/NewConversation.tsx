'use client';
import { lazy, Suspense, useEffect, useState } from 'react';
import { Dialog } from './Dialog';
import { Icon } from './Icon';

/** An id to start with, from elsewhere on the screen (the search's "Start a conversation with ‘…’"). */
export interface NewConversationRequest {
  id: string;
  group: boolean;
}

// The form loads when the dialog first opens (and once the first screen is idle: ParleyApp's prefetch).
export const loadNewConversationForm = () => import('./NewConversationForm');
const NewConversationForm = lazy(() => loadNewConversationForm().then((m) => ({ default: m.NewConversationForm })));

export function NewConversation({ request, onRequestTaken }: { request?: NewConversationRequest | null; onRequestTaken?(): void }) {
  // What the open dialog starts with; null = closed.
  const [open, setOpen] = useState<NewConversationRequest | null>(null);
  useEffect(() => {
    if (!request) return;
    setOpen(request);
    onRequestTaken?.();
  }, [request, onRequestTaken]);

  return (
    <>
      <button type="button" className="primary with-label" onClick={() => setOpen({ id: '', group: false })}>
        <Icon name="plus" />
        <span>New conversation</span>
      </button>
      <Dialog title="New conversation" open={open !== null} onClose={() => setOpen(null)}>
        <Suspense fallback={null}>{open && <NewConversationForm initial={open} onClose={() => setOpen(null)} />}</Suspense>
      </Dialog>
    </>
  );
}
