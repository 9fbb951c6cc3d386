// The API's objects as the server sends them: one zod schema each, the one definition the server
// builds its responses from, the tests check real responses against, and every client (the page,
// the sync worker, the service worker's background flush) validates what it receives with.
// zod/mini, not zod: the same schemas (lib/schemas.ts re-exports them and builds the inputs on
// them), but a bundle gets only the checks it uses — zod's classic API carries all of it and every
// locale, which made the service worker 160 KiB gzipped (issue 30).
import * as z from 'zod/mini';

import { EXTERNAL_ID_PATTERN, ID_PATTERN } from './name-rules';

export { EXTERNAL_ID_PATTERN, ID_PATTERN };
/** Timestamps are Unix seconds; anything past year 9999 is a mistake, not a date. */
export const MAX_TIMESTAMP = 253402300799;

export const Id = z.string().check(z.regex(ID_PATTERN, 'must be 16 characters of A-Z, a-z, 0-9'));
export const ExternalId = z.string().check(z.regex(EXTERNAL_ID_PATTERN, 'must be 1-64 characters of A-Z, a-z, 0-9, _ and -'));
export const Timestamp = z.int().check(z.minimum(0), z.maximum(MAX_TIMESTAMP));

export const Conversation = z.strictObject({
  id: Id,
  contact_id: z.nullable(ExternalId),
  group_id: z.nullable(ExternalId),
  pinned_message_id: z.nullable(Id),
  is_pinned: z.boolean(),
  is_muted: z.boolean(),
  last_active_at: z.nullable(Timestamp),
  last_opened_at: z.nullable(Timestamp),
  created_at: Timestamp,
  archived_at: z.nullable(Timestamp),
});
export type Conversation = z.infer<typeof Conversation>;

export const FileObject = z.strictObject({
  id: Id,
  message_id: Id,
  filename: z.string().check(z.minLength(1)),
  file_url: z.string().check(z.url()),
  file_type: z.string().check(z.minLength(3)),
  file_size: z.int().check(z.minimum(0)),
  created_at: Timestamp,
});
export type FileObject = z.infer<typeof FileObject>;

export function Page<T extends z.ZodMiniType>(item: T) {
  return z.strictObject({ has_more: z.boolean(), data: z.array(item) });
}
export const ConversationPage = Page(Conversation);
export const FilePage = Page(FileObject);
export interface PageOf<T> {
  has_more: boolean;
  data: T[];
}

// ---- The change feed (an extension): what changed after a cursor, oldest first. ----

const tombstone = z.strictObject({ id: Id });
export const ChangeEvent = z.discriminatedUnion('type', [
  z.strictObject({ id: z.string().check(z.minLength(1)), type: z.literal(['conversation.created', 'conversation.updated']), created_at: Timestamp, object: Conversation }),
  z.strictObject({ id: z.string().check(z.minLength(1)), type: z.literal('conversation.deleted'), created_at: Timestamp, object: tombstone }),
  z.strictObject({ id: z.string().check(z.minLength(1)), type: z.literal(['file.created', 'file.updated']), created_at: Timestamp, object: FileObject, conversation_id: Id }),
  z.strictObject({ id: z.string().check(z.minLength(1)), type: z.literal('file.deleted'), created_at: Timestamp, object: tombstone, conversation_id: Id }),
]);
export type ChangeEvent = z.infer<typeof ChangeEvent>;
export type ChangeEventType = ChangeEvent['type'];

export const EventPage = z.strictObject({
  data: z.array(ChangeEvent),
  has_more: z.boolean(),
  /** The cursor to ask with next (the last event's id, or the one given when nothing came). */
  next: z.string().check(z.minLength(1)),
});
export type EventPage = z.infer<typeof EventPage>;
/** GET /v1/me (extension): the user the bearer token belongs to. */
export const Me = z.strictObject({ id: z.string().check(z.minLength(1)) });
export type Me = z.infer<typeof Me>;

// ---- Devices and pairing (extensions of Parley's own server). ----

/** GET /v1/me/devices: one stored token of the caller's user (a device, or a CLI token). */
export const Device = z.strictObject({
  id: Id,
  label: z.nullable(z.string()),
  created_at: Timestamp,
  last_seen_at: z.nullable(Timestamp),
  current: z.boolean(),
});
export type Device = z.infer<typeof Device>;
export const DevicePage = Page(Device);
export type DevicePage = z.infer<typeof DevicePage>;

