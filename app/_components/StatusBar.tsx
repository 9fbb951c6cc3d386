'use client';
// The sync state, compact: offline / syncing / all synced, the pending count, when it last synced,
// and failed operations in plain words with Retry / Discard (FailedChanges.tsx).
import { useLiveQuery } from 'dexie-react-hooks';
import { createContext, lazy, Suspense, useContext, useEffect, useState, type ReactNode } from 'react';
import { readSyncStatus, type ParleyDb, type SyncStatus } from '@/lib/sync/page';
import { statusLabel } from '@/lib/view/status-label';
import { groupedNumber, relativeTime } from '@/lib/view/format';
import { Dialog } from './Dialog';
import { useSession, useSyncNow } from './session-context';
import { UploadProgressSummary, useUploadProgress } from './UploadProgress';

// The list loads when the dialog first opens (and once the first screen is idle: ParleyApp's
// prefetch, so it is there offline without a service worker); the first screen does without it.
export const loadFailedChanges = () => import('./FailedChanges');
const FailedList = lazy(() => loadFailedChanges().then((m) => ({ default: m.FailedList })));
// Asked for only when the server refuses the token (prefetched with the others by ParleyApp).
const SignIn = lazy(() => import('./SignIn').then((m) => ({ default: m.SignIn })));

// One read of the status for the whole app: the pill, the first sync's progress line
// (SyncProgress) and the screens that show it render from the same value in the same commit, so
// they never say different things ("Getting your data…" beside "All synced").
const SyncStatusContext = createContext<SyncStatus | undefined>(undefined);

export function SyncStatusProvider({ children }: { children: ReactNode }) {
  const { connection } = useSession();
  // Read once the worker has started: until then the stored status is the last run's (it may say
  // "Syncing…" of a sync a closed tab left), and the first rows do not share the start with it.
  const [db, setDb] = useState<ParleyDb | null>(null);
  useEffect(() => {
    let live = true;
    connection.started.then(() => live && setDb(connection.db), () => {});
    return () => {
      live = false;
    };
  }, [connection]);
  const status = useLiveQuery(() => (db ? readSyncStatus(db) : undefined), [db]);
  return <SyncStatusContext.Provider value={status}>{children}</SyncStatusContext.Provider>;
}

export function useSyncStatus(): SyncStatus | undefined {
  return useContext(SyncStatusContext);
}

export function StatusBar() {
  const { signInAgain, signOut } = useSession();
  const syncNow = useSyncNow();
  const status = useSyncStatus();
  const uploads = useUploadProgress();
  const [showFailed, setShowFailed] = useState(false);
  // "Last synced 2 min ago" ages, a retry counts down, a transfer may stall: this bar renders
  // again with the clock (each second while the words depend on it), not the screen.
  const [, tick] = useState(0);
  const shown = status ? statusLabel(status, { now: Date.now(), uploads }) : null;
  const ticking = shown?.ticking === true;
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), ticking ? 1_000 : 20_000);
    return () => clearInterval(timer);
  }, [ticking]);
  // Nothing left to show (all retried or discarded): the dialog closes.
  const anyFailed = (status?.failed.length ?? 0) > 0;
  useEffect(() => {
    if (!anyFailed) setShowFailed(false);
  }, [anyFailed]);
  // Its place is kept before the first read, so the Sign out button does not jump when it arrives.
  if (!status || !shown) return <div className="status" />;
  const { label, detail, tone, failed, stalled } = shown;
  const pending = status.pendingCount > 0 ? ` · ${groupedNumber(status.pendingCount)} pending` : '';

  const face = (
    <>
      <span className={`pill ${tone}`} data-testid="sync-status">
        {/* A new node per label: a centred word replaced by a wider one is new text, not text that moved (a layout shift). */}
        <span key={label}>{label}</span>
        {pending && <span data-testid="pending-count">{pending}</span>}
        <UploadProgressSummary />
      </span>
      {detail ? (
        <span className={`last-synced ${tone}`} data-testid="sync-detail">
          {detail}
        </span>
      ) : (
        <span className="last-synced" data-testid="last-synced">
          {status.lastSyncAt !== null && `Last synced ${relativeTime(Math.floor(status.lastSyncAt / 1000))}`}
        </span>
      )}
    </>
  );

  return (
    <div className="status" aria-live="polite">
      {/* A fixed width: a change of state, an upload or failed changes never move the header. */}
      {failed.length > 0 ? (
        // The pill and "N failed" under it are one button: the header keeps its width (a button
        // beside the pill pushed Sign out to a second line at 390 px).
        <button type="button" className="status-text status-button" aria-label={`${label} — ${detail}`} onClick={() => setShowFailed(true)}>
          {face}
        </button>
      ) : (
        <span className="status-text">{face}</span>
      )}
      {stalled && (
        <span className="stalled bad" data-testid="sync-stalled" role="status">
          Nothing sent for {Math.max(1, Math.round((Date.now() - stalled.since) / 60_000))} min
          {stalled.error ? ` — last error: ${stalled.error}` : ''}
        </span>
      )}
      <button type="button" className="icon-button" aria-label="Sync now" title="Sync now" onClick={() => void syncNow()}>
        ↻
      </button>
      {status.needsSignIn && (
        <Dialog title="Sign in again" open onClose={() => {}}>
          <Suspense fallback={<p className="empty">Loading…</p>}>
            <SignIn again onSubmit={signInAgain} onSignOut={signOut} />
          </Suspense>
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
