// Changing how the device unlocks (issue 28 item 1): the data key is unwrapped with the current
// unlock and wrapped again by the new one; the wrap it replaces goes. Nothing else is encrypted
// again: the rows sealed under the data key (lib/sync/mirror/seal.ts) stay as they are.
import type { KeyWrap } from './keys';
import type { LockRecord } from './device-lock';

/** The record with `wrap` in place of the wrap of its method (a PIN replaces the PIN). */
export function withWrap(record: LockRecord, wrap: KeyWrap): LockRecord {
  return { ...record, wraps: [...record.wraps.filter((w) => w.method !== wrap.method), wrap] };
}

/** The record without the wrap of `method`; refused when it is the last way to unlock. */
export function withoutWrap(record: LockRecord, method: KeyWrap['method']): LockRecord {
  const wraps = record.wraps.filter((w) => w.method !== method);
  if (wraps.length === 0) throw new Error('The last way to unlock this device cannot be removed.');
  return { ...record, wraps };
}
