// Resumable uploads: tus 1.0.0 (core, creation, creation-with-upload, termination, expiration) at
// /v1/uploads, part of /v1 like any other route: the same bearer authentication and rate limit
// (ApiService.route() authenticates before handing the request here; OPTIONS alone needs no token,
// because tus clients probe it before they have one), the contract's error shape, the request log.
//
// Why a small handler of our own over our own BlobStore, and not @tus/server or its stores
// (@tus/file-store, @tus/s3-store, looked at in their 2.x versions):
// - The contract's behaviour must be exact: @tus/server answers its errors as text bodies of its
//   own, authenticates through hooks, keeps upload ownership nowhere, and serialises PATCHes with
//   an in-process locker — none of which holds for several instances on one database.
// - An upload's state has to live in the database (several instances continue each other's
//   uploads); the stores keep their own state (a .json beside the file; an .info object in the
//   bucket plus an in-process cache) that would have to be kept in step with ours.
// - @tus/s3-store needs ListParts on every write and HEAD, which the S3-compatible test server
//   (s3rver 3.7) does not implement; @tus/file-store never fsyncs.
// - The request that stores the last byte must create the file as POST /v1/files does: a SHA-256
//   of all the bytes and the first bytes for sniffing, and the bytes under files/<key> where the
//   service's BlobStore keeps them (and its orphan sweep and abort logic look after them). Node
//   cannot carry a hash's state from one request (or instance) to the next, so completion reads
//   the bytes once anyway; copying them into a fresh blob on that same read is what makes the
//   result an ordinary file.
// So each PATCH streams its bytes into one blob of the service's BlobStore (disk: fsync + rename;
// S3: one object, a multipart upload when large, aborted by the store if the write fails) and
// records it as a chunk row, in the same transaction that moves the upload's offset. A client
// that goes away mid-PATCH keeps what arrived (the chunk ends there), which is the point of tus on
// a weak network. Completion concatenates the chunks into one new blob (hashing and sniffing on
// the way), inserts the files row exactly as POST /v1/files does (Files.create: type, message,
// last_active_at, events by trigger) and marks the upload finished, once (a conditional update on
// `file_id IS NULL`); the chunk rows go in the same transaction, their blobs queued for removal
// by the trigger that queues deleted files' bytes (migration 0004_uploads). A request that carries
// the whole upload (a creation with every byte — what the app sends for a small file — or one
// PATCH from 0 to the end) hashes and sniffs as it receives, and its blob becomes the file's as it
// is: no chunk row, no second copy (UploadCompletion.completeWhole). Should that fail, its blob is
// recorded as the upload's chunk all the same, so no byte that arrived is lost.
//
// The protocol part (this class: creation, HEAD, PATCH, DELETE, leases, chunks, expiry) is the
// same wherever it runs; where a finished upload goes is an injected UploadCompletion. Embedded
// (the default, FileCompletion below): a file of this service, as just described. Proxy mode
// (lib/proxy/uploads.ts): the chunks are staged in the proxy's own DATA_DIR and the completion is
// one POST /v1/files to the upstream. A repeat of the last request while the file is being made
// by this process waits for it (a delivery upstream may take a while), and one that finds every
// byte stored but no file (its maker stopped) makes the file then, without taking the bytes again.
//
// One PATCH at a time per upload: a lease in the upload's row (`writer`, `writer_until`), taken
// by a conditional update on the expected offset and renewed while bytes arrive; the offset moves
// only by an update that still holds the lease. A PATCH that finds the lease held by a request of
// this same process (typically one whose connection died unnoticed) ends that request first, as
// @tus/server's locker does; one held by another instance answers 409 upload_in_progress with
// Retry-After (the lease lapses within LEASE_MS of that instance's death).
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Config } from '../../config';
import { ID_PATTERN } from '../../schemas';
import { ApiError, invalid, methodNotAllowed, missing, notFound } from '../errors';
import type { ApiResult } from '../result';
import type { Files } from '../domain/files';
import type { IdempotencyStore } from '../domain/idempotency';
import { newId, nowSeconds } from '../ids';
import { refuseQueryParameters } from '../domain/pagination';
import type { BlobStore, BlobWrite } from '../storage/blob-store';
import type { Db, Tables } from '../storage/db';
import { inTransaction, isCommitOutcomeUnknown } from '../storage/transaction';
import { recordAudit, type AuditNote } from '../domain/audit';
import type { ApiRequest } from './exchange';
import type { ReceivedUpload } from './upload';

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,expiration';
const OFFSET_STREAM = 'application/offset+octet-stream';
/** How long a PATCH's hold on an upload lasts without renewal (an instance that died lets go within this). */
export const LEASE_MS = 30_000;
const RENEW_MS = 10_000;
/** How long a PATCH waits for a request of this process that held the upload to let go. */
const TAKEOVER_WAIT_MS = 10_000;
const HEAD_BYTES = 512;
/** A refused request's body is read and thrown away up to this much, so the client hears the answer. */
const DISCARD_LIMIT = 64 * 1024 * 1024;
/** Metadata keys the service reads; others (tus-js-client and Uppy send name, type, relativePath …) are ignored. */
const METADATA_KEYS = new Set(['filename', 'filetype', 'conversation_id', 'message_id']);

