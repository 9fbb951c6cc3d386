// The queued bytes of an upload (the `uploadChunks` table): stored with the upload's operation,
// read when it is sent (whole for POST /v1/files, a PATCH's range for tus), dropped with the
// operation (answered, cancelled, discarded). The table is reached only here, so how the bytes are
// stored (chunked; sealed with WebCrypto on a device with a lock) is decided in one file. (Sign-out
// also counts them, session/removal.ts; the viewer reads a pending upload's bytes through
// `queuedUploadBytes`.)
import type { ParleyDb } from '../mirror/db';
import { openBytes, type SealedBytes, sealBytes } from '../mirror/seal';

/** Bytes are stored in chunks of this size: big enough to be few, small enough for iOS. */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;

/** How many chunks `byteLength` bytes are stored in (an empty file still has one). */
export function chunkCountOf(byteLength: number): number {
  return Math.max(1, Math.ceil(byteLength / UPLOAD_CHUNK_BYTES));
}

/** The table's name, which the sealed bytes are bound to. */
const CONTEXT = 'uploadChunks';

/** An upload's bytes cut into chunks and sealed on a device with a lock: before the transaction that stores them. */
export async function prepareChunks(buffer: ArrayBuffer): Promise<Array<ArrayBuffer | SealedBytes>> {
  const chunks = [];
  for (let index = 0; index < chunkCountOf(buffer.byteLength); index++) {
    const start = index * UPLOAD_CHUNK_BYTES;
    chunks.push(sealBytes(buffer.slice(start, start + UPLOAD_CHUNK_BYTES), CONTEXT));
  }
  return Promise.all(chunks);
}

/** Stores an upload's prepared chunks (inside the caller's transaction, which must include `uploadChunks`). */
export async function storeChunks(db: ParleyDb, opId: string, chunks: Array<ArrayBuffer | SealedBytes>): Promise<void> {
  await db.uploadChunks.bulkAdd(chunks.map((bytes, index) => ({ opId, index, bytes })));
}

/** A stored chunk's plain bytes (outside any transaction: opening sealed bytes awaits WebCrypto). */
export function chunkBytes(stored: ArrayBuffer | SealedBytes): Promise<ArrayBuffer> {
  return openBytes(stored, CONTEXT);
}

/** Drops the bytes of uploads (their operations were answered, cancelled or discarded). */
export async function dropChunks(db: ParleyDb, opIds: readonly string[]): Promise<void> {
  await db.uploadChunks.where('opId').anyOf([...opIds]).delete();
}

/**
 * Drops queued bytes whose operation is no longer in the outbox: an upload answered and recorded
 * by a replay that stopped (closed, crashed) before it dropped them (replay.ts). Bytes and their
 * operation are stored in one transaction, so nothing else leaves bytes without an operation.
 */
export async function dropOrphanChunks(db: ParleyDb): Promise<void> {
  // Read first (an operation that has gone never comes back, so what is orphaned stays so): no
  // read-write transaction at all in the usual case, where there are none.
  const orphans = await db.transaction('r', db.outbox, db.uploadChunks, async () => {
    const owners = (await db.uploadChunks.orderBy('opId').uniqueKeys()).filter((key) => typeof key === 'string');
    if (owners.length === 0) return [];
    const present = new Set(await db.outbox.where('id').anyOf(owners).keys());
    return owners.filter((opId) => !present.has(opId));
  });
  if (orphans.length > 0) await db.transaction('rw', db.uploadChunks, () => dropChunks(db, orphans));
}

/** All of an upload's bytes, in order; null when any chunk is missing (they were dropped). */
export async function readChunks(db: ParleyDb, opId: string, chunkCount: number): Promise<ArrayBuffer[] | null> {
  const chunks = await db.uploadChunks.where('opId').equals(opId).sortBy('index');
  return chunks.length === chunkCount ? Promise.all(chunks.map((chunk) => chunkBytes(chunk.bytes))) : null;
}

/** An upload's stored bytes, read a range of chunks at a time (a tus PATCH's worth). */
export interface StoredChunks {
  /** The size of every chunk but the last. */
  chunkBytes: number;
  /** Chunks `from` to `to` (inclusive), in order; null when any is missing (the user cancelled). */
  read(from: number, to: number): Promise<Array<{ index: number; bytes: ArrayBuffer }> | null>;
}

/**
 * The stored bytes of an upload of `size` bytes, or null when not all `chunkCount` chunks are
 * there. Chunks are cut at UPLOAD_CHUNK_BYTES (prepareChunks), so their size is known without
 * reading one (a chunk is a megabyte read from disk); a chunk found of another size is refused
 * rather than sent at the wrong offset.
 */
export async function openStoredChunks(db: ParleyDb, opId: string, size: number, chunkCount: number): Promise<StoredChunks | null> {
  const stored = await db.uploadChunks.where('opId').equals(opId).count();
  if (stored !== chunkCount) return null;
  const cutBytes = chunkCount === 1 ? Math.max(1, size) : UPLOAD_CHUNK_BYTES;
  return {
    chunkBytes: cutBytes,
    async read(from, to) {
      const chunks = await db.uploadChunks.where('[opId+index]').between([opId, from], [opId, to], true, true).toArray();
      if (chunks.length !== to - from + 1) return null;
      chunks.sort((a, b) => a.index - b.index);
      return Promise.all(
        chunks.map(async ({ index, bytes }) => {
          const expected = index < chunkCount - 1 ? cutBytes : size - index * cutBytes;
          if (bytes.byteLength !== expected) throw new Error(`queued chunk ${index} of this upload holds ${bytes.byteLength} bytes where ${expected} were cut`);
          return { index, bytes: await chunkBytes(bytes) };
        }),
      );
    },
  };
}

/** The bytes of a file's queued upload, in order, or null when it has none (viewer, thumbnails). */
export async function queuedUploadBytes(db: ParleyDb, fileId: string): Promise<ArrayBuffer[] | null> {
  const op = await db.outbox.where('entityId').equals(fileId).filter((o) => o.body.kind === 'file.upload').first();
  if (!op) return null;
  const chunks = await db.uploadChunks.where('opId').equals(op.id).sortBy('index');
  return chunks.length > 0 ? Promise.all(chunks.map((chunk) => chunkBytes(chunk.bytes))) : null;
}
