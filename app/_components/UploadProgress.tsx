'use client';
// Bytes sent of pending uploads, as the sync engine records them (lib/sync/progress.ts: one meta
// row, rewritten at most twice a second), for the file rows and the status bar.
import { useLiveQuery } from 'dexie-react-hooks';
import { readUploadProgress, type UploadProgress } from '@/lib/sync/upload-progress';
import { humanSize } from '@/lib/view/format';
import { useSession } from './session-context';

const NONE: UploadProgress = {};

export function useUploadProgress(): UploadProgress {
  const { connection } = useSession();
  return useLiveQuery(() => readUploadProgress(connection.db), [connection.db]) ?? NONE;
}

function describe(sent: number, total: number, resumed = false): string {
  // After a cut, a reload or a crash a resumable upload goes on from the server's offset.
  if (resumed && total > 0) return `Resuming — ${humanSize(sent)} of ${humanSize(total)}`;
  return total > 0 ? `${Math.min(100, Math.floor((sent / total) * 100))}% sent` : `${humanSize(sent)} sent`;
}

/** "40% sent" next to a pending file while its upload is on the way; nothing otherwise. */
export function UploadProgressMark({ fileId }: { fileId: string }) {
  const progress = useUploadProgress()[fileId];
  if (!progress) return null;
  return (
    <span className="mark progress" data-testid="upload-progress" title={`${humanSize(progress.sent)} of ${humanSize(progress.total)} sent`}>
      {describe(progress.sent, progress.total, progress.resumed)}
    </span>
  );
}

/** For the status bar: all uploads in flight together, or nothing. */
export function UploadProgressSummary() {
  const all = Object.values(useUploadProgress());
  if (all.length === 0) return null;
  const sent = all.reduce((sum, p) => sum + p.sent, 0);
  const total = all.reduce((sum, p) => sum + p.total, 0);
  return <span data-testid="upload-progress-summary"> · {describe(sent, total)}</span>;
}
