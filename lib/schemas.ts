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

export const ErrorCode = z.enum([
  'unauthenticated',
  'parameter_invalid',
  'parameter_missing',
  'parameter_unknown',
  'resource_missing',
  'method_not_allowed',
  'conversation_exists',
  'idempotency_conflict',
  'file_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  // Proxy mode only: the upstream service could not be reached or did not answer in time.
  'upstream_unavailable',
  'upstream_timeout',
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

export const ConversationCreateInput = z.strictObject({
  contact_id: ExternalId.optional(),
  group_id: ExternalId.optional(),
});
export type ConversationCreateInput = z.infer<typeof ConversationCreateInput>;

export const ConversationUpdateInput = z.strictObject({
  pinned_message_id: z.union([cleared, Id], { error: 'must be a message id, or empty to clear' }).optional(),
  is_pinned: BooleanInput.optional(),
  is_muted: BooleanInput.optional(),
  archived_at: z.union([cleared, TimestampInput], { error: 'must be integer seconds, or empty/null to restore' }).optional(),
  last_opened_at: TimestampInput.optional(),
});
export type ConversationUpdateInput = z.infer<typeof ConversationUpdateInput>;

/** Filenames: 1-255 bytes of UTF-8, no path separators, NUL or control characters, not . or .. */
export function filenameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (new TextEncoder().encode(name).length > 255) return 'must be at most 255 bytes';
  // eslint-disable-next-line no-control-regex
  if (/[\/\\\u0000-\u001f\u007f-\u009f]/.test(name)) return 'must not contain /, \\, NUL or control characters';
  if (name === '.' || name === '..') return 'must not be . or ..';
  return null;
}
export const Filename = z.string().superRefine((name, ctx) => {
  const problem = filenameProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const FileUpdateInput = z.strictObject({ filename: Filename });
export type FileUpdateInput = z.infer<typeof FileUpdateInput>;

export const ConversationListQuery = z.strictObject({
  muted: BooleanInput.optional(),
  archived: BooleanInput.optional(),
  pinned: BooleanInput.optional(),
  group_id: ExternalId.optional(),
});
