'use client';
// The failed changes dialog's list (loaded when the dialog first opens, not with the first
// screen): each change the server refused, named, with its cause in plain words, and Retry /
// Discard — Discard first and the main action where sending it again cannot succeed.
import { useLiveQuery } from 'dexie-react-hooks';
import type { FailedOperation } from '@/lib/sync/page';
import { describeFailure, readFailureNames } from '@/lib/view/failures';
import { useAction } from './ActionAlert';
import { useSession } from './session-context';

export function FailedList({ failed }: { failed: FailedOperation[] }) {
  const { connection } = useSession();
  const { run, alert } = useAction({ inline: true }); // inside a modal dialog: the page behind it is inert
  const ids = failed.map((f) => f.opId);
  const names = useLiveQuery(() => readFailureNames(connection.db, ids), [connection.db, ids.join(' ')]);
  return (
    <>
      {alert}
      <ul className="failed-changes" aria-label="Failed changes">
        {failed.map((f) => {
          const { title, text, final } = describeFailure({ ...f, ...names?.[f.opId] });
          const retry = (
            <button key="retry" type="button" className={final ? undefined : 'primary'} onClick={() => void run('retry this change', () => connection.client.retryOperation(f.opId))}>
              Retry
            </button>
          );
          const discard = (
            <button key="discard" type="button" className={final ? 'primary' : undefined} onClick={() => void run('discard this change', () => connection.client.discardOperation(f.opId))}>
              Discard
            </button>
          );
          return (
            <li key={f.opId}>
              <strong>{title}</strong>
              <span className="message">{text}</span>
              {!f.blocked && <span className="row-actions">{final ? [discard, retry] : [retry, discard]}</span>}
            </li>
          );
        })}
      </ul>
    </>
  );
}
