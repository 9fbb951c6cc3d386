// Bytes sent of the uploads in flight, for the file rows and the status bar. One meta row, by
// the uploaded file's id (its temp id while the upload is pending), rewritten at most every
// `intervalMs`: a Dexie write per progress event would wake every live query that reads it.
import type { ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import type { Clock } from '../core/clock';

export const UPLOAD_PROGRESS_KEY = 'uploadProgress';

declare module '../mirror/meta' {
  interface MetaValues {
    uploadProgress: UploadProgress;
  }
}

/**
 * `sent` of `total` bytes (what has left the device, in flight included); `onServer`: what the
 * server has confirmed holding (a resumable upload's Upload-Offset; absent for POST /v1/files,
 * whose bytes count only at its answer); `resumed`: a resumable upload that went on from where
 * the server had it after a cut, a reload or a crash. `movedAt`: when bytes last moved (or an
 * answer came), while the transfer runs; it is abandoned at `abandonAt` if nothing moves by then.
 */
export interface UploadEntry {
  sent: number;
  total: number;
  onServer?: number;
  resumed?: boolean;
  movedAt?: number;
  abandonAt?: number;
}

export type UploadProgress = Record<string, UploadEntry>;

export async function readUploadProgress(db: ParleyDb): Promise<UploadProgress> {
  return (await getMeta(db, UPLOAD_PROGRESS_KEY)) ?? {};
}

export class UploadProgressWriter {
  private current: UploadProgress = {};
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private stored = false;
  private writing: Promise<void> = Promise.resolve();
  private trailing: unknown = null;
  private adopted = false;

  constructor(
    private readonly db: ParleyDb,
    private readonly clock: Clock,
    /** A transfer is abandoned after this long without a byte moving (the replay's stall time). */
    private readonly stallMs: number,
    private readonly intervalMs = 500,
  ) {}

  /** From the upload's progress events; writes now if the last write is old enough, else a little later. */
  report(fileId: string, sent: number, total: number, resumed = false, onServer?: number): void {
    const movedAt = this.clock.now();
    const entry: UploadEntry = { sent, total, movedAt, abandonAt: movedAt + this.stallMs };
    if (onServer !== undefined) entry.onServer = onServer;
    if (resumed) entry.resumed = true;
    this.current = { ...this.current, [fileId]: entry };
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

  /**
   * At the end of a sync: whatever was in flight has finished or failed. A POST /v1/files upload
   * starts over; a resumable one that was cut (its tus upload is still to be resumed: the outbox
   * keeps its URL) keeps its place on the row, as `resumed`, until its next attempt reports the
   * server's offset — the row reads "Resuming — 31 of 48 MB" through the wait, not nothing: what
   * the server confirmed, never the bytes that were in flight when it was cut. Nothing moves
   * until that attempt (no `movedAt`: not a stalled transfer).
   */
  async clear(): Promise<void> {
    if (this.trailing !== null) this.clock.clearTimeout(this.trailing);
    this.trailing = null;
    const kept: UploadProgress = {};
    const ids = Object.keys(this.current);
    if (ids.length > 0) {
      const resuming = await this.db.outbox
        .where('entityId')
        .anyOf(ids)
        .filter((op) => op.body.kind === 'file.upload' && op.state !== 'failed' && !!op.tus?.url)
        .toArray()
        .catch(() => []);
      for (const op of resuming) {
        const entry = this.current[op.entityId];
        if (!entry) continue;
        const held = entry.onServer ?? entry.sent;
        kept[op.entityId] = { sent: held, total: entry.total, onServer: held, resumed: true };
      }
    }
    this.current = kept;
    if (this.stored || Object.keys(kept).length > 0) this.write();
    await this.writing;
  }

  /**
   * Before this writer's first run: the row a worker left when it ended mid-transfer (a reload, a
   * crash) is taken over as if its run had ended (`clear`): a resumable upload keeps its place at
   * what the server confirmed, without `movedAt` (it never reads "Stalled" before it moves again);
   * anything else goes.
   */
  async adopt(): Promise<void> {
    if (this.adopted) return;
    this.adopted = true;
    const left = await readUploadProgress(this.db).catch((): UploadProgress => ({}));
    if (Object.keys(left).length === 0) return;
    this.current = { ...left, ...this.current };
    this.stored = true;
    await this.clear();
  }

  private write(): void {
    this.lastWriteAt = this.clock.now();
    const value = this.current;
    this.stored = Object.keys(value).length > 0;
    // In order, and never failing the upload: progress is only for show.
    this.writing = this.writing.then(() => setMeta(this.db, UPLOAD_PROGRESS_KEY, value)).catch(() => {});
  }
}
