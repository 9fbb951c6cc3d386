// What the status pill says: one connection state, from the one status read (lib/sync/engine/status.ts)
// and the uploads in flight (engine/upload-progress.ts), at the page's clock. Pure; the table is
// tests/unit/status-label.test.ts.
import type { FailedOperation, SyncStatus, UploadProgress } from '../sync/page';
import { groupedNumber, humanSize, sizeOf } from './format';

/** A transfer with no byte moving for this long reads "Stalled" (it is abandoned, and resumed, at its `abandonAt`). */
export const STALL_NOTICE_MS = 5_000;

/** What the pill says (`label`), the line under it (`detail`, e.g. "2 failed"; null: "Last synced …"), and whether it counts down. */
export interface StatusLabel {
  label: string;
  detail: string | null;
  tone: 'ok' | 'warn' | 'bad';
  failed: FailedOperation[];
  stalled: SyncStatus['stalled'];
  /** The words change with the clock alone (a countdown, a transfer that may stall): the page re-reads them each second. */
  ticking: boolean;
}

/**
 * What the status pill says, from the one status read and the uploads in flight, at `now` (the
 * page's clock). One connection state, driven by what the transfers do:
 *
 *   the browser says no network ................. Offline
 *   a transfer, no byte moving for a while ...... Stalled           — nothing moving, retrying in n s (when it is abandoned and resumed)
 *   a transfer moving ........................... Sending           — x of y MB on the server (its Upload-Offset; "n% sent" for a plain upload)
 *   requests fail while the browser is online ... Server unreachable — retrying in n s (nextRetryAt)
 *
 * Bytes moving mean the server is reachable, whatever the last run said. "All synced" only when it
 * is true: nothing pending or failed, online, not syncing, and a sync has completed with no first
 * sync still under way (so "Getting your data…" never shows beside it).
 */
export function statusLabel(status: SyncStatus, at: { now: number; uploads: UploadProgress } = { now: 0, uploads: {} }): StatusLabel {
  const failed = status.failed.filter((f) => !f.blocked);
  // The browser cleared this device's copy with changes still queued: never "All synced" until
  // the user has read that (MirrorNotice).
  const lost = (status.mirrorCleared?.lostChanges ?? 0) > 0;
  // The watchdog (engine.ts): pending changes against a reachable server, not moving.
  const stalled = status.stalled && status.pendingCount > 0 && failed.length === 0 && status.online && !status.needsSignIn ? status.stalled : null;
  const unfinished = status.firstSync !== null || status.lastSyncAt === null;
  const seconds = (until: number) => Math.max(1, Math.ceil((until - at.now) / 1000));
  // Transfers under way in this run (a cut one waiting to resume has no `movedAt`).
  const moving = status.syncing ? Object.values(at.uploads).filter((u) => u.movedAt !== undefined) : [];
  const base = { failed, stalled };
  const said = (label: string, tone: StatusLabel['tone'], detail: string | null = null, ticking = false): StatusLabel => ({ ...base, label, tone, detail, ticking });

  if (status.needsSignIn) return said('Sign in again', 'bad');
  if (failed.length > 0) return said('Needs attention', 'bad', `${groupedNumber(failed.length)} failed`);
  if (lost) return said('Changes lost', 'bad');
  if (status.noNetwork) return said('Offline', 'warn');
  if (moving.length > 0) {
    const still = moving.filter((u) => at.now - (u.movedAt ?? at.now) >= STALL_NOTICE_MS);
    if (still.length > 0) {
      const retryAt = Math.min(...still.map((u) => u.abandonAt ?? at.now));
      return said('Stalled', 'warn', retryAt > at.now ? `Nothing moving — retrying in ${seconds(retryAt)} s` : 'Nothing moving — retrying', true);
    }
    return said('Sending', 'ok', transferDetail(moving), true);
  }
  if (!status.online) {
    const retry = status.nextRetryAt !== null && status.nextRetryAt > at.now ? `Retrying in ${seconds(status.nextRetryAt)} s` : status.syncing ? 'Trying again…' : null;
    return said('Server unreachable', 'warn', retry, retry !== null);
  }
  if (stalled) return said('Not syncing', 'bad');
  if (status.syncing) return said('Syncing…', 'ok');
  if (status.pendingCount > 0 || unfinished) return said('Waiting to sync', 'warn');
  return said('All synced', 'ok');
}

/** "5.9 of 19 MB on the server" (what the server confirmed), or "40% sent" for uploads it confirms only when done. */
function transferDetail(uploads: UploadProgress[string][]): string {
  const total = uploads.reduce((sum, u) => sum + u.total, 0);
  if (uploads.every((u) => u.onServer !== undefined)) {
    const held = uploads.reduce((sum, u) => sum + (u.onServer ?? 0), 0);
    return `${sizeOf(held, total)} on the server`;
  }
  const sent = uploads.reduce((sum, u) => sum + u.sent, 0);
  return total > 0 ? `${Math.min(100, Math.floor((sent / total) * 100))}% sent` : `${humanSize(sent)} sent`;
}
