// Failed changes in plain words (issues 21, 32; lib/view/failures.ts): what the change was, the
// thing, the cause, whether Retry can help, and whether the device's copy can be uploaded again.
import { describe, expect, it } from 'vitest';
import { describeFailure, titleOf, type NamedFailure } from '../../lib/view/failures';

const failed = (f: Partial<NamedFailure>): NamedFailure => ({ opId: 'op', kind: 'file.rename', entityId: 'F1', error: null, blocked: false, name: null, ...f });
const missing = { status: 404, code: 'resource_missing', message: 'No such file' };

describe('titleOf: each change says what it was', () => {
  it.each<[string, Partial<NamedFailure>, string]>([
    ['a rename', { kind: 'file.rename', name: 'ecg-lead-II-strip.png', newName: 'new-name.png' }, 'Rename ecg-lead-II-strip.png → new-name.png'],
    ['a rename of a file no longer known', { kind: 'file.rename', newName: 'b.png' }, 'Rename a file → b.png'],
    ['a file delete', { kind: 'file.delete', name: 'scan.pdf' }, 'Delete scan.pdf'],
    ['an upload', { kind: 'file.upload', name: 'scan.png', conversation: 'amelia-hughes' }, 'Upload scan.png to conversation with amelia-hughes'],
    ['a new conversation', { kind: 'conversation.create', name: 'ward-7' }, 'New conversation with ward-7'],
    ['a conversation delete', { kind: 'conversation.delete', name: 'ward-7' }, 'Delete conversation with ward-7'],
    ['a pin', { kind: 'conversation.update', name: 'amelia-hughes', change: { is_pinned: true } }, 'Pin conversation with amelia-hughes'],
    ['an unmute', { kind: 'conversation.update', name: 'amelia-hughes', change: { is_muted: false } }, 'Unmute conversation with amelia-hughes'],
    ['an archive', { kind: 'conversation.update', name: 'x', change: { archived_at: 1_700_000_000 } }, 'Archive conversation with x'],
    ['a restore', { kind: 'conversation.update', name: 'x', change: { archived_at: null } }, 'Restore conversation with x'],
    ['several at once', { kind: 'conversation.update', name: 'x', change: { is_pinned: true, is_muted: true, archived_at: null } }, 'Pin, mute and restore conversation with x'],
    ['a message pinned', { kind: 'conversation.update', name: 'x', change: { pinned_message_id: 'm1' } }, 'Pin a message in conversation with x'],
    ['a message unpinned', { kind: 'conversation.update', name: 'x', change: { pinned_message_id: null } }, 'Unpin the message of conversation with x'],
    ['a pin and a message pinned', { kind: 'conversation.update', name: 'x', change: { is_pinned: true, pinned_message_id: 'm1' } }, 'Pin conversation with x and pin a message in it'],
    ['an open merged with a mute: the mute', { kind: 'conversation.update', name: 'x', change: { is_muted: true, last_opened_at: 5 } }, 'Mute conversation with x'],
    ['bookkeeping alone (stored by an earlier version)', { kind: 'conversation.update', name: 'x', change: { last_opened_at: 5 } }, 'Note that you opened conversation with x'],
    ['a conversation no longer known', { kind: 'conversation.update', change: { is_pinned: false } }, 'Unpin a conversation'],
  ])('%s', (_name, f, title) => {
    expect(titleOf(failed(f))).toBe(title);
  });
});

describe('describeFailure', () => {
  it('names the thing and says it was deleted elsewhere; no Retry', () => {
    expect(describeFailure(failed({ name: 'ecg-lead-II.pdf', error: missing }))).toEqual({
      title: 'Rename ecg-lead-II.pdf',
      text: '‘ecg-lead-II.pdf’ was deleted on another device — your rename cannot be applied.',
      final: true,
      reupload: false,
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

  it.each<[string, Partial<NamedFailure>, boolean]>([
    ['a rename of a lost file with a copy on the device', { name: 'a.png', newName: 'b.png', error: missing, copyOnDevice: true }, true],
    ['... 410 too', { name: 'a.png', error: { status: 410, code: 'gone', message: 'Gone' }, copyOnDevice: true }, true],
    ['... without a copy', { name: 'a.png', error: missing, copyOnDevice: false }, false],
    ['... not yet known', { name: 'a.png', error: missing }, false],
    ['an upload whose conversation is gone (not the file)', { kind: 'file.upload', name: 'a.png', error: missing, copyOnDevice: true }, false],
    ['a rename refused for another reason', { name: 'a.png', error: { status: 422, code: 'parameter_invalid', message: 'Bad name' }, copyOnDevice: true }, false],
    ['waiting on a failed change', { name: 'a.png', blocked: true, copyOnDevice: true }, false],
  ])('Upload my copy again: %s → %s', (_name, f, reupload) => {
    expect(describeFailure(failed(f)).reupload).toBe(reupload);
  });

  it('says the device still has a copy where it can be uploaded again', () => {
    expect(describeFailure(failed({ name: 'a.png', newName: 'b.png', error: missing, copyOnDevice: true })).text).toBe(
      '‘a.png’ was deleted on another device — your rename to ‘b.png’ cannot be applied. This device still has a copy: upload it again, or discard.',
    );
  });

  it('other refusals keep the server’s reason; Retry only where it may help', () => {
    expect(describeFailure(failed({ kind: 'file.upload', name: 'big.mp4', error: { status: 413, code: 'file_too_large', message: 'Too large' } }))).toMatchObject({ text: '‘big.mp4’ is too large for the server.', final: true });
    expect(describeFailure(failed({ kind: 'conversation.update', name: 'x', change: { is_pinned: true }, error: { status: 400, code: 'parameter_invalid', message: 'is_pinned must be a boolean.' } }))).toEqual({
      title: 'Pin conversation with x',
      text: 'The conversation with ‘x’: is_pinned must be a boolean.',
      final: true,
      reupload: false,
    });
    expect(describeFailure(failed({ name: 'a.txt', error: { status: 409, code: 'conflict', message: 'Busy' } }))).toMatchObject({ text: '‘a.txt’: Busy.', final: false });
    expect(describeFailure(failed({ name: 'a.txt', error: { status: 429, code: 'rate_limited', message: 'Slow down' } }))).toMatchObject({ final: false });
    expect(describeFailure(failed({ name: 'a.txt', blocked: true }))).toMatchObject({ text: 'Waiting on a failed change above (‘a.txt’).', final: false });
  });
});
