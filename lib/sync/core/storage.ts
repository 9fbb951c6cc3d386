// What the device's storage can still take, and the IndexedDB failures that are about the storage
// rather than the data: a full quota, and a connection the browser dropped (iOS: "Connection to
// Indexed Database server lost"). Plain TypeScript: the page hands in navigator.storage.estimate.
import type { Dexie } from 'dexie';
import { errorField } from './errors';

/** What navigator.storage.estimate() answers (both fields may be missing). */
export interface StorageEstimateLike {
  usage?: number;
  quota?: number;
}

export type EstimateStorage = () => Promise<StorageEstimateLike>;

/** An upload the device cannot store: refused before anything was queued. */
export class StorageFullError extends Error {
  constructor(
    message: string,
    readonly needed: number,
    readonly available: number | null,
  ) {
    super(message);
    this.name = 'StorageFullError';
  }
}

/** Bytes still free under the quota, or null when the browser does not say. */
export async function freeBytes(estimate: EstimateStorage | undefined): Promise<number | null> {
  if (!estimate) return null;
  try {
    const { usage, quota } = await estimate();
    if (typeof quota !== 'number' || typeof usage !== 'number') return null;
    return Math.max(0, quota - usage);
  } catch {
    // A failing estimate must not block the upload: the write itself still reports a full disk.
    return null;
  }
}

/** IndexedDB refused a write for lack of space (also when it surfaces as the transaction's abort). */
export function isQuotaError(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 4; e = errorField(e, 'inner'), depth++) {
    if (errorField(e, 'name') === 'QuotaExceededError') return true;
    // Dexie's BulkError keeps the per-row failures.
    const failures = errorField(e, 'failures');
    if (Array.isArray(failures) && failures.some((f) => isQuotaError(f))) return true;
  }
  return false;
}

/**
 * The connection to the database is gone: closed by the browser (Dexie then refuses with
 * DatabaseClosedError and, in Dexie 4, does not open again by itself) or lost mid-transaction.
 */
export function isConnectionLost(error: unknown): boolean {
  if (!error) return false;
  const inner = errorField(error, 'inner');
  if (errorField(error, 'name') === 'DatabaseClosedError' || errorField(inner, 'name') === 'DatabaseClosedError') return true;
  const text = `${String(errorField(error, 'message') ?? '')} ${String(errorField(inner, 'message') ?? '')}`;
  return /Connection to Indexed Database server lost/i.test(text);
}

/** Reopens a database whose connection was lost, so the caller can retry once. */
export async function reopen(db: Dexie): Promise<void> {
  if (db.isOpen()) db.close({ disableAutoOpen: false });
  await db.open();
}

/** "12.3 MB"-style, for the refusal's message. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function uploadTooBig(filename: string, needed: number, available: number | null): StorageFullError {
  const free = available === null ? '' : ` (${size(needed)} needed, ${size(available)} free)`;
  return new StorageFullError(
    `Not enough storage on this device to keep “${filename}” until it is sent${free}. It was not queued; nothing else was lost.`,
    needed,
    available,
  );
}
