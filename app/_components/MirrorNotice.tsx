'use client';
// Keeps the marker that lets the next start notice a database the browser cleared (kept outside
// the database: lib/view/mirror.ts), and says so when it happened, with the changes lost with it.
import { useEffect } from 'react';
import { dismissMirrorCleared, recordMirror } from '@/lib/view/mirror';
import { useSession } from './session-context';
import { useSyncStatus } from './StatusBar';

export function MirrorNotice({ database }: { database: string }) {
  const { connection } = useSession();
  const status = useSyncStatus();
  const filled = status ? status.lastSyncAt !== null || status.pendingCount + status.failed.length > 0 : false;
  const pending = status ? status.pendingCount + status.failed.length : 0;
  useEffect(() => {
    if (status) recordMirror(window.localStorage, database, { filled, pending });
  }, [status, database, filled, pending]);

  const cleared = status?.mirrorCleared;
  if (!cleared) return null;
  const lost = cleared.lostChanges;
  return (
    <div className={`banner ${lost > 0 ? 'bad' : ''}`} role="alert" data-testid="mirror-cleared">
      <p>
        This device’s copy was cleared by the browser; reloaded from the server.
        {lost > 0 && (
          <>
            {' '}
            <strong>
              {lost} change{lost === 1 ? '' : 's'} made on this device had not reached the server and {lost === 1 ? 'was' : 'were'} lost.
            </strong>
          </>
        )}
      </p>
      <button type="button" onClick={() => void dismissMirrorCleared(connection.db)}>
        Dismiss
      </button>
    </div>
  );
}
