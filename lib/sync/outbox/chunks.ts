// The queued bytes of an upload (the `uploadChunks` table): stored with the upload's operation,
// read when it is sent (whole for POST /v1/files, a PATCH's range for tus), dropped with the
// operation (answered, cancelled, discarded). The outbox reaches the table only here, so how the
// bytes are stored is decided in one file. (Outside the outbox: the viewer reads a pending
// upload's bytes, lib/view/viewer; sign-out counts them, session/removal.ts.)
import type { ParleyDb } from '../mirror/db';

/** Bytes are stored in chunks of this size: big enough to be few, small enough for iOS. */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;

/** How many chunks `byteLength` bytes are stored in (an empty file still has one). */
export function chunkCountOf(byteLength: number): number {
  return Math.max(1, Math.ceil(byteLength / UPLOAD_CHUNK_BYTES));
}

/** Stores an upload's bytes (inside the caller's transaction, which must include `uploadChunks`). */
export async function storeChunks(db: ParleyDb, opId: string, buffer: ArrayBuffer): Promise<void> {
  const chunks = [];
  for (let index = 0; index < chunkCountOf(buffer.byteLength); index++) {
    const start = index * UPLOAD_CHUNK_BYTES;
    chunks.push({ opId, index, bytes: buffer.slice(start, start + UPLOAD_CHUNK_BYTES) });
  }
  await db.uploadChunks.bulkAdd(chunks);
}

/** Drops an upload's bytes (its operation was answered, cancelled or discarded). */
export async function dropChunks(db: ParleyDb, opId: string): Promise<void> {
  await db.uploadChunks.where('opId').equals(opId).delete();
}

/** All of an upload's bytes, in order; null when any chunk is missing (they were dropped). */
export async function readChunks(db: ParleyDb, opId: string, chunkCount: number): Promise<ArrayBuffer[] | null> {
  const chunks = await db.uploadChunks.where('opId').equals(opId).sortBy('index');
  return chunks.length === chunkCount ? chunks.map((chunk) => chunk.bytes) : null;
}

/** An upload's stored bytes, read a range of chunks at a time (a tus PATCH's worth). */
export interface StoredChunks {
  /** The size of every chunk but the last. */
  chunkBytes: number;
  /** Chunks `from` to `to` (inclusive), in order; null when any is missing (the user cancelled). */
  read(from: number, to: number): Promise<Array<{ index: number; bytes: ArrayBuffer }> | null>;
}

/** The stored bytes of an upload, or null when not all `chunkCount` chunks are there. */
export async function openStoredChunks(db: ParleyDb, opId: string, chunkCount: number): Promise<StoredChunks | null> {
  const stored = await db.uploadChunks.where('opId').equals(opId).count();
  if (stored !== chunkCount) return null;
  const first = await db.uploadChunks.get({ opId, index: 0 } as never);
  if (!first) return null;
  return {
    chunkBytes: Math.max(1, first.bytes.byteLength),
    async read(from, to) {
      const chunks = await db.uploadChunks.where('[opId+index]').between([opId, from], [opId, to], true, true).toArray();
      if (chunks.length !== to - from + 1) return null;
      return chunks.sort((a, b) => a.index - b.index);
    },
  };
}