/** An upload's record (migration 0004_uploads). */
export interface UploadRow {
  id: string;
  user_id: string;
  conversation_id: string | null;
  message_id: string | null;
  filename: string;
  file_type: string | null;
  upload_length: number;
  upload_offset: number;
  file_id: string | null;
  writer: string | null;
  /** ms since epoch */
  writer_until: number | null;
  created_at: number;
  expires_at: number;
}

interface ChunkRow {
  upload_id: string;
  upload_offset: number;
  size: number;
  storage_key: string;
}

type UploadDb = Kysely<Tables & { uploads: UploadRow; upload_chunks: ChunkRow }>;
const withUploads = (db: Db) => db as unknown as UploadDb;

const TUS_HEADERS = { 'Tus-Resumable': TUS_VERSION };
const offsetMismatch = (offset: number) =>
  new ApiError('upload_offset_mismatch', `Upload-Offset does not match the upload's offset (${offset}); ask with HEAD and resume from there`, 'Upload-Offset', {}, {
    'Upload-Offset': String(offset),
  });
/** `writerUntil`: when the holder's lease lapses unless renewed (ms; unknown: a whole lease from now). */
const inProgress = (writerUntil?: number | null) =>
  new ApiError('upload_in_progress', 'Another request is writing to this upload; retry after Retry-After (HEAD tells the offset)', undefined, {}, {
    'Retry-After': String(Math.max(1, Math.ceil(((writerUntil ?? Date.now() + LEASE_MS) - Date.now()) / 1000))),
  });
const tooManyUploads = (max: number, retryAfter: number) =>
  new ApiError(
    'too_many_uploads',
    `You have ${max} unfinished uploads, the most this server keeps open for one user: finish or DELETE one, or retry after Retry-After ` +
      '(an abandoned upload counts until it expires, Upload-Expires)',
    undefined,
    {},
    { 'Retry-After': String(Math.max(1, retryAfter)) },
  );
const chunkLimit = (max: number, left: number) =>
  new ApiError(
    'upload_chunk_limit',
    `This upload holds ${max - 1} pieces, one less than the most one upload may (${max}): the next PATCH must carry every byte left (${left}), ` +
      'in one request; bytes of one that ends short are not kept',
    'Content-Length',
  );
/** How long a HEAD waits for a PATCH of this process, whose body has ended, to record its chunk. */
const RECORDING_WAIT_MS = 5_000;
const expired = () => new ApiError('upload_expired', 'This upload expired; its bytes were removed. Start a new upload');
const uploadTooLarge = (max: number, param: string) =>
  new ApiError('file_too_large', `The file exceeds the upload limit of ${max} bytes`, param);
const beyondLength = () => new ApiError('file_too_large', 'The body goes beyond the Upload-Length declared at creation', 'Upload-Length');

/** `Prefer: return=representation` (RFC 7240): the completion answers with the file itself. */
function prefersRepresentation(request: ApiRequest): boolean {
  return /(?:^|[,;\s])return\s*=\s*"?representation"?(?:$|[,;\s])/i.test(request.header('prefer') ?? '');
}

/** RFC 9110 HTTP-date. */
const httpDate = (seconds: number) => new Date(seconds * 1000).toUTCString();

function integerHeader(request: ApiRequest, name: string, required: boolean): number | null {
  const raw = request.header(name.toLowerCase());
  if (raw === null) {
    if (required) throw missing(name, `The ${name} header is required`);
    return null;
  }
  if (!/^\d{1,16}$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw.trim()))) throw invalid(name, `${name} must be a non-negative integer`);
  return Number(raw.trim());
}

/** `Upload-Metadata: key base64,key base64,key` → decoded values (tus 1.0.0, creation). */
export function parseMetadata(raw: string | null): Map<string, string> {
  const values = new Map<string, string>();
  if (raw === null || raw.trim() === '') return values;
  const bad = (why: string) => invalid('Upload-Metadata', `Upload-Metadata ${why}`);
  for (const pair of raw.split(',')) {
    const [key, value, ...rest] = pair.trim().split(' ');
    if (!key || rest.length > 0 || !/^[\x21-\x7e]+$/.test(key)) throw bad('is a comma-separated list of "key base64-value" pairs');
    if (values.has(key)) throw bad(`has ${key} more than once`);
    if (value !== undefined && !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)) {
      throw bad(`value of ${key} is not base64`);
    }
    let decoded: string;
    try {
      // ignoreBOM: a leading U+FEFF is the value's, not dropped — a filename that starts with one is
      // refused as POST /v1/files refuses it.
      decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(value ?? '', 'base64'));
    } catch {
      throw bad(`value of ${key} is not UTF-8`);
    }
    values.set(key, decoded);
  }
  return values;
}

