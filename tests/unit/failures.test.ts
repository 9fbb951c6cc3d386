// Failed changes in plain words (issue 21, lib/view/failures.ts): the thing, the cause, and
// whether Retry can help.
import { describe, expect, it } from 'vitest';
import { describeFailure, type NamedFailure } from '../../lib/view/failures';

const failed = (f: Partial<NamedFailure>): NamedFailure => ({ opId: 'op', kind: 'file.rename', entityId: 'F1', error: null, blocked: false, name: null, ...f });
const missing = { status: 404, code: 'resource_missing', message: 'No such file' };

describe('describeFailure', () => {
  it('names the thing and says it was deleted elsewhere; only Discard can help', () => {
    expect(describeFailure(failed({ name: 'ecg-lead-II.pdf', error: missing }))).toEqual({
      title: 'Rename',
      text: '‘ecg-lead-II.pdf’ was deleted on another device — your rename cannot be applied.',
      final: true,
    });
    expect(describeFailure(failed({ name: 'a.pdf', newName: 'b.pdf', error: missing })).text).toBe('‘a.pdf’ was deleted on another device — your rename to ‘b.pdf’ cannot be applied.');
    expect(describeFailure(failed({ kind: 'file.upload', name: 'scan.png', conversation: 'amelia-hughes', error: missing })).text).toBe(
      'The conversation with ‘amelia-hughes’ was deleted on another device — ‘scan.png’ cannot be uploaded.',
    );
    expect(describeFailure(failed({ kind: 'conversation.update', name: 'ward-7', error: missing })).text).toBe(
      'The conversation with ‘ward-7’ was deleted on another device — your change cannot be applied.',
    );
    expect(describeFailure(failed({ kind: 'conversation.update', error: missing })).text).toBe('The conversation was deleted on another device — your change cannot be applied.');
  });

  it('other refusals keep the server’s reason; Retry stays the main action where it may help', () => {
    expect(describeFailure(failed({ kind: 'file.upload', name: 'big.mp4', error: { status: 413, code: 'file_too_large', message: 'Too large' } }))).toMatchObject({ text: '‘big.mp4’ is too large for the server.', final: true });
    expect(describeFailure(failed({ kind: 'conversation.update', name: 'x', error: { status: 400, code: 'parameter_invalid', message: 'is_pinned must be a boolean.' } }))).toEqual({
      title: 'Change to a conversation',
      text: 'The conversation with ‘x’: is_pinned must be a boolean.',
      final: true,
    });
    expect(describeFailure(failed({ name: 'a.txt', error: { status: 409, code: 'conflict', message: 'Busy' } }))).toMatchObject({ text: '‘a.txt’: Busy.', final: false });
    expect(describeFailure(failed({ name: 'a.txt', blocked: true }))).toMatchObject({ text: 'Waiting on a failed change above (‘a.txt’).', final: false });
  });
});
