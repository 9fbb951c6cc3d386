// Where file bytes live: one small interface, with a local-disk implementation (the default,
// disk-blob-store.ts) and room for an object store beside it. The service never touches paths or
// buckets, only keys.
//
// The life of a blob: `begin()` hands out a fresh key and a sink; the upload streams into the sink;
// `finish()` makes the bytes durable under the key (disk: fsync, rename, fsync the directory; an
// object store: complete the upload). Only then does the database row that points at the key
// commit, so nothing a user can see ever points at missing or partial bytes. If the row does not
// commit, `abort()` removes the bytes again. A crash between the two leaves bytes without a row,
// which `sweep` removes later.
import type { Readable, Writable } from 'node:stream';

/** Bytes being received for one new blob. */
export interface BlobWrite {
  readonly key: string;
  /** Where the bytes are written; honours backpressure. Ends when the upload's bytes end. */
  readonly sink: Writable;
  /** After the sink has finished: make the bytes durable and readable under `key`. */
  finish(): Promise<void>;
  /** Drops whatever was written, finished or not. Never rejects; safe to call twice. */
  abort(): Promise<void>;
}

/** An inclusive byte range, as in HTTP Range. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredBlob {
  key: string;
  /** Last modification (ms since epoch): the sweep leaves young blobs alone (an upload may be about to commit its row). */
  modifiedAt: number;
}

export interface BlobStore {
  begin(): BlobWrite;
  /** The bytes of a stored blob (or a range of them). */
  open(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes a stored blob; removing a missing one is not an error. */
  remove(key: string): Promise<void>;
  /** Every stored blob. */
  list(): AsyncIterable<StoredBlob>;
  /** Removes what unfinished writes left behind (temporary files, incomplete uploads). */
  removeUnfinished(olderThanMs: number): Promise<number>;
  /** One cheap call that fails when the store cannot be used (readiness). */
  check(): Promise<void>;
}

/**
 * Removes stored blobs no row points at. Blobs younger than `graceMs` are kept: their upload may
 * still be about to commit its row (in this process or, with a shared store, in another one).
 */
export async function sweepOrphans(
  store: BlobStore,
  isLive: (key: string) => boolean | Promise<boolean>,
  graceMs: number,
  now = Date.now(),
): Promise<number> {
  let removed = 0;
  for await (const blob of store.list()) {
    if (now - blob.modifiedAt < graceMs) continue;
    if (await isLive(blob.key)) continue;
    await store.remove(blob.key);
    removed++;
  }
  return removed;
}
