// What the tus handlers of this folder share (tus-node-server's BaseHandler, store and locker in
// one): the upload records, the leases, where a finished upload goes, and the writing of bytes —
// PATCH and a creation with bytes both append. See README.md in this folder for why the protocol
// is ours and how bytes become a file.
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../../config';
import { ApiError, notFound } from '../../errors';
import type { ApiResult } from '../../result';
import type { AuditNote } from '../../domain/audit';
import type { Files } from '../../domain/files';
import type { IdempotencyStore } from '../../domain/idempotency';
import { nowSeconds } from '../../ids';
import type { BlobStore, BlobWrite } from '../../storage/blob-store';
import type { Db } from '../../storage/db';
import { inTransaction, isCommitOutcomeUnknown } from '../../storage/transaction';
import { UploadRecords, type UploadRow } from '../../storage/uploads';
import type { ApiRequest } from '../exchange';
import { fieldOf } from '../../../records';
import { chunkBytes } from '../chunks';
import { Digesting, discardBody, untilBroken, type Digest } from './body';
import { FileCompletion, type StagedUpload, type UploadCompletion } from './completion';
import { contentLength } from './headers';
import { Leases, type Lease, type LocalWriter } from './leases';
import { beyondLength, chunkLimit, inProgress, offsetMismatch, tooManyUploads } from './protocol';

/** How long a HEAD waits for a PATCH of this process, whose body has ended, to record its chunk. */
const RECORDING_WAIT_MS = 5_000;

export interface UploadsDeps {
  db: Db;
  /** Where the chunks go. */
  store: BlobStore;
  /** The embedded service's files: completion is Files.create (unless `completion` says otherwise). */
  files?: Files;
  /** Where a finished upload goes; default: a file of this service (`files`). */
  completion?: UploadCompletion;
  idempotency: IdempotencyStore;
  config: Pick<Config, 'maxUploadBytes' | 'uploads'>;
  /** A file was created: this process's live streams of that user look at the feed. */
  published(user: string): void;
  /** Removes queued blobs (the chunks of finished, deleted and expired uploads). */
  drainDeletions(): Promise<unknown>;
  /**
   * The file an upload made, as GET /v1/files/:id answers `request` (embedded mode): the body of a
   * completion asked for with `Prefer: return=representation`. Without it (proxy mode) completions
   * answer without a body, and a client reads the file with a GET.
   */
  fileObject?(request: ApiRequest, user: string, fileId: string): Promise<unknown>;
  log: Pick<Console, 'error'>;
}

/** Where an append ended: the offset reached, and the file once the last byte is stored. */
export interface Progress {
  offset: number;
  fileId: string | null;
}

export class TusUploads {
  readonly records: UploadRecords;
  readonly leases: Leases;
  readonly completion: UploadCompletion;

  constructor(readonly deps: UploadsDeps) {
    this.records = new UploadRecords(deps.db);
    this.leases = new Leases(this.records);
    if (deps.completion) this.completion = deps.completion;
    else if (deps.files) this.completion = new FileCompletion({ db: deps.db, store: deps.store, files: deps.files, published: deps.published });
    else throw new Error('TusUploads needs files or a completion');
  }

  /** The upload of this user (another user's: the same 404 as a missing one). */
  async get(user: string, id: string): Promise<UploadRow> {
    const row = await this.records.owned(user, id);
    if (!row) throw notFound('upload');
    return row;
  }

  /** When an upload written now expires unless written again. */
  expiresAt(now = nowSeconds()): number {
    return now + this.deps.config.uploads.expirySeconds;
  }

  /** Creation: the user's unfinished, unexpired uploads are fewer than MAX_OPEN_UPLOADS_PER_USER (429 otherwise). */
  async refuseOverOpenCap(trx: Db, user: string, now: number): Promise<void> {
    const max = this.deps.config.uploads.maxOpenPerUser;
    const open = await this.records.open(trx, user, now);
    if (open.count >= max) throw tooManyUploads(max, open.firstExpiry - now);
  }

