// One zod schema per API object. The server builds its responses from these types, the client
// validates input with them before queueing, and the tests check real responses against them.
import { z } from 'zod';

export const ID_PATTERN = /^[A-Za-z0-9]{16}$/;
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Timestamps are Unix seconds; anything past year 9999 is a mistake, not a date. */
export const MAX_TIMESTAMP = 253402300799;

export const Id = z.string().regex(ID_PATTERN, 'must be 16 characters of A-Z, a-z, 0-9');
export const ExternalId = z.string().regex(EXTERNAL_ID_PATTERN, 'must be 1-64 characters of A-Z, a-z, 0-9, _ and -');
export const Timestamp = z.int().min(0).max(MAX_TIMESTAMP);

export const Conversation = z.strictObject({
  id: Id,
  contact_id: ExternalId.nullable(),
  group_id: ExternalId.nullable(),
  pinned_message_id: Id.nullable(),
  is_pinned: z.boolean(),
  is_muted: z.boolean(),
  last_active_at: Timestamp.nullable(),
  last_opened_at: Timestamp.nullable(),
  created_at: Timestamp,
  archived_at: Timestamp.nullable(),
});
export type Conversation = z.infer<typeof Conversation>;

export const FileObject = z.strictObject({
  id: Id,
  message_id: Id,
  filename: z.string().min(1),
  file_url: z.string().url(),
  file_type: z.string().min(3),
  file_size: z.int().min(0),
  created_at: Timestamp,
});
export type FileObject = z.infer<typeof FileObject>;

export function Page<T extends z.ZodType>(item: T) {
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
  z.strictObject({ id: z.string().min(1), type: z.literal(['conversation.created', 'conversation.updated']), created_at: Timestamp, object: Conversation }),
  z.strictObject({ id: z.string().min(1), type: z.literal('conversation.deleted'), created_at: Timestamp, object: tombstone }),
  z.strictObject({ id: z.string().min(1), type: z.literal(['file.created', 'file.updated']), created_at: Timestamp, object: FileObject, conversation_id: Id }),
  z.strictObject({ id: z.string().min(1), type: z.literal('file.deleted'), created_at: Timestamp, object: tombstone, conversation_id: Id }),
]);
export type ChangeEvent = z.infer<typeof ChangeEvent>;
export type ChangeEventType = ChangeEvent['type'];

export const EventPage = z.strictObject({
  data: z.array(ChangeEvent),
  has_more: z.boolean(),
  /** The cursor to ask with next (the last event's id, or the one given when nothing came). */
  next: z.string().min(1),
});
export type EventPage = z.infer<typeof EventPage>;
/** GET /v1/me (extension): the user the bearer token belongs to. */
export const Me = z.strictObject({ id: z.string().min(1) });
export type Me = z.infer<typeof Me>;

// ---- Devices and pairing (extensions of Parley's own server). ----

/** GET /v1/me/devices: one stored token of the caller's user (a device, or a CLI token). */
export const Device = z.strictObject({
  id: Id,
  label: z.string().nullable(),
  created_at: Timestamp,
  last_seen_at: Timestamp.nullable(),
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
export const PairingCreated = z.strictObject({ id: Id, code: z.string().length(PAIRING_CODE_LENGTH), expires_at: Timestamp });
export type PairingCreated = z.infer<typeof PairingCreated>;
/** GET /v1/me/pairings/{id}: what became of a code (label: the device that redeemed it). */
export const Pairing = z.strictObject({
  id: Id,
  status: PairingStatus,
  user: z.string().min(1),
  label: z.string().nullable(),
  created_at: Timestamp,
  expires_at: Timestamp,
});
export type Pairing = z.infer<typeof Pairing>;
/** POST /v1/pairings/redeem: no token, only the secret that collects it once approved. */
export const PairingRedeemed = z.strictObject({ pairing_id: Id, secret: z.string().min(32), expires_at: Timestamp });
export type PairingRedeemed = z.infer<typeof PairingRedeemed>;
/** POST /v1/pairings/{id}/token: the new device's own token (once). */
export const PairingToken = z.strictObject({ token: z.string().min(1), user: z.string().min(1), device_id: Id });
export type PairingToken = z.infer<typeof PairingToken>;

export const PairingRedeemInput = z.strictObject({
  code: z.string().min(1).max(64),
  label: z.string().min(1).max(200).optional(),
});
export const PairingTokenInput = z.strictObject({ secret: z.string().min(1).max(200) });

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
  message: z.string().min(1),
  param: z.string().optional(),
  existing_id: Id.optional(),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

// ---- Inputs. Form bodies carry strings, JSON bodies carry typed values: both are accepted. ----

/** `true`/`false`/`1`/`0`, as JSON booleans, numbers or strings; anything else is invalid. */
export const BooleanInput = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
  z.literal([0, 1]).transform((v) => v === 1),
], { error: 'must be true, false, 1 or 0' });

export const TimestampInput = z.union([
  Timestamp,
  z.string().regex(/^\d{1,12}$/).transform(Number).pipe(Timestamp),
], { error: `must be an integer number of seconds between 0 and ${MAX_TIMESTAMP}` });

/** Empty string or null clears. */
const cleared = z.union([z.literal(''), z.null()]).transform(() => null);

export const ConversationCreateInput = z
  .strictObject({
    contact_id: ExternalId.optional(),
    group_id: ExternalId.optional(),
  })
  .meta({ description: 'Exactly one of contact_id or group_id (neither or both: 400)' });
