'use client';
// The failed changes dialog's list (loaded when the dialog first opens, not with the first
// screen): each change the server refused, named as the user made it, with its cause in plain
// words. Retry only where sending it again can succeed; where the server lost a file this device
// still has, "Upload my copy again" first, then Discard.
import { useLiveQuery } from 'dexie-react-hooks';
import type { FailedOperation } from '@/lib/sync/page';
import { describeFailure, readFailureNames } from '@/lib/view/failures';
import { hasCopyOnDevice, uploadMyCopyAgain } from '@/lib/view/reupload';
import { useAction } from './ActionAlert';
import { useSession } from './session-context';

export function FailedList({ failed }: { failed: FailedOperation[] }) {
  const { connection } = useSession();
  const { db, client } = connection;
  const { run, alert } = useAction({ inline: true }); // inside a modal dialog: the page behind it is inert
  const ids = failed.map((f) => f.opId);
  const names = useLiveQuery(() => readFailureNames(db, ids, (file) => hasCopyOnDevice(db, file)), [db, ids.join(' ')]);
  return (
    <>
      {alert}
      <ul className="failed-changes" aria-label="Failed changes">
        {failed.map((f) => {
          const { title, text, final, reupload } = describeFailure({ ...f, ...names?.[f.opId] });
          const actions = [];
          if (reupload) {
            actions.push(
              <button key="reupload" type="button" className="primary" onClick={() => void run('upload your copy again', () => uploadMyCopyAgain(db, client, f.opId, f.entityId))}>
                Upload my copy again
              </button>,
            );
          }
          const retry = (
            <button key="retry" type="button" className="primary" onClick={() => void run('retry this change', () => client.retryOperation(f.opId))}>
              Retry
            </button>
          );
          const discard = (
            <button key="discard" type="button" className={final && !reupload ? 'primary' : undefined} onClick={() => void run('discard this change', () => client.discardOperation(f.opId))}>
              Discard
            </button>
          );
          // Retry only where it can succeed; a change the server will refuse again has Discard alone.
          if (!final) actions.push(retry);
          actions.push(discard);
          return (
            <li key={f.opId}>
              <strong>{title}</strong>
              <span className="message">{text}</span>
              {!f.blocked && <span className="row-actions">{actions}</span>}
            </li>
          );
        })}
      </ul>
    </>
  );
}
