// What a kept-offline conversation says of its files beside "Keep offline".
import { describe, expect, it } from 'vitest';
import { keptOfflineState } from '../../lib/view/kept-offline';

describe('keptOfflineState', () => {
  it.each([
    [0, 0, false, 'No files yet: new ones are kept on this device'],
    [0, 0, true, 'No files yet: new ones are kept on this device (pinned)'],
    [0, 3, false, '0 of 3 files on this device'],
    [1, 1, false, '1 of 1 file on this device'],
    [2, 3, true, '2 of 3 files on this device (pinned)'],
    // A count of files held that is ahead of the list (a file deleted meanwhile) never reads "4 of 3".
    [4, 3, false, '3 of 3 files on this device'],
    [1200, 1500, false, '1,200 of 1,500 files on this device'],
  ])('%i held of %i, pinned %s: %s', (held, count, pinned, text) => {
    expect(keptOfflineState(held, count, pinned)).toBe(text);
  });
});