/** Reads and throws away what the client is still sending (bounded), so that it hears the answer. */
export function discardBody(body: Readable | null): void {
  if (!body || body.destroyed || body.readableEnded) return;
  let seen = 0;
  body.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DISCARD_LIMIT) body.destroy();
  });
  body.on('error', () => {});
  body.resume();
}

/** The bytes of a request body, until it ends or breaks: a broken body ends what was received so far. */
async function* untilBroken(body: Readable, state: { broken: boolean }): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) yield chunk as Buffer;
  } catch {
    state.broken = true;
  }
}

/** Where a finished upload goes: the protocol part (TusUploads) is the same in every mode. */
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

/** What completion needs of the bytes besides the bytes: their SHA-256 and the first ones, for sniffing. */
export interface Digest {
  sha256: string;
  head: Uint8Array;
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

interface Lease {
  token: string;
  release(): Promise<void>;
}

/** A PATCH of this process writing to an upload: ended by a later PATCH of the same upload. */
interface LocalWriter {
  cancel(): void;
  released: Promise<void>;
  /**
   * Settles once its body's chunk is recorded or its blob removed (at once when it stores no
   * bytes): what a termination waits for, so that no byte of the upload outlives it.
   */
  received: Promise<void>;
  /** Its body has ended (all of it, or cut short): what is left is recording its chunk. */
  bodyEnded(): boolean;
}

export class TusUploads {
  private readonly db: UploadDb;
  private readonly writers = new Map<string, LocalWriter>();
  private readonly completion: UploadCompletion;

  constructor(private readonly deps: UploadsDeps) {
    this.db = withUploads(deps.db);
    if (deps.completion) this.completion = deps.completion;
    else if (deps.files) this.completion = new FileCompletion(deps, deps.files);
    else throw new Error('TusUploads needs files or a completion');
  }

  /** OPTIONS: what this server speaks. No token needed: tus clients probe it before anything else. */
  options(): ApiResult {
    return {
      status: 204,
      headers: {
        ...TUS_HEADERS,
        'Tus-Version': TUS_VERSION,
        'Tus-Extension': TUS_EXTENSIONS,
        'Tus-Max-Size': String(this.deps.config.maxUploadBytes),
        'Cache-Control': 'no-store',
      },
    };
  }

  /** Every authenticated /v1/uploads request. `id`: the path's upload id, if any. */
  async handle(request: ApiRequest, user: string, id: string | undefined): Promise<ApiResult> {
    try {
      const version = request.header('tus-resumable');
      if (version !== null && version.trim() !== TUS_VERSION) {
        throw new ApiError('tus_version_unsupported', `Tus-Resumable ${version} is not supported; this server speaks ${TUS_VERSION}`, 'Tus-Resumable', {}, {
          'Tus-Version': TUS_VERSION,
        });
      }
      // Clients behind proxies that drop PATCH and DELETE send them as POST with this header.
      const override = request.method === 'POST' ? request.header('x-http-method-override')?.trim().toUpperCase() : undefined;
      const method = override || request.method;
      if (id === undefined) {
        if (method !== 'POST') throw methodNotAllowed(['POST', 'OPTIONS']);
        return await this.create(request, user);
      }
      if (method !== 'HEAD' && method !== 'PATCH' && method !== 'DELETE') throw methodNotAllowed(['HEAD', 'PATCH', 'DELETE', 'OPTIONS']);
      refuseQueryParameters(request.query);
      if (!ID_PATTERN.test(id)) throw notFound('upload');
      if (method === 'HEAD') return await this.head(request, user, id);
      if (method === 'PATCH') return await this.patch(request, user, id);
      return await this.remove(request, user, id);
    } catch (error) {
      discardBody(request.body);
      if (!(error instanceof ApiError)) throw error;
      // Every tus response carries Tus-Resumable, errors too.
      throw new ApiError(error.code, error.message, error.param, error.extra, { ...error.headers, ...TUS_HEADERS });
    }
  }

  /** The upload of this user (another user's: the same 404 as a missing one). */
  private async get(user: string, id: string): Promise<UploadRow> {
    const row = await this.db.selectFrom('uploads').selectAll().where('id', '=', id).where('user_id', '=', user).executeTakeFirst();
    if (!row) throw notFound('upload');
    return row;
  }

  private isExpired(row: UploadRow, now = nowSeconds()): boolean {
    return row.file_id === null && row.expires_at <= now;
  }

  private state(row: UploadRow): Record<string, string> {
    return {
      ...TUS_HEADERS,
      'Upload-Offset': String(row.upload_offset),
      'Upload-Length': String(row.upload_length),
      'Cache-Control': 'no-store',
      ...(row.file_id ? { 'Upload-File-Id': row.file_id } : { 'Upload-Expires': httpDate(row.expires_at) }),
    };
  }

