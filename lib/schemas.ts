// The API's inputs: bodies and query parameters, one zod schema each, built on the objects the
// server sends (lib/objects.ts, re-exported here so this stays the one place to import a schema
// from on the server). The server reads requests with them, the client validates input with them
// before queueing, and the OpenAPI document is generated from both.
import { z } from 'zod';
import { filenameProblem } from './name-rules';
import { ExternalId, Id, MAX_TIMESTAMP, Timestamp } from './objects';

export * from './objects';

export const PairingRedeemInput = z.strictObject({
  code: z.string().min(1).max(64),
  label: z.string().min(1).max(200).optional(),
});
export const PairingTokenInput = z.strictObject({ secret: z.string().min(1).max(200) });

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
    contact_id: z.optional(ExternalId),
    group_id: z.optional(ExternalId),
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

export { filenameProblem } from './name-rules';

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
  starting_after: z.optional(Id.check(z.meta({ description: 'The id of an item in the list: the page after it' }))),
  ending_before: z.optional(Id.check(z.meta({ description: 'The id of an item in the list: the page before it' }))),
});

export const FileListQuery = z.strictObject({
  conversation_id: z.optional(Id.check(z.meta({ description: 'Only the files of this conversation (the caller\'s, else 404)' }))),
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
    conversation_id: z.optional(Id.check(z.meta({ description: 'A conversation of the caller: a new message in it carries the file' }))),
    message_id: z.optional(Id.check(z.meta({ description: 'A message of the caller: the file is attached to it' }))),
  })
  .meta({ description: 'The file part, and exactly one of conversation_id or message_id (neither or both: 400)' });

export const ConversationListQuery = z.strictObject({
  muted: BooleanInput.meta({ description: 'true: only muted; false: only not muted' }).optional(),
  archived: BooleanInput.meta({ description: 'true: only archived; false: only not archived' }).optional(),
  pinned: BooleanInput.meta({ description: 'true: only pinned; false: only not pinned' }).optional(),
  group_id: z.optional(ExternalId.check(z.meta({ description: 'Only the conversation of this group' }))),
});
export type ConversationListQuery = z.output<typeof ConversationListQuery>;
