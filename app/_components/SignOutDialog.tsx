'use client';
// "Sign out?": what signing out removes, and the changes not yet sent that it would discard. Its
// own chunk, loaded when first asked (and prefetched once the first screen is idle, as the other
// screens are): the first screen never shows it.
import { groupedNumber } from '@/lib/view/format';
import { Dialog } from './Dialog';

export function SignOutDialog({ unsynced, signingOut, onCancel, onConfirm }: { unsynced: number; signingOut: boolean; onCancel(): void; onConfirm(): void }) {
  return (
    <Dialog title="Sign out?" open onClose={onCancel}>
      {unsynced > 0 ? (
        <p>
          <strong>
            {groupedNumber(unsynced)} change{unsynced === 1 ? ' has' : 's have'} not reached the server yet
          </strong>{' '}
          and will be lost. Signing out removes this device’s copy of your data and the documents you opened.
        </p>
      ) : (
        <p>Everything is synced. Signing out removes this device’s copy of your data and the documents you opened; it stays on the server.</p>
      )}
      <div className="actions">
        <button type="button" onClick={onCancel} disabled={signingOut}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm} disabled={signingOut}>
          {signingOut ? 'Removing…' : `Sign out${unsynced ? ' and discard changes' : ''}`}
        </button>
      </div>
    </Dialog>
  );
}