export type ConversationCreateInput = z.infer<typeof ConversationCreateInput>;

export const ConversationUpdateInput = z.strictObject({
  pinned_message_id: z.union([cleared, Id], { error: 'must be a message id, or empty to clear' }).optional(),
  is_pinned: BooleanInput.optional(),
  is_muted: BooleanInput.optional(),
  archived_at: z.union([cleared, TimestampInput], { error: 'must be integer seconds, or empty/null to restore' }).optional(),
  last_opened_at: TimestampInput.optional(),
});
export type ConversationUpdateInput = z.infer<typeof ConversationUpdateInput>;

// Characters a filename may not contain: path separators, and anything that is invisible or
// changes how the rest of the name displays, so a name always shows as what it is
// ("invoice\u202Efdp.exe" would show as "invoiceexe.pdf"). That is every control character (Cc),
// line/paragraph separator (Zl, Zp), lone surrogate (Cs, not Unicode at all) and format character
// (Cf: bidi embeddings, overrides, isolates and marks, zero-width space, word joiner, BOM, soft
// hyphen, tag characters, …) — with two kinds of exception, because real names need them:
// ZWNJ/ZWJ (U+200C/U+200D) spell words in Persian, the Indic scripts and others, and join emoji
// sequences (👩‍⚕️); and tag characters inside an emoji tag sequence (the flags of England,
// Scotland, Wales: 🏴 + tags + cancel tag). Neither can reorder text or hide an extension.
const FILENAME_FORBIDDEN = /[/\\\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const FILENAME_ALLOWED_FORMAT = /\u200C|\u200D|\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}/gu;

/** Filenames: 1-255 bytes of UTF-8, nothing invisible or display-changing (above), not . or .. */
export function filenameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (FILENAME_FORBIDDEN.test(name.replace(FILENAME_ALLOWED_FORMAT, ''))) {
    return "can't contain / or \\ or invisible control characters";
  }
  if (new TextEncoder().encode(name).length > 255) return 'must be at most 255 bytes';
  if (name === '.' || name === '..') return 'must not be . or ..';
  return null;
}
export const Filename = z
  .string()
  .superRefine((name, ctx) => {
    const problem = filenameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    description:
      '1-255 bytes of UTF-8; no /, \\, control characters or invisible format characters (bidi controls, U+200B, U+FEFF, …); not . or ..',
  });

export const FileUpdateInput = z.strictObject({ filename: Filename });
export type FileUpdateInput = z.infer<typeof FileUpdateInput>;

// ---- Query parameters (strings on the wire). The routes (lib/api/routes) document them, the
// domain reads them with these schemas. ----

/** A list's page size: an integer from 1 to 100 (leading zeros allowed), as a string. */
export const ListLimit = z
  .string()
  .regex(/^(?:0{0,2}[1-9]|0?[1-9]\d|100)$/, 'must be an integer from 1 to 100')
  .meta({ description: 'Page size, 1-100 (default 10)', examples: ['10'] });
export const PageQuery = z.strictObject({
  limit: ListLimit.optional(),
  starting_after: Id.meta({ description: 'The id of an item in the list: the page after it' }).optional(),
  ending_before: Id.meta({ description: 'The id of an item in the list: the page before it' }).optional(),
});

export const FileListQuery = z.strictObject({
  conversation_id: Id.meta({ description: 'Only the files of this conversation (the caller\'s, else 404)' }).optional(),
});

/** An event cursor: opaque, valid for the user it was issued to. */
export const Cursor = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a cursor from this feed');
/** The change feed's page size: an integer from 0 to 1000, as a string. */
export const EventsLimit = z
  .string()
  .regex(/^(?:\d{1,3}|0\d{3}|1000)$/, 'must be an integer from 0 to 1000')
  .meta({ description: '0-1000 (default 100); 0 tells the head cursor', examples: ['100'] });
export const EventsQuery = z.strictObject({
  after: Cursor.meta({ description: 'A cursor: an event id, or a page\'s next' }).optional(),
  limit: EventsLimit.optional(),
});
export const EventStreamQuery = z.strictObject({
  after: Cursor.meta({ description: 'Resume after this cursor (Last-Event-ID wins when both are sent)' }).optional(),
});

/** POST /v1/files (multipart): the file part, and exactly one of conversation_id or message_id. */
export const FileUploadInput = z
  .strictObject({
    file: z.string().meta({
      contentMediaType: 'application/octet-stream',
      description:
        'One part with a filename (1-255 bytes; no /, \\, control or invisible format characters). Its Content-Type is ' +
        'file_type unless absent or application/octet-stream: then the type is sniffed from the bytes and the name.',
    }),
    conversation_id: Id.meta({ description: 'A conversation of the caller: a new message in it carries the file' }).optional(),
    message_id: Id.meta({ description: 'A message of the caller: the file is attached to it' }).optional(),
  })
  .meta({ description: 'The file part, and exactly one of conversation_id or message_id (neither or both: 400)' });

export const ConversationListQuery = z.strictObject({
  muted: BooleanInput.meta({ description: 'true: only muted; false: only not muted' }).optional(),
  archived: BooleanInput.meta({ description: 'true: only archived; false: only not archived' }).optional(),
  pinned: BooleanInput.meta({ description: 'true: only pinned; false: only not pinned' }).optional(),
  group_id: ExternalId.meta({ description: 'Only the conversation of this group' }).optional(),
});
