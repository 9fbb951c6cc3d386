// Where a finished upload goes. The protocol (the handlers of this folder) is the same in every
// mode; what happens once every byte is stored is an injected UploadCompletion. Embedded (the
// default, FileCompletion below): a file of this service, made exactly as POST /v1/files makes it.
// Proxy mode (lib/proxy/uploads.ts): one POST /v1/files to the upstream.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ID_PATTERN } from '../../../schemas';
import { notFound } from '../../errors';
import { recordAudit } from '../../domain/audit';
import type { Files } from '../../domain/files';
import type { ReceivedUpload } from '../../domain/inputs';
import type { BlobStore, BlobWrite } from '../../storage/blob-store';
import type { Db } from '../../storage/db';
import { inTransaction, isCommitOutcomeUnknown } from '../../storage/transaction';
import type { UploadRow } from '../../storage/uploads';
import type { ApiRequest } from '../exchange';
import { Digesting, type Digest } from './body';

export type { Digest } from './body';

export interface UploadCompletion {
  /**
   * Every check of POST /v1/files on the fields and the file name that needs no bytes (throws the
   * contract's ApiError, the file name's under param `file` as POST /v1/files does).
   */
  validate(upload: ReceivedUpload): { conversation_id?: string; message_id?: string; filename: string };
  /** The conversation (or message) the file will go to exists and is the user's (404 otherwise). */
  checkTarget(request: ApiRequest, user: string, target: { conversation_id?: string; message_id?: string }): Promise<void>;
  /** In the creation's transaction: anything the strategy keeps beside the upload's record. */
  created?(trx: Db, id: string, request: ApiRequest): Promise<void>;
  /**
   * All bytes are stored (`staged`): makes the file, once, and returns its id. It must call
   * `staged.finish` (in the transaction that makes the file, or once it is made elsewhere).
   * `request` is the one that stored the last byte (its token).
   */
  complete(staged: StagedUpload, request: ApiRequest): Promise<string>;
  /**
   * Optional: every byte arrived in one request (a creation with the whole file, or one PATCH from
   * 0 to the end) into `blob`, finished, with its digest taken on the way. Makes the file from that
   * blob as it is — no chunk is recorded, nothing is copied — once, calling `staged.finish` in the
   * transaction that makes it. On failure it leaves the blob alone: the caller keeps it as the
   * upload's chunk (a repeat then makes the file from it), or removes it.
   */
  completeWhole?(staged: StagedUpload, blob: BlobWrite, digest: Digest, request: ApiRequest): Promise<string>;
}

export interface StagedUpload {
  row: UploadRow;
  /** The upload's bytes, in order, read from the chunks (each call reads them again). */
  bytes(): AsyncGenerator<Buffer>;
  /**
   * Marks the upload finished with `fileId` and drops its chunks (their bytes queued for
   * removal), in `trx`; throws upload_in_progress (rolling `trx` back) if this request no longer
   * holds the upload.
   */
  finish(trx: Db, fileId: string): Promise<void>;
}

/** What the received-file shape needs of a tus upload (its name and declared type; bytes when there are). */
export function receivedFile(rawFilename: string, declaredType: string | undefined, blob: BlobWrite | null, size: number, digest: Digest) {
  return { fieldName: 'file', rawFilename, declaredType, blob: blob as BlobWrite, size, sha256: digest.sha256, head: digest.head };
}

export interface FileCompletionDeps {
  db: Db;
  store: BlobStore;
  files: Files;
  /** A file was created: this process's live streams of that user look at the feed. */
  published(user: string): void;
}

/** The embedded service's completion: the upload becomes a file of this service, as POST /v1/files makes it. */
export class FileCompletion implements UploadCompletion {
  constructor(private readonly deps: FileCompletionDeps) {}

  validate(upload: ReceivedUpload) {
    return this.deps.files.validateUpload(upload);
  }

  /** The conversation (or message) the file will go to exists and is the user's. */
  async checkTarget(_request: ApiRequest, user: string, { conversation_id: conversationId, message_id: messageId }: { conversation_id?: string; message_id?: string }): Promise<void> {
    const { db } = this.deps;
    if (conversationId !== undefined) {
      const found =
        ID_PATTERN.test(conversationId) && (await db.selectFrom('conversations').select('id').where('id', '=', conversationId).where('user_id', '=', user).executeTakeFirst());
      if (!found) throw notFound('conversation', 'conversation_id');
    } else {
      const found = messageId !== undefined && ID_PATTERN.test(messageId) && (await db.selectFrom('messages').select('id').where('id', '=', messageId).where('user_id', '=', user).executeTakeFirst());
      if (!found) throw notFound('message', 'message_id');
    }
  }

  /** Concatenates the chunks into one new blob (hashing and sniffing on the way); one file, once. */
  async complete(staged: StagedUpload, request?: ApiRequest): Promise<string> {
    const digesting = new Digesting();
    const blob = this.deps.store.begin();
    try {
      await pipeline(Readable.from(staged.bytes()), digesting.tap(), blob.sink);
      await blob.finish();
    } catch (error) {
      await blob.abort();
      throw error;
    }
    try {
      return await this.completeWhole(staged, blob, digesting.digest(), request);
    } catch (error) {
      if (!isCommitOutcomeUnknown(error)) await blob.abort();
      throw error;
    }
  }

  /** The file from `blob` (all of the upload's bytes), as POST /v1/files makes it; one file, once. */
  async completeWhole(staged: StagedUpload, blob: BlobWrite, digest: Digest, request?: ApiRequest): Promise<string> {
    const { row } = staged;
    const fields: Record<string, string> = row.conversation_id !== null ? { conversation_id: row.conversation_id } : row.message_id !== null ? { message_id: row.message_id } : {};
    const upload: ReceivedUpload = { fields, file: receivedFile(row.filename, row.file_type ?? undefined, blob, row.upload_length, digest) };
    const fileId = await inTransaction(this.deps.db, async (trx) => {
      const file = await this.deps.files.create(trx, row.user_id, upload, '');
      await staged.finish(trx, file.id);
      // The file the upload became: its own audit row, with it.
      const audit = request?.audit;
      if (audit) await recordAudit(trx, { ...audit.entry, action: 'create', objectType: 'file', objectId: file.id, conversationId: null, outcome: 201 });
      return file.id;
    });
    this.deps.published(row.user_id);
    return fileId;
  }
}
