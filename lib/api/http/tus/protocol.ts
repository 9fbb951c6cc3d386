// What every tus handler says the same way: the version and extensions spoken, the headers every
// answer carries, how an upload's state is told, and the protocol's errors in the contract's shape.
import { ApiError } from '../../errors';
import type { UploadRow } from '../../storage/uploads';

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,expiration';
export const OFFSET_STREAM = 'application/offset+octet-stream';
/** How long a PATCH's hold on an upload lasts without renewal (an instance that died lets go within this). */
export const LEASE_MS = 30_000;

/** On every answer of a tus handler, errors too. */
export const TUS_HEADERS = { 'Tus-Resumable': TUS_VERSION };

/** OPTIONS: what this server speaks (embedded and proxy alike). */
export function capabilities(maxUploadBytes: number): Record<string, string> {
  return {
    ...TUS_HEADERS,
    'Tus-Version': TUS_VERSION,
    'Tus-Extension': TUS_EXTENSIONS,
    'Tus-Max-Size': String(maxUploadBytes),
    'Cache-Control': 'no-store',
  };
}

/** RFC 9110 HTTP-date. */
export const httpDate = (seconds: number) => new Date(seconds * 1000).toUTCString();

/** Where an upload stands, as HEAD (and a PATCH's answer) tells it. */
export function uploadState(row: UploadRow): Record<string, string> {
  return {
    ...TUS_HEADERS,
    'Upload-Offset': String(row.upload_offset),
    'Upload-Length': String(row.upload_length),
    'Cache-Control': 'no-store',
    ...(row.file_id ? { 'Upload-File-Id': row.file_id } : { 'Upload-Expires': httpDate(row.expires_at) }),
  };
}

/** An unfinished upload past its expiry (a finished one keeps telling its file until it goes). */
export const isExpired = (row: UploadRow, now: number) => row.file_id === null && row.expires_at <= now;

/** The same error with Tus-Resumable (and `extra` headers) added. */
export const withHeaders = (error: ApiError, extra: Record<string, string>) =>
  new ApiError(error.code, error.message, error.param, error.extra, { ...error.headers, ...extra });

export const versionUnsupported = (version: string) =>
  new ApiError('tus_version_unsupported', `Tus-Resumable ${version} is not supported; this server speaks ${TUS_VERSION}`, 'Tus-Resumable', {}, {
    'Tus-Version': TUS_VERSION,
  });

export const offsetMismatch = (offset: number) =>
  new ApiError('upload_offset_mismatch', `Upload-Offset does not match the upload's offset (${offset}); ask with HEAD and resume from there`, 'Upload-Offset', {}, {
    'Upload-Offset': String(offset),
  });

/** `writerUntil`: when the holder's lease lapses unless renewed (ms; unknown: a whole lease from now). */
export const inProgress = (writerUntil?: number | null) =>
  new ApiError('upload_in_progress', 'Another request is writing to this upload; retry after Retry-After (HEAD tells the offset)', undefined, {}, {
    'Retry-After': String(Math.max(1, Math.ceil(((writerUntil ?? Date.now() + LEASE_MS) - Date.now()) / 1000))),
  });

export const tooManyUploads = (max: number, retryAfter: number) =>
  new ApiError(
    'too_many_uploads',
    `You have ${max} unfinished uploads, the most this server keeps open for one user: finish or DELETE one, or retry after Retry-After ` +
      '(an abandoned upload counts until it expires, Upload-Expires)',
    undefined,
    {},
    { 'Retry-After': String(Math.max(1, retryAfter)) },
  );

export const chunkLimit = (max: number, left: number) =>
  new ApiError(
    'upload_chunk_limit',
    `This upload holds ${max - 1} pieces, one less than the most one upload may (${max}): the next PATCH must carry every byte left (${left}), ` +
      'in one request; bytes of one that ends short are not kept',
    'Content-Length',
  );

export const expired = () => new ApiError('upload_expired', 'This upload expired; its bytes were removed. Start a new upload');

export const uploadTooLarge = (max: number, param: string) => new ApiError('file_too_large', `The file exceeds the upload limit of ${max} bytes`, param);

export const beyondLength = () => new ApiError('file_too_large', 'The body goes beyond the Upload-Length declared at creation', 'Upload-Length');

export const notOffsetStream = (what: string) => new ApiError('unsupported_media_type', `${what} must be Content-Type: ${OFFSET_STREAM}`);
