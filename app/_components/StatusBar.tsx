'use client';
// The sync state, compact: offline / syncing / all synced, the pending count, and failed
// operations in plain words with Retry / Discard (FailedChanges.tsx).
import { useLiveQuery } from 'dexie-react-hooks';
import { lazy, Suspense, useEffect, useState } from 'react';
import { readSyncStatus } from '@/lib/sync/status';
import { groupedNumber } from '@/lib/view/format';
import { Dialog } from './Dialog';
import { SignIn } from './SignIn';
import { useSession } from './session-context';
import { UploadProgressSummary } from './UploadProgress';

// The list loads when the dialog first opens (and once the first screen is idle: ParleyApp's
// prefetch, so it is there offline without a service worker); the first screen does without it.
export const loadFailedChanges = () => import('./FailedChanges');
const FailedList = lazy(() => loadFailedChanges().then((m) => ({ default: m.FailedList })));

export function useSyncStatus() {
  const { connection } = useSession();
  return useLiveQuery(() => readSyncStatus(connection.db), [connection.db]);
}

export function StatusBar() {
  const { connection, signInAgain, signOut } = useSession();
  const status = useSyncStatus();
  const [showFailed, setShowFailed] = useState(false);
  // Nothing left to show (all retried or discarded): the dialog closes.
  const anyFailed = (status?.failed.length ?? 0) > 0;
  useEffect(() => {
    if (!anyFailed) setShowFailed(false);
  }, [anyFailed]);
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
        {status.pendingCount > 0 && <span data-testid="pending-count"> · {groupedNumber(status.pendingCount)} pending</span>}
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
          {groupedNumber(failed.length)} failed
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
      <Dialog title="Changes the server refused" open={showFailed && anyFailed} onClose={() => setShowFailed(false)}>
        <Suspense fallback={null}>
          <FailedList failed={status.failed} />
        </Suspense>
        <div className="actions">
          <button type="button" onClick={() => setShowFailed(false)}>
            Close
          </button>
        </div>
      </Dialog>
    </div>
  );
}
