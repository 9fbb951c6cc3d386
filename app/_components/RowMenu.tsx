'use client';
// The list's one row menu (opened by a row's "More actions" or a long press on it). One for the
// list, not one per row: rows are virtualised and cells clip their overflow, and a row may leave
// the list while its menu is open. The sheet itself is not part of the first screen: it is fetched
// once that is idle (ParleyApp's prefetch) or on the first open, and opens once it is here.
import { useCallback, useState, type ReactNode } from 'react';
import type { ConversationView } from '@/lib/sync/page';
import { OpenRowMenu } from './conversation-actions';
import type { RowMenuSheet, Step } from './RowMenuSheet';

let Sheet: typeof RowMenuSheet | undefined;
export const loadRowMenuSheet = () => import('./RowMenuSheet').then((m) => (Sheet = m.RowMenuSheet));

export function RowMenu({ rows, children }: { rows: ConversationView[]; children: ReactNode }) {
  const [target, setTarget] = useState<ConversationView | null>(null);
  const [step, setStep] = useState<Step>(null);
  const open = useCallback(
    (conversation: ConversationView) =>
      void loadRowMenuSheet().then(() => {
        setTarget(conversation);
        setStep('menu');
      }),
    [],
  );
  // The row as it is now while it is loaded: a sync may change it while the menu is open.
  const conversation = target && (rows.find((r) => r.id === target.id) ?? target);
  return (
    <OpenRowMenu.Provider value={open}>
      {children}
      {/* Stays mounted once closed, so that a refused action is still shown (its alert). */}
      {conversation && Sheet && <Sheet key={conversation.id} conversation={conversation} step={step} onStep={setStep} />}
    </OpenRowMenu.Provider>
  );
}
