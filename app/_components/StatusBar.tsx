'use client';
// The sync state, compact: offline / syncing / all synced, the pending count, and failed
// operations with the server's message and Retry / Discard.
import { useLiveQuery } from 'dexie-react-hooks';
import { useState } from 'react';
import { readSyncStatus, type FailedOperation } from '@/lib/sync';
import { Dialog } from './Dialog';
import { SignIn } from './SignIn';
import { useSession } from './session-context';

const KIND_LABEL: Record<FailedOperation['kind'], string> = {
  'conversation.create': 'New conversation',
  'conversation.update': 'Change to a conversation',
  'conversation.delete': 'Deleting a conversation',
  'file.upload': 'Upload',
  'file.rename': 'Rename',
  'file.delete': 'Deleting a file',
};

export function useSyncStatus() {
  const { connection } = useSession();
  return useLiveQuery(() => readSyncStatus(connection.db), [connection.db]);
}

export function StatusBar() {
  const { connection, signInAgain } = useSession();
  const status = useSyncStatus();
  const [showFailed, setShowFailed] = useState(false);
  if (!status) return null;
  const failed = status.failed.filter((f) => !f.blocked);
  const label = status.needsSignIn
    ? 'Sign in again'
    : failed.length > 0
      ? 'Needs attention'
      : !status.online
      ? 'Offline'
      : status.syncing
        ? 'Syncing…'
        : status.pendingCount > 0
          ? 'Waiting to sync'
          : 'All synced';
  const tone = status.needsSignIn || failed.length ? 'bad' : !status.online || status.pendingCount ? 'warn' : 'ok';

  return (
    <div className="status" aria-live="polite">
      <span className={`pill ${tone}`} data-testid="sync-status">
        {label}
        {status.pendingCount > 0 && <span data-testid="pending-count"> · {status.pendingCount} pending</span>}
      </span>
      {failed.length > 0 && (
        <button type="button" className="link bad" onClick={() => setShowFailed(true)}>
          {failed.length} failed
        </button>
      )}
      <button type="button" className="icon-button" aria-label="Sync now" title="Sync now" onClick={() => void connection.worker.syncNow()}>
        ↻
      </button>
      {status.needsSignIn && (
        <Dialog title="Sign in again" open onClose={() => {}}>
          <SignIn again onSignedIn={signInAgain} />
        </Dialog>
      )}
      <Dialog title="Changes the server refused" open={showFailed} onClose={() => setShowFailed(false)}>
        <FailedList failed={status.failed} />
        <div className="actions">
          <button type="button" onClick={() => setShowFailed(false)}>
            Close
          </button>
        </div>
      </Dialog>
    </div>
  );
}

export function FailedList({ failed }: { failed: FailedOperation[] }) {
  const { connection } = useSession();
  if (failed.length === 0) return <p>Nothing failed.</p>;
  return (
    <ul className="failed" aria-label="Failed changes">
      {failed.map((f) => (
        <li key={f.opId}>
          <strong>{KIND_LABEL[f.kind]}</strong>
          <span className="message">{f.blocked ? 'Waiting on a failed change above.' : (f.error?.message ?? 'Refused by the server.')}</span>
          {!f.blocked && (
            <span className="row-actions">
              <button type="button" onClick={() => void connection.client.retryOperation(f.opId)}>
                Retry
              </button>
              <button type="button" onClick={() => void connection.client.discardOperation(f.opId)}>
                Discard
              </button>
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}
