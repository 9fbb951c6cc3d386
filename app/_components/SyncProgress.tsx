'use client';
// The first sync's progress, under the screen's title: how much has been mirrored so far. The plain
// API gives no totals, so the counts say "so far"; while files are being placed in their
// conversations the total of that step is known. Gone once the first full pass is done.
// From the same status read as the pill (StatusBar's SyncStatusProvider), which never says
// "All synced" while it shows (statusLabel).
import { countOf as plural, groupedNumber as n } from '@/lib/view/format';
import { useSyncStatus } from './StatusBar';

export function SyncProgress() {
  const progress = useSyncStatus()?.firstSync;
  if (!progress) return null;
  const text =
    progress.phase === 'scan' && progress.unplaced
      ? `Placing files in their conversations: ${n(progress.placed ?? 0)} of ${n(progress.unplaced)}`
      : progress.phase === 'conversations'
        ? `Getting your data: ${plural(progress.conversations, 'conversation')} so far`
        : `Getting your data: ${plural(progress.conversations, 'conversation')} and ${plural(progress.files, 'file')} so far`;
  return (
    <p className="sync-progress" role="status" data-testid="sync-progress">
      {text}
    </p>
  );
}
