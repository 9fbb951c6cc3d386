// The app's bookkeeping is not the user's change (issue 32 item 5; lib/sync/mirror/bookkeeping.ts):
// which operations are bookkeeping, and the row state they leave (rebase.ts stateOf).
import { describe, expect, it } from 'vitest';
import { isBookkeeping } from '../../lib/sync/mirror/bookkeeping';
import { stateOf } from '../../lib/sync/mirror/rebase';
import type { OpBody, OutboxOp } from '../../lib/sync/outbox/operations';

const op = (body: OpBody, fields: Partial<OutboxOp> = {}): OutboxOp => ({
  seq: 1,
  id: `op-${Math.random()}`,
  entity: 'conversation',
  entityId: 'c1',
  body,
  state: 'queued',
  attempts: 0,
  nextAttemptAt: 0,
  firstSentAt: null,
  outcomeUnknown: false,
  error: null,
  createdAt: 1,
  ...fields,
});
const opened: OpBody = { kind: 'conversation.update', patch: { last_opened_at: 5 } };
const pinned: OpBody = { kind: 'conversation.update', patch: { is_pinned: true } };
const both: OpBody = { kind: 'conversation.update', patch: { is_pinned: true, last_opened_at: 5 } };
const refusal = { status: 422, code: 'x', message: 'no' };

describe('isBookkeeping', () => {
  it.each<[string, OpBody, boolean]>([
    ['the open report alone', opened, true],
    ['a user change', pinned, false],
    ['the open report merged with a user change', both, false],
    ['an empty update', { kind: 'conversation.update', patch: {} }, false],
    ['a delete', { kind: 'conversation.delete' }, false],
    ['a rename', { kind: 'file.rename', filename: 'a' }, false],
  ])('%s → %s', (_name, body, expected) => {
    expect(isBookkeeping(body)).toBe(expected);
  });
});

describe('stateOf: the row state pending work leaves', () => {
  const failedPin = op(pinned, { state: 'failed', error: refusal });
  const blockedOpen = op(opened);
  it.each<[string, OutboxOp[], Set<string>, string]>([
    ['nothing', [], new Set(), 'synced'],
    ['the open report alone: no mark', [op(opened)], new Set(), 'reporting'],
    ['a user change', [op(pinned)], new Set(), 'pending'],
    ['a user change and the report', [op(opened), op(pinned)], new Set(), 'pending'],
    ['merged', [op(both)], new Set(), 'pending'],
    ['a failed user change, the report behind it', [failedPin, blockedOpen], new Set([blockedOpen.id]), 'failed'],
    ['a failed report (stored by an earlier version) still holds the row up', [op(opened, { state: 'failed', error: refusal })], new Set(), 'failed'],
  ])('%s → %s', (_name, ops, blocked, expected) => {
    expect(stateOf(ops, blocked)).toBe(expected);
  });
});
