'use client';
// The sync state, compact: offline / syncing / all synced, the pending count, and failed
// operations with the server's message and Retry / Discard.
import { useLiveQuery } from 'dexie-react-hooks';
import { useState } from 'react';
import { readSyncStatus, type FailedOperation } from '@/lib/sync/status';
import { useAction } from './ActionAlert';
import { Dialog } from './Dialog';
import { SignIn } from './SignIn';
import { useSession } from './session-context';
import { UploadProgressSummary } from './UploadProgress';

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
  const { connection, signInAgain, signOut } = useSession();
  const status = useSyncStatus();
  const [showFailed, setShowFailed] = useState(false);
  // Its place is kept before the first read, so the Sign out button does not jump when it arrives.
  if (!status) return <div className="status" />;
  const failed = status.failed.filter((f) => !f.blocked);
  // The browser cleared this device's copy with changes still queued: never "All synced" until
  // the user has read that (MirrorNotice).
  const lost = (status.mirrorCleared?.lostChanges ?? 0) > 0;
  // The watchdog (lib/sync/engine.ts): pending changes against a reachable server, not moving.
  const stalled = status.stalled && status.pendingCount > 0 && failed.length === 0 && status.online && !status.needsSignIn ? status.stalled : null;
  const label = status.needsSignIn
    ? 'Sign in again'
    : failed.length > 0
      ? 'Needs attention'
      : lost
      ? 'Changes lost'
      : !status.online
      ? 'Offline'
      : stalled
        ? 'Not syncing'
      : status.syncing
        ? 'Syncing…'
        : status.pendingCount > 0
          ? 'Waiting to sync'
          : 'All synced';
  const tone = status.needsSignIn || failed.length || lost || stalled ? 'bad' : !status.online || status.pendingCount ? 'warn' : 'ok';

  return (
    <div className="status" aria-live="polite">
      <span className={`pill ${tone}`} data-testid="sync-status">
        {label}
        {status.pendingCount > 0 && <span data-testid="pending-count"> · {status.pendingCount} pending</span>}
        <UploadProgressSummary />
      </span>
      {stalled && (
        <span className="stalled bad" data-testid="sync-stalled" role="status">
          Nothing sent for {Math.max(1, Math.round((Date.now() - stalled.since) / 60_000))} min
          {stalled.error ? ` — last error: ${stalled.error}` : ''}
        </span>
      )}
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
          <SignIn again onSubmit={signInAgain} onSignOut={signOut} />
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
  const { run, alert } = useAction({ inline: true }); // inside a modal dialog: the page behind it is inert
  if (failed.length === 0) return <p>Nothing failed.</p>;
  return (
    <>
    {alert}
    <ul className="failed" aria-label="Failed changes">
      {failed.map((f) => (
        <li key={f.opId}>
          <strong>{KIND_LABEL[f.kind]}</strong>
          <span className="message">{f.blocked ? 'Waiting on a failed change above.' : (f.error?.message ?? 'Refused by the server.')}</span>
          {!f.blocked && (
            <span className="row-actions">
              <button type="button" onClick={() => void run('retry this change', () => connection.client.retryOperation(f.opId))}>
                Retry
              </button>
              <button type="button" onClick={() => void run('discard this change', () => connection.client.discardOperation(f.opId))}>
                Discard
              </button>
            </span>
          )}
        </li>
      ))}
    </ul>
    </>
  );
}