  /**
   * The answer of the request that stored the last byte, asked with Prefer: return=representation:
   * the file itself as its body (a PATCH's 204 becomes 200), so the client needs no GET after it.
   * So does a repeat of that request; a replayed creation and a HEAD name the file by
   * Upload-File-Id alone.
   */
  async withFile(result: ApiResult, request: ApiRequest, user: string, fileId: string | null, prefer: boolean | undefined): Promise<ApiResult> {
    if (fileId === null || !this.deps.fileObject || !prefer) return result;
    // Deleted already (another request, between its making and this answer): the id alone.
    const file = await this.deps.fileObject(request, user, fileId).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'resource_missing') return null;
      throw error;
    });
    if (file === null) return result;
    return {
      status: result.status === 204 ? 200 : result.status,
      body: file,
      headers: { ...result.headers, 'Preference-Applied': 'return=representation' },
    };
  }

  /**
   * An upload whose bytes are all stored while a request of this process is still making its file
   * (a proxy delivering it upstream may take a while): waits for that request, so that a repeat of
   * the last request (its answer lost) or a HEAD tells the file rather than an end without one.
   */
  async settled(row: UploadRow): Promise<UploadRow> {
    const holder = this.leases.writers.get(row.id);
    if (row.file_id !== null || row.upload_offset !== row.upload_length || !holder) return row;
    await holder.released;
    return this.get(row.user_id, row.id);
  }

  /**
   * A HEAD while a PATCH of this process, whose body has ended (a client that closed its
   * connection mid-PATCH, typically, and now asks where to resume), is still recording its chunk:
   * waits for that (bounded), so the HEAD tells the offset the chunk reaches, not the one before.
   * Not for a PATCH still receiving (that may take minutes), nor for another user's upload.
   */
  async recorded(user: string, id: string): Promise<void> {
    const writer = this.leases.writers.get(id);
    if (!writer || !writer.bodyEnded()) return;
    await this.get(user, id);
    await Promise.race([writer.received, new Promise((resolve) => setTimeout(resolve, RECORDING_WAIT_MS).unref())]);
  }

  /**
   * Writes the request's bytes at `offset` (holding the upload's lease) and, once the last byte is
   * stored, creates the file. A finished upload answers a repeat of its last request (or any
   * request at its end) with its file, and never makes a second one.
   */
  async append(row: UploadRow, offset: number, request: ApiRequest): Promise<Progress> {
    const length = contentLength(request);
    const end = length === null ? null : offset + length;
    if (row.file_id === null && (offset === row.upload_length || end === row.upload_length)) row = await this.settled(row);
    if (row.file_id !== null) {
      if (offset === row.upload_length || end === row.upload_length) {
        discardBody(request.body);
        return { offset: row.upload_length, fileId: row.file_id };
      }
      throw offsetMismatch(row.upload_length);
    }
    let body = request.body;
    if (row.upload_offset === row.upload_length && offset !== row.upload_offset && end === row.upload_length) {
      // Every byte is stored but no file was made (the process making it stopped, or its maker
      // failed): a repeat of the last request makes it now, without taking its bytes again.
      discardBody(body);
      body = null;
      offset = row.upload_offset;
    }
    if (offset !== row.upload_offset) throw offsetMismatch(row.upload_offset);
    if (body !== null && length !== null && offset + length > row.upload_length) throw beyondLength();
    // At most MAX_UPLOAD_CHUNKS chunks (a blob each): with one slot left, the PATCH must bring the
    // upload to its end. (Counted before the lease: the count only changes with the offset.)
    const maxChunks = this.deps.config.uploads.maxChunks;
    const mustFinish = body !== null && length !== 0 && (await this.records.chunkCount(row.id)) >= maxChunks - 1;
    if (mustFinish && end !== null && end < row.upload_length) throw chunkLimit(maxChunks, row.upload_length - offset);
    const lease = await this.leases.claim(row.id, offset);
    const cancelled = { cancel: () => {} };
    let release!: () => void;
    let received!: () => void;
    const local: LocalWriter = {
      cancel: () => cancelled.cancel(),
      released: new Promise<void>((resolve) => (release = resolve)),
      received: new Promise<void>((resolve) => (received = resolve)),
      bodyEnded: () => !body || body.destroyed || body.readableEnded || fieldOf(fieldOf(body, 'socket'), 'readableEnded') === true,
    };
    const forget = this.leases.hold(row.id, local);
    // Renewed while bytes arrive and while the file is made (copying a large upload takes a while).
    const stopRenewing = this.leases.keep(row.id, lease);
    try {
      let reached = offset;
      let fileId: string | null = null;
      if (body && length !== 0) {
        cancelled.cancel = () => body.destroy();
        // The whole file in this one request: made straight from its blob, if every byte arrives.
        const whole =
          offset === 0 && length === row.upload_length && this.completion.completeWhole
            ? (blob: BlobWrite, digest: Digest) => this.completeWhole(row, lease, blob, digest, request)
            : undefined;
        try {
          ({ reached, fileId } = await this.receive(row, offset, body, lease, whole, mustFinish, request.audit));
        } finally {
          received(); // its chunk is recorded (or its file made), or its blob removed
        }
      }
      received();
      if (fileId === null && reached === row.upload_length) fileId = await this.complete(row, lease, request);
      return { offset: reached, fileId };
    } finally {
      stopRenewing();
      await lease.release().catch((error) => this.deps.log.error('[parley] releasing an upload lease failed:', error));
      forget();
      received();
      release();
    }
  }

  /**
   * Streams the body into one new chunk blob; records it and moves the offset. `whole`: the body
   * is the whole upload; when every byte of it arrived, the file is made from the blob (`fileId`)
   * instead of recording a chunk — which is still recorded if that fails.
   */
  private async receive(
    row: UploadRow,
    offset: number,
    body: Readable,
    lease: Lease,
    whole?: (blob: BlobWrite, digest: Digest) => Promise<string>,
    mustFinish = false,
    audit?: AuditNote,
  ): Promise<{ reached: number; fileId: string | null }> {
    const room = row.upload_length - offset;
    let size = 0;
    let overflow = false;
    const digesting = whole ? new Digesting() : null;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        if (size + chunk.length > room) {
          overflow = true;
          return done(beyondLength());
        }
        size += chunk.length;
        digesting?.take(chunk);
        done(null, chunk);
      },
    });
    const blob = this.deps.store.begin();
    try {
      // A body that breaks (the client went away, the idle timeout) ends the chunk where it broke.
      await pipeline(Readable.from(untilBroken(body)), tap, blob.sink);
    } catch (error) {
      await blob.abort();
      if (overflow) throw beyondLength();
      throw error; // the store's failure (507 when full)
    }
    if (size === 0) {
      await blob.abort();
      return { reached: offset, fileId: null };
    }
    if (mustFinish && size < room) {
      // The upload's last chunk slot takes only the rest of it: these bytes are not kept.
      await blob.abort();
      throw chunkLimit(this.deps.config.uploads.maxChunks, room);
    }
    await blob.finish();
    if (whole && digesting && size === room) {
      let failure: unknown;
      try {
        return { reached: offset + size, fileId: await whole(blob, digesting.digest()) };
      } catch (error) {
        // The file row may point at these bytes: leave them (the orphan sweep removes them if not).
        if (isCommitOutcomeUnknown(error)) throw error;
        failure = error;
      }
      // Not made (its conversation gone, the upload deleted, the database failing): the bytes are
      // kept as the upload's chunk, so that a repeat makes the file without taking them again (or,
      // the upload gone, removed). The answer is the completion's failure either way.
      await this.record(row, offset, size, blob, lease).catch(() => {});
      throw failure;
    }
    await this.record(row, offset, size, blob, lease, audit);
    return { reached: offset + size, fileId: null };
  }

  /** The chunk's row and the new offset, together, only while this request still holds the lease. */
  private async record(row: UploadRow, offset: number, size: number, blob: BlobWrite, lease: Lease, audit?: AuditNote): Promise<void> {
    try {
      await inTransaction(this.deps.db, async (trx) => {
        if (!(await this.records.advance(trx, row.id, lease.token, offset, offset + size, this.expiresAt()))) {
          const still = await this.records.leaseOf(trx, row.id);
          throw still ? inProgress(still.writer_until) : notFound('upload'); // lease lost (lapsed), or the upload was deleted
        }
        await this.records.addChunk(trx, { upload_id: row.id, upload_offset: offset, size, storage_key: blob.key });
        // The PATCH's audit row, with its bytes (not a creation's: its row went with the upload's).
        if (audit && !audit.recorded) await audit.record(trx, { status: 204 });
      });
      if (audit) audit.recorded = true;
    } catch (error) {
      // Not when the commit's outcome is unknown: the chunk row may point at these bytes (the
      // orphan sweep removes them if it does not).
      if (!isCommitOutcomeUnknown(error)) await blob.abort();
      throw error;
    }
  }

  /** Every byte arrived in one request, into `blob`: the strategy makes the file from it, once. */
  private async completeWhole(row: UploadRow, lease: Lease, blob: BlobWrite, digest: Digest, request: ApiRequest): Promise<string> {
    const staged: StagedUpload = {
      row,
      // eslint-disable-next-line require-yield
      async *bytes(): AsyncGenerator<Buffer> {
        throw new Error('a whole upload is made from its blob, not read back');
      },
      finish: (trx, fileId) => this.finish(trx, row, lease, fileId),
    };
    return this.completion.completeWhole!(staged, blob, digest, request);
  }

  /** Marks the upload finished with `fileId` and drops its chunks, only while `lease` holds it. */
  private async finish(trx: Db, row: UploadRow, lease: Lease, fileId: string): Promise<void> {
    // Kept for as long as an unfinished upload would be: a later HEAD still tells the file.
    const done = await this.records.finish(trx, row.id, lease.token, fileId, row.upload_length, this.expiresAt());
    if (!done) throw inProgress(); // not reached while the lease holds; rolls the file back if it did
  }

  /** All bytes are stored: the strategy makes the file, once. Returns its id. */
  async complete(row: UploadRow, lease: Lease, request: ApiRequest): Promise<string> {
    const chunks = await this.records.chunks(row.id);
    let expected = 0;
    for (const chunk of chunks) {
      if (chunk.upload_offset !== expected) throw new Error(`upload ${row.id}: chunk at ${chunk.upload_offset}, expected ${expected}`);
      expected += chunk.size;
    }
    if (expected !== row.upload_length) throw new Error(`upload ${row.id}: ${expected} bytes stored of ${row.upload_length}`);
    const store = this.deps.store;
    const staged: StagedUpload = {
      row,
      async *bytes() {
        for (const chunk of chunks) for await (const piece of await store.open(chunk.storage_key)) yield chunkBytes(piece);
      },
      finish: (trx, fileId) => this.finish(trx, row, lease, fileId),
    };
    try {
      return await this.completion.complete(staged, request);
    } finally {
      await this.drain();
    }
  }

  /** A pass of the blob deletion queue; its failure is logged (the periodic pass retries). */
  async drain(): Promise<void> {
    await this.deps.drainDeletions().catch((error) => this.deps.log.error('[parley] a blob deletion pass failed:', error));
  }

  /** Ends this process's writer of upload `id`, if any, and waits until its body's bytes are recorded or removed. */
  async endWriter(id: string): Promise<void> {
    const writer = this.leases.writers.get(id);
    if (!writer) return;
    writer.cancel();
    await writer.received;
  }

  /**
   * After a deletion that may have taken uploads with it (a conversation's: its uploads go by
   * trigger, migration 0005): a PATCH of this process still receiving bytes for an upload that is
   * gone is ended, and its unrecorded chunk removed, before the deletion is answered. (One on
   * another instance removes its chunk when its body ends: its upload's row is gone.)
   */
  async endDeleted(): Promise<void> {
    const ids = [...this.leases.writers.keys()];
    if (ids.length === 0) return;
    const live = await this.records.existing(ids);
    await Promise.all(ids.filter((id) => !live.has(id)).map((id) => this.endWriter(id)));
  }

  /**
   * Removes uploads whose expiry has passed at `now` (Unix seconds): unfinished ones with their
   * bytes (queued, then drained), finished ones' records. Not while a live PATCH holds one.
   */
  async expire(now = nowSeconds()): Promise<number> {
    const gone = await this.records.deleteExpired(now);
    if (gone > 0) await this.deps.drainDeletions();
    return gone;
  }
}