  /** POST /v1/uploads: every check POST /v1/files makes that needs no bytes, before any is read. */
  private async create(request: ApiRequest, user: string): Promise<ApiResult> {
    refuseQueryParameters(request.query);
    if (request.header('upload-defer-length') !== null) {
      throw invalid('Upload-Defer-Length', 'Upload-Defer-Length is not supported: give Upload-Length');
    }
    const length = integerHeader(request, 'Upload-Length', true)!;
    const max = this.deps.config.maxUploadBytes;
    if (length > max) throw uploadTooLarge(max, 'Upload-Length');
    const metadata = parseMetadata(request.header('upload-metadata'));
    const fields: Record<string, string> = {};
    for (const name of ['conversation_id', 'message_id']) {
      const value = metadata.get(name);
      if (value !== undefined) fields[name] = value;
    }
    const rawFilename = metadata.get('filename');
    if (rawFilename === undefined) throw missing('filename', 'Upload-Metadata must carry filename');
    const upload: ReceivedUpload = { fields, file: receivedFile(rawFilename, undefined, null, 0, '', new Uint8Array(0)) };
    let target;
    try {
      target = this.completion.validate(upload);
    } catch (error) {
      // The same rules as POST /v1/files; here the name is a metadata key, not the file part.
      if (error instanceof ApiError && error.param === 'file') throw new ApiError(error.code, error.message, 'filename');
      throw error;
    }
    const body = request.body;
    const contentType = request.header('content-type');
    const contentLength = integerHeader(request, 'Content-Length', false);
    const hasBytes = body !== null && contentLength !== 0;
    if (hasBytes && contentType?.split(';')[0]!.trim().toLowerCase() !== OFFSET_STREAM) {
      throw new ApiError('unsupported_media_type', `A creation request that carries bytes must be Content-Type: ${OFFSET_STREAM}`);
    }
    if (contentLength !== null && contentLength > length) throw beyondLength();
    await this.completion.checkTarget(request, user, target);
    const filetype = metadata.get('filetype');
    const id = newId();
    const now = nowSeconds();
    const expiresAt = now + this.deps.config.uploads.expirySeconds;
    const result = await this.deps.idempotency.run(
      user,
      request.header('idempotency-key'),
      () => ({
        method: 'POST',
        path: '/v1/uploads',
        content: { upload_length: length, metadata: [...metadata.entries()].filter(([k]) => METADATA_KEYS.has(k)).sort() },
      }),
      async (trx) => {
        await this.refuseOverOpenCap(trx, user, now);
        await withUploads(trx)
          .insertInto('uploads')
          .values({
            id,
            user_id: user,
            conversation_id: target.conversation_id ?? null,
            message_id: target.message_id ?? null,
            filename: target.filename,
            file_type: filetype === undefined || filetype === '' ? null : filetype,
            upload_length: length,
            upload_offset: 0,
            file_id: null,
            writer: null,
            writer_until: null,
            created_at: now,
            expires_at: expiresAt,
          })
          .execute();
        await this.completion.created?.(trx, id, request);
        return { status: 201, headers: { ...TUS_HEADERS, Location: `/v1/uploads/${id}`, 'Upload-Expires': httpDate(expiresAt) } };
      },
      { audit: request.audit },
    );
    const location = result.headers?.Location ?? '';
    const createdId = location.slice(location.lastIndexOf('/') + 1);
    if (result.headers?.['Idempotent-Replayed'] === 'true') {
      // The same upload again: its bytes are not taken a second time; the answer tells where it stands.
      discardBody(body);
      const row = await this.db.selectFrom('uploads').selectAll().where('id', '=', createdId).where('user_id', '=', user).executeTakeFirst();
      return { ...result, headers: { ...result.headers, ...(row ? this.state(row) : {}), Location: location } };
    }
    const row = await this.get(user, id);
    let progress = { offset: 0, fileId: null as string | null };
    if (hasBytes || length === 0) progress = await this.append(row, 0, request);
    const headers = { ...result.headers, 'Upload-Offset': String(progress.offset), ...(progress.fileId ? { 'Upload-File-Id': progress.fileId } : {}) };
    return this.withFile({ ...result, headers }, request, user, progress.fileId);
  }