/** The short code: 8 characters of an alphabet without look-alikes (no 0/O, 1/I/L, U). */
export const PAIRING_ALPHABET = '23456789ABCDEFGHJKMNPQRSTVWXYZ';
export const PAIRING_CODE_LENGTH = 8;
export const PairingStatus = z.enum(['waiting', 'redeemed', 'approved', 'denied', 'collected', 'expired']);
export type PairingStatus = z.infer<typeof PairingStatus>;

/** POST /v1/me/pairings: a one-use code, valid until expires_at (2 minutes). */
export const PairingCreated = z.strictObject({ id: Id, code: z.string().check(z.length(PAIRING_CODE_LENGTH)), expires_at: Timestamp });
export type PairingCreated = z.infer<typeof PairingCreated>;
/** GET /v1/me/pairings/{id}: what became of a code (label: the device that redeemed it). */
export const Pairing = z.strictObject({
  id: Id,
  status: PairingStatus,
  user: z.string().check(z.minLength(1)),
  label: z.nullable(z.string()),
  created_at: Timestamp,
  expires_at: Timestamp,
});
export type Pairing = z.infer<typeof Pairing>;
/** POST /v1/pairings/redeem: no token, only the secret that collects it once approved. */
export const PairingRedeemed = z.strictObject({ pairing_id: Id, secret: z.string().check(z.minLength(32)), expires_at: Timestamp });
export type PairingRedeemed = z.infer<typeof PairingRedeemed>;
/** POST /v1/pairings/{id}/token: the new device's own token (once). */
export const PairingToken = z.strictObject({ token: z.string().check(z.minLength(1)), user: z.string().check(z.minLength(1)), device_id: Id });
export type PairingToken = z.infer<typeof PairingToken>;

export const ErrorCode = z.enum([
  'unauthenticated',
  // 401: this token was revoked with wipe (`npm run token -- revoke <id> --wipe`): the device
  // erases everything of the user it holds, without asking.
  'device_wiped',
  'parameter_invalid',
  'parameter_missing',
  'parameter_unknown',
  'resource_missing',
  'method_not_allowed',
  'conversation_exists',
  'idempotency_conflict',
  'events_expired',
  // 409, retryable: the first request with this Idempotency-Key is still running (or was abandoned
  // by a crashed process); retry with the same key after Retry-After.
  'idempotency_in_progress',
  'file_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  // 503, retryable: the database refuses writes (read-only) or cannot be reached.
  'service_unavailable',
  // 507, retryable: the disk, the database or the object store is full; nothing was stored.
  'insufficient_storage',
  // Proxy mode only: the upstream service could not be reached or did not answer in time.
  'upstream_unavailable',
  'upstream_timeout',
  // Resumable uploads (tus): 409, the Upload-Offset is not the upload's (HEAD tells where to resume);
  // 409, retryable, another request is writing to the upload; 410, the upload expired; 412, a
  // Tus-Resumable version this server does not speak.
  'upload_offset_mismatch',
  'upload_in_progress',
  'upload_expired',
  'tus_version_unsupported',
  // 429, retryable: the user has MAX_OPEN_UPLOADS_PER_USER unfinished uploads (an abandoned one
  // counts until it expires; Retry-After says when the next one does); finish or DELETE one.
  'too_many_uploads',
  // 409: the upload holds MAX_UPLOAD_CHUNKS - 1 chunks; the next PATCH must carry every byte left.
  'upload_chunk_limit',
  // 431: the request's headers are beyond Node's limit (16 KiB in all); the connection is closed.
  'request_header_fields_too_large',
  // 408: the request's headers (HEADERS_TIMEOUT_MS) or all of it (REQUEST_TIMEOUT_MS) took too long.
  'request_timeout',
  // Pairing a device (extension): 410, the code or the request expired (2 minutes) or was used
  // already (one use); 409, retryable, the first device has not approved yet; 403, it denied.
  'pairing_expired',
  'pairing_used',
  'pairing_pending',
  'pairing_denied',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ApiErrorBody = z.strictObject({
  type: z.enum(['invalid_request', 'api_error']),
  code: ErrorCode,
  message: z.string().check(z.minLength(1)),
  param: z.optional(z.string()),
  existing_id: z.optional(Id),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;
