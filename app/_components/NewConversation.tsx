'use client';
import { useEffect, useState } from 'react';
import type { NewConversationForm } from './NewConversationForm';
import { Dialog } from './Dialog';
import { Icon } from './Icon';

/** An id to start with, from elsewhere on the screen (the search's "Start a conversation with ‘…’"). */
export interface NewConversationRequest {
  id: string;
  group: boolean;
}

// The form is not part of the first screen: it is fetched once that is idle (ParleyApp's
// prefetch), or on the first click, and the dialog opens once it is here — with the form in it
// from the start, so the dialog focuses its first field as it opens.
let Form: typeof NewConversationForm | undefined;
export const loadNewConversationForm = () => import('./NewConversationForm').then((m) => (Form = m.NewConversationForm));

export function NewConversation({ request, onRequestTaken }: { request?: NewConversationRequest | null; onRequestTaken?(): void }) {
  // What the open dialog starts with; null = closed.
  const [open, setOpen] = useState<NewConversationRequest | null>(null);
  const show = (start: NewConversationRequest) => void loadNewConversationForm().then(() => setOpen(start));
  useEffect(() => {
    if (!request) return;
    show(request);
    onRequestTaken?.();
  }, [request, onRequestTaken]);

  return (
    <>
      <button type="button" className="primary with-label" onClick={() => show({ id: '', group: false })}>
        <Icon name="plus" />
        <span>New conversation</span>
      </button>
      <Dialog title="New conversation" open={open !== null} onClose={() => setOpen(null)}>
        {open && Form && <Form initial={open} onClose={() => setOpen(null)} />}
      </Dialog>
    </>
  );
}