  /**
   * The answer of the request that stored the last byte, asked with Prefer: return=representation:
   * the file itself as its body (a PATCH's 204 becomes 200), so the client needs no GET after it.
   * So does a repeat of that request; a replayed creation and a HEAD name the file by
   * Upload-File-Id alone.
   */
  private async withFile(result: ApiResult, request: ApiRequest, user: string, fileId: string | null): Promise<ApiResult> {
    if (fileId === null || !this.deps.fileObject || !prefersRepresentation(request)) return result;
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

  private async head(request: ApiRequest, user: string, id: string): Promise<ApiResult> {
    await this.recorded(user, id);
    const row = await this.settled(await this.get(user, id));
    if (this.isExpired(row)) throw expired();
    if (row.file_id === null && row.upload_offset === row.upload_length) return this.completeStored(row, request);
    return { status: 200, headers: this.state(row) };
  }

  /**
   * HEAD of an upload whose bytes are all stored but that has no file: the request that stored the
   * last byte did not make it (its maker stopped, or — proxy mode — the upstream has not taken it
   * yet and that request was answered 503 so the client is not kept waiting). A tus client that
   * resumes asks HEAD and, seeing every byte there, sends nothing more: so HEAD makes the file now
   * (once: under the upload's lease, as a repeat of the last request would), and tells it. Held by
   * a writer elsewhere (another instance making it): where it stands. The completion's own failure
   * (e.g. 503 with Retry-After while the upstream is unavailable) is the answer, with the offset.
   */
  private async completeStored(row: UploadRow, request: ApiRequest): Promise<ApiResult> {
    let lease: Lease;
    try {
      lease = await this.claim(row.id, row.upload_offset);
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'upload_in_progress' || error.code === 'upload_offset_mismatch')) {
        return { status: 200, headers: this.state(await this.get(row.user_id, row.id)) };
      }
      throw error;
    }
    let release!: () => void;
    const local: LocalWriter = { cancel: () => {}, released: new Promise<void>((resolve) => (release = resolve)), received: Promise.resolve(), bodyEnded: () => true };
    this.writers.set(row.id, local);
    try {
      const fileId = await this.complete(row, lease, request);
      const made = await this.db.selectFrom('uploads').selectAll().where('id', '=', row.id).executeTakeFirst();
      return { status: 200, headers: { ...this.state(made ?? row), 'Upload-Offset': String(row.upload_length), 'Upload-File-Id': fileId } };
    } catch (error) {
      if (error instanceof ApiError && error.status >= 500) {
        throw new ApiError(error.code, error.message, error.param, error.extra, { ...error.headers, 'Upload-Offset': String(row.upload_offset), 'Upload-Length': String(row.upload_length) });
      }
      throw error;
    } finally {
      await lease.release().catch((error) => this.deps.log.error('[parley] releasing an upload lease failed:', error));
      if (this.writers.get(row.id) === local) this.writers.delete(row.id);
      release();
    }
  }

  /**
   * An upload whose bytes are all stored while a request of this process is still making its file
   * (a proxy delivering it upstream may take a while): waits for that request, so that a repeat of
   * the last request (its answer lost) or a HEAD tells the file rather than an end without one.
   */
  private async settled(row: UploadRow): Promise<UploadRow> {
    const holder = this.writers.get(row.id);
    if (row.file_id !== null || row.upload_offset !== row.upload_length || !holder) return row;
    await holder.released;
    return this.get(row.user_id, row.id);
  }

  private async patch(request: ApiRequest, user: string, id: string): Promise<ApiResult> {
    const contentType = request.header('content-type');
    if (contentType?.split(';')[0]!.trim().toLowerCase() !== OFFSET_STREAM) {
      throw new ApiError('unsupported_media_type', `PATCH bodies must be Content-Type: ${OFFSET_STREAM}`);
    }
    const offset = integerHeader(request, 'Upload-Offset', true)!;
    const row = await this.get(user, id);
    if (this.isExpired(row)) throw expired();
    const progress = await this.append(row, offset, request);
    const now = await this.get(user, id).catch(() => null);
    const result: ApiResult = {
      status: 204,
      headers: {
        ...(now ? this.state(now) : TUS_HEADERS),
        'Upload-Offset': String(progress.offset),
        ...(progress.fileId ? { 'Upload-File-Id': progress.fileId } : {}),
      },
    };
    return this.withFile(result, request, user, progress.fileId);
  }

