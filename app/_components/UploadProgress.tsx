'use client';
// Bytes sent of pending uploads, as the sync engine records them (lib/sync/engine/upload-progress.ts: one meta
// row, rewritten at most twice a second), for the file rows and the status bar.
import { useLiveQuery } from 'dexie-react-hooks';
import { readUploadProgress, type UploadProgress } from '@/lib/sync/page';
import { humanSize, sizeOf } from '@/lib/view/format';
import { useSession } from './session-context';

const NONE: UploadProgress = {};

export function useUploadProgress(): UploadProgress {
  const { connection } = useSession();
  return useLiveQuery(() => readUploadProgress(connection.db), [connection.db]) ?? NONE;
}

function describe(sent: number, total: number, resumed = false): string {
  // After a cut, a reload or a crash a resumable upload goes on from the server's offset (`sent`
  // is then what the server confirmed: upload-progress.ts `clear`).
  if (resumed && total > 0) return `Resuming — ${sizeOf(sent, total)}`;
  return total > 0 ? `${Math.min(100, Math.floor((sent / total) * 100))}% sent` : `${humanSize(sent)} sent`;
}

/**
 * On a pending file's row while its upload is on the way: "40% sent" (or "Resuming — 31 of 48 MB"
 * after a cut: the bar then starts at the server's offset) and a bar; nothing otherwise.
 */
export function UploadProgressMark({ fileId }: { fileId: string }) {
  const progress = useUploadProgress()[fileId];
  if (!progress) return null;
  const text = describe(progress.sent, progress.total, progress.resumed);
  return (
    <>
      <span className="mark progress" data-testid="upload-progress" title={`${humanSize(progress.sent)} of ${humanSize(progress.total)} sent`}>
        {text}
      </span>
      {progress.total > 0 && (
        <progress className="upload-bar" data-testid="upload-bar" value={Math.min(progress.sent, progress.total)} max={progress.total} aria-label={text} />
      )}
    </>
  );
}

/**
 * For the status pill: all uploads in flight together as a thin bar along its foot, or nothing.
 * A bar, not words: the pill keeps its width (the words are on each file's row).
 */
export function UploadProgressSummary() {
  const all = Object.values(useUploadProgress());
  if (all.length === 0) return null;
  // What the server holds where it says (a resumable upload's offset), not the bytes in flight.
  const sent = all.reduce((sum, p) => sum + (p.onServer ?? p.sent), 0);
  const total = all.reduce((sum, p) => sum + p.total, 0);
  return <progress className="pill-bar" data-testid="upload-progress-summary" value={sent} max={total || 1} aria-label={`Uploads: ${describe(sent, total)}`} />;
}
