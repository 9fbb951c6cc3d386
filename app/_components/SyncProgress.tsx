'use client';
// The first sync's progress, under the screen's title: how much has been mirrored so far. The plain
// API gives no totals, so the counts say "so far"; while files are being placed in their
// conversations the total of that step is known. Gone once the first full pass is done.
import { readFirstSyncProgress } from '@/lib/sync/pull-progress';
import { countOf as plural, groupedNumber as n } from '@/lib/view/format';
import { useSession } from './session-context';
import { useThrottledQuery } from './useThrottledQuery';

export function SyncProgress() {
  const { connection } = useSession();
  const progress = useThrottledQuery(connection.db, ['meta'], () => readFirstSyncProgress(connection.db), [], 500, JSON.stringify);
  if (!progress) return null;
  const text =
    progress.phase === 'scan' && progress.unplaced
      ? `Placing files in their conversations: ${n(progress.placed ?? 0)} of ${n(progress.unplaced)}`
      : progress.phase === 'conversations'
        ? `Getting your data: ${plural(progress.conversations, 'conversation', 'conversations')} so far`
        : `Getting your data: ${plural(progress.conversations, 'conversation', 'conversations')} and ${plural(progress.files, 'file', 'files')} so far`;
  return (
    <p className="sync-progress" role="status" data-testid="sync-progress">
      {text}
    </p>
  );
}
