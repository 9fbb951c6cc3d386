// The pill's words come from the one status read that also carries the first sync's progress:
// "All synced" is never said while that progress line shows (issue 21), nor before any sync. And
// one connection state, driven by what the transfers do (issue 32 item 4): no network, server
// unreachable, sending (what the server holds), stalled — with the retry counted down.
import { describe, expect, it } from 'vitest';
import { INITIAL_STATUS, type SyncStatus } from '../../lib/sync/engine/status';
import { STALL_NOTICE_MS, statusLabel } from '../../lib/view/status-label';
import type { UploadProgress } from '../../lib/sync/engine/upload-progress';

const synced: SyncStatus = { ...INITIAL_STATUS, lastSyncAt: 1_000, pendingCount: 0, failed: [], mirrorCleared: null, firstSync: null };

describe('statusLabel', () => {
  it('says All synced only when a sync completed and nothing is under way', () => {
    expect(statusLabel(synced)).toMatchObject({ label: 'All synced', tone: 'ok' });
  });

  it('never says All synced while a first sync is unfinished', () => {
    const firstSync = { phase: 'conversations' as const, conversations: 1000, files: 0 };
    // Between two runs (a retryable failure, or the pass not done yet): waiting, not synced.
    expect(statusLabel({ ...synced, firstSync })).toMatchObject({ label: 'Waiting to sync', tone: 'warn' });
    expect(statusLabel({ ...synced, lastSyncAt: null, firstSync })).toMatchObject({ label: 'Waiting to sync' });
    expect(statusLabel({ ...synced, firstSync, syncing: true })).toMatchObject({ label: 'Syncing…', tone: 'ok' });
    expect(statusLabel({ ...synced, firstSync, online: false, noNetwork: true })).toMatchObject({ label: 'Offline' });
  });

  it('never says All synced before the first sync completed', () => {
    expect(statusLabel({ ...synced, lastSyncAt: null })).toMatchObject({ label: 'Waiting to sync', tone: 'warn' });
  });

  it('keeps the other states as they were', () => {
    expect(statusLabel({ ...synced, pendingCount: 2 })).toMatchObject({ label: 'Waiting to sync', tone: 'warn' });
    expect(statusLabel({ ...synced, needsSignIn: true })).toMatchObject({ label: 'Sign in again', tone: 'bad' });
    const failed = [{ opId: 'a', kind: 'rename' as never, entityId: 'f', error: null, blocked: false }];
    expect(statusLabel({ ...synced, failed })).toMatchObject({ label: 'Needs attention', tone: 'bad' });
    expect(statusLabel({ ...synced, mirrorCleared: { at: 1, lostChanges: 1 } })).toMatchObject({ label: 'Changes lost' });
    expect(statusLabel({ ...synced, pendingCount: 1, stalled: { since: 1, error: null } })).toMatchObject({ label: 'Not syncing', tone: 'bad' });
  });

  const MB = 1024 * 1024;
  const now = 1_000_000;
  // A resumed upload of 19 MB: 5.9 MB confirmed by the server (Upload-Offset), 8.0 MB sent.
  const moving: UploadProgress = { f1: { sent: 8 * MB, total: 19 * MB, onServer: 5.9 * MB, resumed: true, movedAt: now - 200, abandonAt: now + 29_800 } };
  const still: UploadProgress = { f1: { ...moving.f1!, movedAt: now - STALL_NOTICE_MS - 1_000, abandonAt: now + 12_000 } };
  const plain: UploadProgress = { f1: { sent: 4 * MB, total: 10 * MB, movedAt: now, abandonAt: now + 30_000 } };
  const waiting: UploadProgress = { f1: { sent: 5.9 * MB, total: 19 * MB, onServer: 5.9 * MB, resumed: true } };
  const pending = { ...synced, pendingCount: 1 };
  const table: [string, SyncStatus, UploadProgress, { label: string; detail: string | null; tone: string; ticking: boolean }][] = [
    ['the browser says no network', { ...pending, online: false, noNetwork: true, nextRetryAt: now + 3_000 }, {}, { label: 'Offline', detail: null, tone: 'warn', ticking: false }],
    ['no network, even with a transfer on the row', { ...pending, online: false, noNetwork: true, syncing: true }, moving, { label: 'Offline', detail: null, tone: 'warn', ticking: false }],
    ['requests fail while the browser is online', { ...pending, online: false, nextRetryAt: now + 3_200 }, {}, { label: 'Server unreachable', detail: 'Retrying in 4 s', tone: 'warn', ticking: true }],
    ['unreachable, trying again now', { ...pending, online: false, syncing: true, nextRetryAt: now - 1 }, {}, { label: 'Server unreachable', detail: 'Trying again…', tone: 'warn', ticking: true }],
    ['unreachable, a cut upload waiting to resume', { ...pending, online: false, nextRetryAt: now + 900 }, waiting, { label: 'Server unreachable', detail: 'Retrying in 1 s', tone: 'warn', ticking: true }],
    // Bytes moving mean online, whatever the last run recorded.
    ['a resumed upload climbing after a failed run', { ...pending, online: false, syncing: true, nextRetryAt: now - 5_000 }, moving, { label: 'Sending', detail: '5.9 of 19 MB on the server', tone: 'ok', ticking: true }],
    ['a resumable upload: what the server holds, not what is in flight', { ...pending, syncing: true }, moving, { label: 'Sending', detail: '5.9 of 19 MB on the server', tone: 'ok', ticking: true }],
    ['a plain upload (confirmed only at its answer)', { ...pending, syncing: true }, plain, { label: 'Sending', detail: '40% sent', tone: 'ok', ticking: true }],
    ['a transfer with nothing moving', { ...pending, syncing: true }, still, { label: 'Stalled', detail: 'Nothing moving — retrying in 12 s', tone: 'warn', ticking: true }],
    ['a stalled transfer past its time', { ...pending, syncing: true }, { f1: { ...still.f1!, abandonAt: now - 1 } }, { label: 'Stalled', detail: 'Nothing moving — retrying', tone: 'warn', ticking: true }],
    ['a sync with no transfer', { ...pending, syncing: true }, {}, { label: 'Syncing…', detail: null, tone: 'ok', ticking: false }],
    ['a cut upload between runs, server reachable', pending, waiting, { label: 'Waiting to sync', detail: null, tone: 'warn', ticking: false }],
    ['failed changes (the line under the pill opens them)', { ...pending, failed: [{ opId: 'a', kind: 'rename' as never, entityId: 'f', error: null, blocked: false }] }, {}, { label: 'Needs attention', detail: '1 failed', tone: 'bad', ticking: false }],
    ['nothing left', synced, {}, { label: 'All synced', detail: null, tone: 'ok', ticking: false }],
  ];
  it.each(table)('%s', (_, status, uploads, expected) => {
    expect(statusLabel(status, { now, uploads })).toMatchObject(expected);
  });
});
