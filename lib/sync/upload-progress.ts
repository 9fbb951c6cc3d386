// Bytes sent of the uploads in flight, for the file rows and the status bar. One meta row, by
// the uploaded file's id (its temp id while the upload is pending), rewritten at most every
// `intervalMs`: a Dexie write per progress event would wake every live query that reads it.
import { getMeta, setMeta, type ParleyDb } from './db';
import type { Clock } from './engine';

export const UPLOAD_PROGRESS_KEY = 'uploadProgress';

/**
 * `sent` of `total` bytes; `resumed`: a resumable upload that went on from where the server had
 * it after a cut, a reload or a crash (`sent` then starts at the server's offset, not at zero).
 */
export type UploadProgress = Record<string, { sent: number; total: number; resumed?: boolean }>;

export async function readUploadProgress(db: ParleyDb): Promise<UploadProgress> {
  return (await getMeta<UploadProgress>(db, UPLOAD_PROGRESS_KEY)) ?? {};
}

export class UploadProgressWriter {
  private current: UploadProgress = {};
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private stored = false;
  private writing: Promise<void> = Promise.resolve();
  private trailing: unknown = null;

  constructor(
    private readonly db: ParleyDb,
    private readonly clock: Clock,
    private readonly intervalMs = 500,
  ) {}

  /** From the upload's progress events; writes now if the last write is old enough, else a little later. */
  report(fileId: string, sent: number, total: number, resumed = false): void {
    this.current = { ...this.current, [fileId]: resumed ? { sent, total, resumed } : { sent, total } };
    const wait = this.lastWriteAt + this.intervalMs - this.clock.now();
    if (wait <= 0) this.write();
    else if (this.trailing === null) {
      // The last event of a burst is written too (an upload that stalls keeps showing where it is).
      this.trailing = this.clock.setTimeout(() => {
        this.trailing = null;
        this.write();
      }, wait);
    }
  }

  /** At the end of a sync: whatever was in flight has finished (or failed and starts over). */
  async clear(): Promise<void> {
    this.current = {};
    if (this.trailing !== null) this.clock.clearTimeout(this.trailing);
    this.trailing = null;
    if (this.stored) this.write();
    await this.writing;
  }

  private write(): void {
    this.lastWriteAt = this.clock.now();
    const value = this.current;
    this.stored = Object.keys(value).length > 0;
    // In order, and never failing the upload: progress is only for show.
    this.writing = this.writing.then(() => setMeta(this.db, UPLOAD_PROGRESS_KEY, value)).catch(() => {});
  }
}
