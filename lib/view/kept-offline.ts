// What a kept-offline conversation says of its files beside its "Keep offline" (the conversation
// screen only: kept out of format.ts, which the first screen loads).
import { countOf, groupedNumber } from './format';

/**
 * A kept-offline conversation's state beside its "Keep offline" (`pinned`: kept because pinned
 * conversations are, not by its own choice). With no file yet, what keeping means for it: "0 of
 * 0 files" read as a fault.
 */
export function keptOfflineState(onDevice: number, fileCount: number, pinned: boolean): string {
  const why = pinned ? ' (pinned)' : '';
  if (fileCount === 0) return `No files yet: new ones are kept on this device${why}`;
  return `${groupedNumber(Math.min(onDevice, fileCount))} of ${countOf(fileCount, 'file')} on this device${why}`;
}