  /**
   * Writes the request's bytes at `offset` (holding the upload's lease) and, once the last byte is
   * stored, creates the file. A finished upload answers a repeat of its last request (or any
   * request at its end) with its file, and never makes a second one.
   */
  private async append(row: UploadRow, offset: number, request: ApiRequest): Promise<{ offset: number; fileId: string | null }> {
    const contentLength = integerHeader(request, 'Content-Length', false);
    const end = contentLength === null ? null : offset + contentLength;
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
    if (body !== null && contentLength !== null && offset + contentLength > row.upload_length) throw beyondLength();
    // At most MAX_UPLOAD_CHUNKS chunks (a blob each): with one slot left, the PATCH must bring the
    // upload to its end. (Counted before the lease: the count only changes with the offset.)
    const maxChunks = this.deps.config.uploads.maxChunks;
    const mustFinish = body !== null && contentLength !== 0 && (await this.chunkCount(row.id)) >= maxChunks - 1;
    if (mustFinish && end !== null && end < row.upload_length) throw chunkLimit(maxChunks, row.upload_length - offset);
    const lease = await this.claim(row.id, offset);
    const cancelled = { cancel: () => {} };
    let release!: () => void;
    let received!: () => void;
    const local: LocalWriter = {
      cancel: () => cancelled.cancel(),
      released: new Promise<void>((resolve) => (release = resolve)),
      received: new Promise<void>((resolve) => (received = resolve)),
      bodyEnded: () => !body || body.destroyed || body.readableEnded || Boolean((body as { socket?: { readableEnded?: boolean } }).socket?.readableEnded),
    };
    this.writers.set(row.id, local);
    // Renewed while bytes arrive and while the file is made (copying a large upload takes a while).
    const renew = setInterval(() => {
      void this.db
        .updateTable('uploads')
        .set({ writer_until: Date.now() + LEASE_MS })
        .where('id', '=', row.id)
        .where('writer', '=', lease.token)
        .execute()
        .catch(() => {});
    }, RENEW_MS);
    renew.unref();
    try {
      let reached = offset;
      let fileId: string | null = null;
      if (body && contentLength !== 0) {
        cancelled.cancel = () => body.destroy();
        // The whole file in this one request: made straight from its blob, if every byte arrives.
        const whole =
          offset === 0 && contentLength === row.upload_length && this.completion.completeWhole
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
      clearInterval(renew);
      await lease.release().catch((error) => this.deps.log.error('[parley] releasing an upload lease failed:', error));
      if (this.writers.get(row.id) === local) this.writers.delete(row.id);
      received();
      release();
    }
  }

  /** Takes the upload's lease at `offset`, or says why not (409: another offset, or another writer). */
  private async claim(id: string, offset: number): Promise<Lease> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const token = newId();
      const nowMs = Date.now();
      const claimed = await this.db
        .updateTable('uploads')
        .set({ writer: token, writer_until: nowMs + LEASE_MS })
        .where('id', '=', id)
        .where('upload_offset', '=', offset)
        .where('file_id', 'is', null)
        .where((eb) => eb.or([eb('writer', 'is', null), eb('writer_until', '<', nowMs)]))
        .returning('id')
        .executeTakeFirst();
      if (claimed) {
        return {
          token,
          release: async () => {
            await this.db.updateTable('uploads').set({ writer: null, writer_until: null }).where('id', '=', id).where('writer', '=', token).execute();
          },
        };
      }
      const current = await this.db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
      if (!current) throw notFound('upload');
      if (current.file_id !== null) throw offsetMismatch(current.upload_length);
      if (current.upload_offset !== offset) throw offsetMismatch(current.upload_offset);
      // Held. By a request of this process (a connection that died unnoticed, or a client that
      // gave up on it): end that one, let it record what it received, and look again.
      const holder = this.writers.get(id);
      if (!holder || attempt > 0) throw inProgress(current.writer_until);
      holder.cancel();
      await Promise.race([holder.released, new Promise((resolve) => setTimeout(resolve, TAKEOVER_WAIT_MS).unref())]);
    }
    throw inProgress();
  }

  /**
   * Streams the body into one new chunk blob; records it and moves the offset. Returns the new
   * offset. `whole`: the body is the whole upload; when every byte of it arrived, the file is made
   * from the blob (`fileId`) instead of recording a chunk — which is still recorded if that fails.
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
    const hash = whole ? createHash('sha256') : null;
    const head: Buffer[] = [];
    let headSize = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        if (size + chunk.length > room) {
          overflow = true;
          return done(beyondLength());
        }
        size += chunk.length;
        if (hash) {
          hash.update(chunk);
          if (headSize < HEAD_BYTES) {
            head.push(chunk.subarray(0, HEAD_BYTES - headSize));
            headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
          }
        }
        done(null, chunk);
      },
    });
    const blob = this.deps.store.begin();
    try {
      // A body that breaks (the client went away, the idle timeout) ends the chunk where it broke.
      await pipeline(Readable.from(untilBroken(body, { broken: false })), tap, blob.sink);
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
    if (whole && hash && size === room) {
      let failure: unknown;
      try {
        return { reached: offset + size, fileId: await whole(blob, { sha256: hash.digest('hex'), head: new Uint8Array(Buffer.concat(head)) }) };
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
    const now = nowSeconds();
    try {
      await inTransaction(this.deps.db, async (trx) => {
        const db = withUploads(trx);
        const moved = await db
          .updateTable('uploads')
          .set({ upload_offset: offset + size, expires_at: now + this.deps.config.uploads.expirySeconds })
          .where('id', '=', row.id)
          .where('writer', '=', lease.token)
          .where('upload_offset', '=', offset)
          .returning('id')
          .executeTakeFirst();
        if (!moved) {
          const still = await db.selectFrom('uploads').select(['id', 'writer_until']).where('id', '=', row.id).executeTakeFirst();
          throw still ? inProgress(still.writer_until) : notFound('upload'); // lease lost (lapsed), or the upload was deleted
        }
        await db.insertInto('upload_chunks').values({ upload_id: row.id, upload_offset: offset, size, storage_key: blob.key }).execute();
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
      finish: (trx, fileId) => this.finishUpload(trx, row, lease, fileId),
    };
    return this.completion.completeWhole!(staged, blob, digest, request);
  }

  /** Marks the upload finished with `fileId` and drops its chunks, only while `lease` holds it. */
  private async finishUpload(trx: Db, row: UploadRow, lease: Lease, fileId: string): Promise<void> {
    const done = await withUploads(trx)
      .updateTable('uploads')
      // Kept for as long as an unfinished upload would be: a later HEAD still tells the file.
      .set({ file_id: fileId, upload_offset: row.upload_length, expires_at: nowSeconds() + this.deps.config.uploads.expirySeconds })
      .where('id', '=', row.id)
      .where('file_id', 'is', null)
      .where('writer', '=', lease.token)
      .returning('id')
      .executeTakeFirst();
    if (!done) throw inProgress(); // not reached while the lease holds; rolls the file back if it did
    // Their blobs are queued for removal by trigger, in this transaction.
    await withUploads(trx).deleteFrom('upload_chunks').where('upload_id', '=', row.id).execute();
  }

  /** All bytes are stored: the strategy makes the file, once. Returns its id. */
  private async complete(row: UploadRow, lease: Lease, request: ApiRequest): Promise<string> {
    const chunks = await this.db.selectFrom('upload_chunks').selectAll().where('upload_id', '=', row.id).orderBy('upload_offset').execute();
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
        for (const chunk of chunks) for await (const piece of await store.open(chunk.storage_key)) yield piece as Buffer;
      },
      finish: (trx, fileId) => this.finishUpload(trx, row, lease, fileId),
    };
    try {
      return await this.completion.complete(staged, request);
    } finally {
      await this.deps.drainDeletions().catch((error) => this.deps.log.error('[parley] a blob deletion pass failed:', error));
    }
  }

  private async chunkCount(id: string): Promise<number> {
    const { n } = await this.db.selectFrom('upload_chunks').select((eb) => eb.fn.countAll<number | string>().as('n')).where('upload_id', '=', id).executeTakeFirstOrThrow();
    return Number(n);
  }

  /**
   * A HEAD while a PATCH of this process, whose body has ended (a client that closed its
   * connection mid-PATCH, typically, and now asks where to resume), is still recording its chunk:
   * waits for that (bounded), so the HEAD tells the offset the chunk reaches, not the one before.
   * Not for a PATCH still receiving (that may take minutes), nor for another user's upload.
   */
  private async recorded(user: string, id: string): Promise<void> {
    const writer = this.writers.get(id);
    if (!writer || !writer.bodyEnded()) return;
    await this.get(user, id);
    await Promise.race([writer.received, new Promise((resolve) => setTimeout(resolve, RECORDING_WAIT_MS).unref())]);
  }

  /** Creation: the user's unfinished, unexpired uploads are fewer than MAX_OPEN_UPLOADS_PER_USER (429 otherwise). */
  private async refuseOverOpenCap(trx: Db, user: string, now: number): Promise<void> {
    const max = this.deps.config.uploads.maxOpenPerUser;
    const open = await withUploads(trx)
      .selectFrom('uploads')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('expires_at').as('first')])
      .where('user_id', '=', user)
      .where('file_id', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    if (Number(open.n) >= max) throw tooManyUploads(max, Number(open.first) - now);
  }

  /**
   * After a deletion that may have taken uploads with it (a conversation's: its uploads go by
   * trigger, migration 0005): a PATCH of this process still receiving bytes for an upload that is
   * gone is ended, and its unrecorded chunk removed, before the deletion is answered. (One on
   * another instance removes its chunk when its body ends: its upload's row is gone.)
   */
  async endDeleted(): Promise<void> {
    const ids = [...this.writers.keys()];
    if (ids.length === 0) return;
    const live = new Set((await this.db.selectFrom('uploads').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
    await Promise.all(
      ids
        .filter((id) => !live.has(id))
        .map(async (id) => {
          const writer = this.writers.get(id);
          if (!writer) return;
          writer.cancel();
          await writer.received;
        }),
    );
  }

  /** DELETE: ends the upload; its stored bytes go (a finished upload's file stays). */
  private async remove(request: ApiRequest, user: string, id: string): Promise<ApiResult> {
    const result = await this.deps.idempotency.run(
      user,
      request.header('idempotency-key'),
      () => ({ method: 'DELETE', path: `/v1/uploads/${id}`, content: {} }),
      async (trx) => {
        const deleted = await withUploads(trx).deleteFrom('uploads').where('id', '=', id).where('user_id', '=', user).returning('id').executeTakeFirst();
        if (!deleted) throw notFound('upload');
        return { status: 204, headers: TUS_HEADERS };
      },
      { singleWrite: true, audit: request.audit },
    );
    // A PATCH of this process still receiving bytes for it: its body is ended here, and its chunk
    // can no longer be recorded (the row is gone), so it removes its blob. The answer waits for
    // that: after the 204 no byte of the upload is left in the store. (Not for a completion under
    // way: its chunks were recorded, so they went with the row and are drained below; a proxy's
    // delivery upstream may take long.)
    const writer = this.writers.get(id);
    if (writer) {
      writer.cancel();
      await writer.received;
    }
    await this.deps.drainDeletions().catch((error) => this.deps.log.error('[parley] a blob deletion pass failed:', error));
    return result;
  }

  /**
   * Removes uploads whose expiry has passed at `now` (Unix seconds): unfinished ones with their
   * bytes (queued, then drained), finished ones' records. Not while a live PATCH holds one.
   */
  async expire(now = nowSeconds()): Promise<number> {
    const gone = await this.db
      .deleteFrom('uploads')
      .where('expires_at', '<=', now)
      .where((eb) => eb.or([eb('writer', 'is', null), eb('writer_until', '<', now * 1000)]))
      .returning('id')
      .execute();
    if (gone.length > 0) await this.deps.drainDeletions();
    return gone.length;
  }
}

function receivedFile(rawFilename: string, declaredType: string | undefined, blob: BlobWrite | null, size: number, sha256: string, head: Uint8Array) {
  return { fieldName: 'file', rawFilename, declaredType, blob: blob as BlobWrite, size, sha256, head };
}

/** The embedded service's completion: the upload becomes a file of this service, as POST /v1/files makes it. */
class FileCompletion implements UploadCompletion {
  private readonly db: UploadDb;

  constructor(
    private readonly deps: UploadsDeps,
    private readonly files: Files,
  ) {
    this.db = withUploads(deps.db);
  }

  validate(upload: ReceivedUpload) {
    return this.files.validateUpload(upload);
  }

  /** The conversation (or message) the file will go to exists and is the user's. */
  async checkTarget(_request: ApiRequest, user: string, { conversation_id: conversationId, message_id: messageId }: { conversation_id?: string; message_id?: string }): Promise<void> {
    if (conversationId !== undefined) {
      const found =
        ID_PATTERN.test(conversationId) &&
        (await this.db.selectFrom('conversations').select('id').where('id', '=', conversationId).where('user_id', '=', user).executeTakeFirst());
      if (!found) throw notFound('conversation', 'conversation_id');
    } else {
      const found =
        ID_PATTERN.test(messageId!) &&
        (await this.db.selectFrom('messages').select('id').where('id', '=', messageId!).where('user_id', '=', user).executeTakeFirst());
      if (!found) throw notFound('message', 'message_id');
    }
  }

  /** Concatenates the chunks into one new blob (hashing and sniffing on the way); one file, once. */
  async complete(staged: StagedUpload, request?: ApiRequest): Promise<string> {
    const store = this.deps.store;
    const hash = createHash('sha256');
    const headChunks: Buffer[] = [];
    let headSize = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        if (headSize < HEAD_BYTES) {
          headChunks.push(chunk.subarray(0, HEAD_BYTES - headSize));
          headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
        }
        done(null, chunk);
      },
    });
    const blob = store.begin();
    try {
      await pipeline(Readable.from(staged.bytes()), tap, blob.sink);
      await blob.finish();
    } catch (error) {
      await blob.abort();
      throw error;
    }
    try {
      return await this.completeWhole(staged, blob, { sha256: hash.digest('hex'), head: new Uint8Array(Buffer.concat(headChunks)) }, request);
    } catch (error) {
      if (!isCommitOutcomeUnknown(error)) await blob.abort();
      throw error;
    }
  }

  /** The file from `blob` (all of the upload's bytes), as POST /v1/files makes it; one file, once. */
  async completeWhole(staged: StagedUpload, blob: BlobWrite, digest: Digest, request?: ApiRequest): Promise<string> {
    const { row } = staged;
    const upload: ReceivedUpload = {
      fields: row.conversation_id !== null ? { conversation_id: row.conversation_id } : { message_id: row.message_id! },
      file: receivedFile(row.filename, row.file_type ?? undefined, blob, row.upload_length, digest.sha256, digest.head),
    };
    const fileId = await inTransaction(this.deps.db, async (trx) => {
      const file = await this.files.create(trx, row.user_id, upload, '');
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

/** For the orphan sweeps: blobs that are chunks of unfinished uploads are not orphans. */
export async function uploadChunkKeys(db: Db): Promise<string[]> {
  return (await withUploads(db).selectFrom('upload_chunks').select('storage_key').execute()).map((r) => r.storage_key);
}

export async function isUploadChunk(db: Db, key: string): Promise<boolean> {
  return (await withUploads(db).selectFrom('upload_chunks').select('upload_id').where('storage_key', '=', key).executeTakeFirst()) !== undefined;
}
