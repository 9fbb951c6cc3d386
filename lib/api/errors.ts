// The contract's error shape. Handlers throw ApiError; the service turns it into a response.
import type { ApiErrorBody, ErrorCode } from '../schemas';
import type { StorageFailure } from './storage/failures';

const STATUS: Record<ErrorCode, number> = {
  unauthenticated: 401,
  device_wiped: 401,
  parameter_invalid: 400,
  parameter_missing: 400,
  parameter_unknown: 400,
  resource_missing: 404,
  method_not_allowed: 405,
  conversation_exists: 409,
  idempotency_conflict: 409,
  events_expired: 410,
  idempotency_in_progress: 409,
  file_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  service_unavailable: 503,
  insufficient_storage: 507,
  upstream_unavailable: 502,
  upstream_timeout: 504,
  upload_offset_mismatch: 409,
  upload_in_progress: 409,
  upload_expired: 410,
  tus_version_unsupported: 412,
  too_many_uploads: 429,
  upload_chunk_limit: 409,
  request_header_fields_too_large: 431,
  request_timeout: 408,
  pairing_expired: 410,
  pairing_used: 410,
  pairing_pending: 409,
  pairing_denied: 403,
};

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly extra: { existing_id?: string } = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS[code];
  }

  body(): ApiErrorBody {
    return {
      type: this.status >= 500 ? 'api_error' : 'invalid_request',
      code: this.code,
      message: this.message,
      ...(this.param !== undefined ? { param: this.param } : {}),
      ...this.extra,
    };
  }
}

export const invalid = (param: string | undefined, message: string) => new ApiError('parameter_invalid', message, param);
export const missing = (param: string, message = `${param} is required`) => new ApiError('parameter_missing', message, param);
export const unknownParam = (param: string) => new ApiError('parameter_unknown', `Unknown parameter: ${param}`, param);
export const notFound = (what: string, param?: string) => new ApiError('resource_missing', `No such ${what}`, param);
export const methodNotAllowed = (allow: string[]) =>
  new ApiError('method_not_allowed', `Method not allowed; use ${allow.join(', ')}`, undefined, {}, { Allow: allow.join(', ') });
export const unauthenticated = (message = 'A valid bearer token is required') =>
  new ApiError('unauthenticated', message, undefined, {}, { 'WWW-Authenticate': 'Bearer realm="parley"' });
export const deviceWiped = () =>
  new ApiError('device_wiped', 'This device was signed out and cleared by your organisation: erase what it holds and sign in again', undefined, {}, {
    'WWW-Authenticate': 'Bearer realm="parley", error="invalid_token"',
  });
export const internalError = () => new ApiError('internal', 'An internal error occurred; it has been logged');

// Storage that cannot take a write right now. Both are retryable: nothing was stored, and the same
// request (with the same Idempotency-Key) may simply be sent again later.
export const insufficientStorage = () =>
  new ApiError('insufficient_storage', 'Not enough storage to complete this request; nothing was stored. Try again later', undefined, {}, { 'Retry-After': '60' });
export const serviceUnavailable = (message: string) => new ApiError('service_unavailable', message, undefined, {}, { 'Retry-After': '30' });

/** What a storage failure is answered with. */
export function storageFailureError(failure: StorageFailure): ApiError {
  if (failure === 'full') return insufficientStorage();
  if (failure === 'read_only') {
    return serviceUnavailable('Storage is read-only: writes are refused until it is writable again. Try again later');
  }
  return serviceUnavailable('Storage (the database or the file store) cannot be reached right now. Try again later');
}
export const idempotencyInProgress = (retryAfterSeconds: number) =>
  new ApiError(
    'idempotency_in_progress',
    'A request with this Idempotency-Key is still in progress; retry it later with the same key',
    'Idempotency-Key',
    {},
    { 'Retry-After': String(retryAfterSeconds) },
  );

/** Over a cap on open live streams (per user or in all, on this instance): 429 rate_limited. */
export const tooManyStreams = (message: string, retryAfterSeconds: number) =>
  new ApiError('rate_limited', message, undefined, {}, { 'Retry-After': String(retryAfterSeconds) });
