// The pill's words come from the one status read that also carries the first sync's progress:
// "All synced" is never said while that progress line shows (issue 21), nor before any sync.
import { describe, expect, it } from 'vitest';
import { INITIAL_STATUS, statusLabel, type SyncStatus } from '../../lib/sync/engine/status';

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
    expect(statusLabel({ ...synced, firstSync, online: false })).toMatchObject({ label: 'Offline' });
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
});
