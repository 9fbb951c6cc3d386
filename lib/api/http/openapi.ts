// OpenAPI 3.1 description of /v1, built from the same zod schemas the server and tests use.
import { z } from 'zod';
import { ApiErrorBody, ChangeEvent, Conversation, ConversationPage, EventPage, FileObject, FilePage, Me } from '../../schemas';

const schema = (s: z.ZodType) => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  return rest;
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: ref(name) } });
const error = (description: string) => ({ description, content: json('Error') });
const retryAfter = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
const retryable = (description: string) => ({ ...error(description), headers: retryAfter });

const idParam = (name: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9]{16}$' },
});
const boolQuery = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
});
const pageParams = [
  { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
  { name: 'starting_after', in: 'query', required: false, schema: { type: 'string' }, description: 'id of an item in the list: the page after it' },
  { name: 'ending_before', in: 'query', required: false, schema: { type: 'string' }, description: 'id of an item in the list: the page before it' },
];
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Extension (advertised by the Idempotency response header): the first response below 500 for (user, key) is stored for 24 h and replayed for a repeat, with Idempotent-Replayed: true.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
const common = {
  '400': error('Invalid, missing or unknown parameter (query or body); malformed body; a Host that is not allowed'),
  '401': error('Missing or unknown bearer token'),
  '405': error('Method not allowed (see Allow)'),
  '429': retryable(
    'rate_limited: this token (or, without a valid token, this client address) made more requests than its limit (RATE_LIMIT_*: a sustained rate per second and a reserve for bursts); retry after Retry-After',
  ),
};
/** What a write may answer when the storage cannot take it: retryable, nothing was stored. */
const storage = {
  '503': retryable('service_unavailable: the database is read-only or unreachable; retry after Retry-After'),
  '507': retryable('insufficient_storage: the disk or the database is full; nothing was stored; retry later'),
};
const conflict = (also?: string) =>
  retryable(
    `${also ? `${also}, ` : ''}idempotency_conflict (the key was used for another request), or idempotency_in_progress ` +
      '(a request with this key is still running: retry after Retry-After with the same key)',
  );
const formBody = (props: Record<string, unknown>, required: string[] = []) => {
  const body = { type: 'object', properties: props, required, additionalProperties: false };
  return {
    content: {
      'application/json': { schema: body },
      'application/x-www-form-urlencoded': { schema: body },
      'multipart/form-data': { schema: body },
    },
  };
};

/** Every response of every operation says whether the Idempotency-Key extension is on. */
function advertiseIdempotency<T extends { paths: Record<string, Record<string, unknown>> }>(doc: T): T {
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      const responses = (operation as { responses?: Record<string, { headers?: object }> }).responses;
      for (const [status, response] of Object.entries(responses ?? {})) {
        responses![status] = { ...response, headers: { ...response.headers, Idempotency: { $ref: '#/components/headers/Idempotency' } } };
      }
    }
  }
  return doc;
}

export function openApiDocument() {
  return advertiseIdempotency(document());
}

/** Resumable uploads (tus 1.0.0; lib/api/http/tus.ts). Its headers are the protocol's. */
function uploadPaths() {
  const header = (name: string, description: string, schema: object = { type: 'string' }) => ({ [name]: { description, schema } });
  const tusResumable = header('Tus-Resumable', 'Always 1.0.0', { type: 'string', const: '1.0.0' });
  const offset = header('Upload-Offset', 'Bytes stored so far', { type: 'integer', minimum: 0 });
  const fileId = header('Upload-File-Id', 'Once the last byte is stored: the id of the file it became (GET /v1/files/{id})', { type: 'string', pattern: '^[A-Za-z0-9]{16}$' });
  const expires = header('Upload-Expires', 'While unfinished: when the upload expires (HTTP-date); UPLOAD_EXPIRY_HOURS after its last write', { type: 'string' });
  // The contract's error shape; the tus codes (upload_offset_mismatch, upload_in_progress, upload_expired, tus_version_unsupported) are among its codes.
  const tusError = error;
  const hdr = (name: string, required = false, schema: object = { type: 'string' }) => ({ name, in: 'header', required, schema });
  const prefer = {
    ...hdr('Prefer', false, { type: 'string', examples: ['return=representation'] }),
    description: 'return=representation: the request that stores the last byte (or a repeat of it) answers with the file as its body (the File, as GET /v1/files/{id} answers it), so no GET is needed after it',
  };
  const applied = header('Preference-Applied', 'return=representation when the body is the file', { type: 'string', const: 'return=representation' });
  // One per path: an operationId must be unique in the document (openapi-typescript refuses it otherwise).
  const options = (operationId: string) => ({
    operationId,
    security: [],
    description: 'What the server speaks. No token needed: tus clients probe it first.',
    responses: {
      '204': {
        description: 'Tus-Version 1.0.0, Tus-Extension creation,creation-with-upload,termination,expiration, Tus-Max-Size = MAX_UPLOAD_BYTES',
        headers: {
          ...tusResumable,
          ...header('Tus-Version', 'Protocol versions', { type: 'string', const: '1.0.0' }),
          ...header('Tus-Extension', 'Extensions', { type: 'string' }),
          ...header('Tus-Max-Size', 'MAX_UPLOAD_BYTES', { type: 'integer' }),
        },
      },
    },
  });
  return {
    '/v1/uploads': {
      options: options('uploadOptions'),
      post: {
        operationId: 'createUpload',
        description:
          'Extension: starts a resumable upload (tus creation, creation-with-upload). Upload-Metadata carries filename, optional filetype, and exactly one of conversation_id / message_id (other keys are ignored); every check of POST /v1/files that needs no bytes is made before any byte is read. A body (Content-Type: application/offset+octet-stream) is the upload\'s first bytes.',
        parameters: [
          idempotencyKey,
          hdr('Tus-Resumable', false, { type: 'string', const: '1.0.0' }),
          hdr('Upload-Length', true, { type: 'integer', minimum: 0 }),
          hdr('Upload-Metadata', true),
          prefer,
        ],
        requestBody: { required: false, content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        responses: {
          '201': {
            description:
              'Created; Location: /v1/uploads/{id}. No body, except when the creation stored the last byte (creation-with-upload) and was asked with Prefer: return=representation: then the file.',
            headers: { ...tusResumable, ...header('Location', '/v1/uploads/{id}'), ...expires, ...offset, ...fileId, ...applied },
            content: json('File'),
          },
          ...common,
          '404': error('resource_missing: the conversation or message is not the caller\'s'),
          '409': conflict(),
          '413': error('file_too_large: Upload-Length over MAX_UPLOAD_BYTES (Tus-Max-Size), or a body past Upload-Length'),
          '415': error('A body that is not application/offset+octet-stream'),
          ...storage,
        },
      },
    },
    '/v1/uploads/{id}': {
      parameters: [idParam('id')],
      options: options('uploadOptionsOfUpload'),
      head: {
        operationId: 'getUploadOffset',
        description: 'Where the upload stands. Another user\'s upload answers as a missing one.',
        responses: {
          '200': { description: 'No body', headers: { ...tusResumable, ...offset, ...header('Upload-Length', 'The declared length', { type: 'integer' }), ...expires, ...fileId } },
          '401': { description: 'Missing or unknown bearer token (no body: HEAD)' },
          '404': { description: 'No such upload (no body: HEAD)' },
          '410': { description: 'upload_expired (no body: HEAD)' },
        },
      },
      patch: {
        operationId: 'appendToUpload',
        description:
          'Appends bytes at Upload-Offset. The request that stores the last byte creates the file exactly as POST /v1/files would, once, and answers with Upload-File-Id; a repeat of it answers the same. One PATCH at a time per upload.',
        parameters: [hdr('Tus-Resumable', false, { type: 'string', const: '1.0.0' }), hdr('Upload-Offset', true, { type: 'integer', minimum: 0 }), prefer],
        requestBody: { required: true, content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        responses: {
          '200': {
            description: 'Stored the last byte, asked with Prefer: return=representation: the file it became',
            headers: { ...tusResumable, ...offset, ...fileId, ...applied },
            content: json('File'),
          },
          '204': { description: 'Stored', headers: { ...tusResumable, ...offset, ...expires, ...fileId } },
          ...common,
          '404': error('resource_missing'),
          '409': tusError('upload_offset_mismatch (Upload-Offset is not the upload\'s: HEAD, then resume), or upload_in_progress (another PATCH holds the upload; retry after Retry-After)'),
          '410': tusError('upload_expired: its bytes were removed'),
          '413': error('file_too_large: the body goes past Upload-Length'),
          '415': error('Not application/offset+octet-stream'),
          ...storage,
        },
      },
      delete: {
        operationId: 'deleteUpload',
        description: 'Ends the upload (tus termination) and removes its bytes; the file of a finished upload stays.',
        parameters: [idempotencyKey],
        responses: { '204': { description: 'Ended', headers: tusResumable }, ...common, '404': error('resource_missing'), '409': conflict() },
      },
    },
  };
}

function document() {
  const boolInput = { oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false', '1', '0'] }] };
  const secondsInput = { oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '^\\d+$' }] };
  const clearable = (s: object) => ({ oneOf: [s, { type: 'string', const: '' }, { type: 'null' }] });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Parley /v1',
      version: '1.0.0',
      description:
        'Conversations and files. Every operation is scoped to the user of the bearer token. ' +
        'Query parameters other than a list\'s own are refused on every operation, writes included (400 parameter_unknown, ' +
        'with the param); so are body fields outside an operation\'s own, __proto__ among them. Without ASSET_URL, a request ' +
        'whose Host is not allowed (ALLOWED_HOSTS; by default this machine\'s names and addresses on the server\'s port) ' +
        'is refused: 400 parameter_invalid, param Host. ' +
        'Limits: requests per token (and per client address without a valid token) are rate limited, 429 rate_limited with Retry-After in seconds ' +
        '(RATE_LIMIT_PER_SECOND sustained, RATE_LIMIT_BURST in reserve; shared by all instances on one PostgreSQL database); one user\'s requests ' +
        'are worked on at most MAX_REQUESTS_IN_FLIGHT_PER_USER (default 4) at once per instance, the rest wait their turn (beyond ' +
        'MAX_REQUESTS_QUEUED_PER_USER waiting: 429); live streams per user ' +
        '(MAX_STREAMS_PER_USER, default 10, per instance) and in all (MAX_STREAMS): 429. Requests to switch protocols (Upgrade: no WebSocket here), ' +
        '`*` and absolute-form request targets: 400 parameter_invalid, and the connection is closed. Event cursors are opaque and per user.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: {
      '/v1/conversations': {
        get: {
          operationId: 'listConversations',
          parameters: [
            boolQuery('muted', 'true: only muted; false: only not muted'),
            boolQuery('archived', 'true: only archived; false: only not archived'),
            boolQuery('pinned', 'true: only pinned; false: only not pinned'),
            { name: 'group_id', in: 'query', required: false, schema: { type: 'string' } },
            ...pageParams,
          ],
          responses: { '200': { description: 'A page, newest first', content: json('ConversationPage') }, ...common },
        },
        post: {
          operationId: 'createConversation',
          parameters: [idempotencyKey],
          requestBody: { required: true, ...formBody({ contact_id: { type: 'string' }, group_id: { type: 'string' } }) },
          responses: {
            '201': { description: 'Created', content: json('Conversation') },
            ...common,
            '409': conflict('conversation_exists (with existing_id)'),
            '415': error('Unsupported Content-Type'),
            ...storage,
          },
        },
      },
      '/v1/conversations/{id}': {
        parameters: [idParam('id')],
        get: {
          operationId: 'retrieveConversation',
          responses: { '200': { description: 'The conversation', content: json('Conversation') }, ...common, '404': error('No such conversation') },
        },
        put: {
          operationId: 'updateConversation',
          parameters: [idempotencyKey],
          requestBody: formBody({
            pinned_message_id: clearable({ type: 'string' }),
            is_pinned: boolInput,
            is_muted: boolInput,
            archived_at: clearable(secondsInput),
            last_opened_at: secondsInput,
          }),
          responses: {
            '200': { description: 'The updated conversation', content: json('Conversation') },
            ...common,
            '404': error('No such conversation'),
            '409': conflict(),
            '415': error('Unsupported Content-Type'),
            ...storage,
          },
        },
        delete: {
          operationId: 'deleteConversation',
          parameters: [idempotencyKey],
          responses: {
            '204': { description: 'Deleted with its messages, files and bytes' },
            ...common,
            '404': error('No such conversation'),
            '409': conflict(),
            ...storage,
          },
        },
      },
      '/v1/me': {
        get: {
          operationId: 'retrieveMe',
          description: 'Extension: the user the bearer token belongs to (a device keys its local data by user, not by token).',
          responses: { '200': { description: 'The token’s user', content: json('Me') }, ...common },
        },
      },
      '/v1/files': {
        get: {
          operationId: 'listFiles',
          parameters: [{ name: 'conversation_id', in: 'query', required: false, schema: { type: 'string' } }, ...pageParams],
          responses: { '200': { description: 'A page, newest first', content: json('FilePage') }, ...common, '404': error('No such conversation') },
        },
        post: {
          operationId: 'uploadFile',
          parameters: [idempotencyKey],
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  properties: {
                    file: {
                      type: 'string',
                      contentMediaType: 'application/octet-stream',
                      description:
                        'One part with a filename (1-255 bytes; no /, \\, control or invisible format characters). Its Content-Type is ' +
                        'file_type unless absent or application/octet-stream: then the type is sniffed from the bytes and the name.',
                    },
                    conversation_id: { type: 'string' },
                    message_id: { type: 'string' },
                  },
                  required: ['file'],
                },
              },
            },
          },
          responses: {
            '201': { description: 'Stored', content: json('File') },
            ...common,
            '404': error('No such conversation or message'),
            '409': conflict(),
            '413': error('file_too_large'),
            '415': error('Not multipart/form-data'),
            ...storage,
          },
        },
      },
      '/v1/files/{id}': {
        parameters: [idParam('id')],
        get: {
          operationId: 'retrieveFile',
          responses: { '200': { description: 'The file', content: json('File') }, ...common, '404': error('No such file') },
        },
        put: {
          operationId: 'renameFile',
          parameters: [idempotencyKey],
          requestBody: {
            required: true,
            ...formBody(
              {
                filename: {
                  type: 'string',
                  minLength: 1,
                  description: '1-255 bytes of UTF-8; no /, \\, control characters or invisible format characters (bidi controls, U+200B, U+FEFF, …); not . or ..',
                },
              },
              ['filename'],
            ),
          },
          responses: {
            '200': { description: 'The renamed file, with a new file_url', content: json('File') },
            ...common,
            '404': error('No such file'),
            '409': conflict(),
            '415': error('Unsupported Content-Type'),
            ...storage,
          },
        },
        delete: {
          operationId: 'deleteFile',
          parameters: [idempotencyKey],
          responses: { '204': { description: 'Deleted with its bytes' }, ...common, '404': error('No such file'), '409': conflict(), ...storage },
        },
      },
      '/v1/events': {
        get: {
          operationId: 'listEvents',
          description:
            'Extension: the change feed. Changes to the caller\'s conversations and files after a cursor, oldest first, each with the object as GET returns it now (or {id} for a deletion); several changes of one object within a page collapse into its last. Without `after`, or with limit=0, tells the head cursor to follow from after a full listing.',
          parameters: [
            { name: 'after', in: 'query', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' }, description: 'A cursor (opaque, valid for the user it was issued to): an event id, or a page\'s next' },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 1000, default: 100 } },
          ],
          responses: {
            '200': { description: 'Events after the cursor', content: json('EventPage') },
            ...common,
            '410': error('events_expired: the cursor is older than the retention (or from another database); list everything again'),
          },
        },
      },
      '/v1/events/stream': {
        get: {
          operationId: 'streamEvents',
          description:
            'Extension: the change feed live, as Server-Sent Events. Each message carries `id: <cursor>` and `data: <an Event>`; a comment line is sent at least every 30 s. Resumes after the `Last-Event-ID` header (or `after`), else from the head. An `event: error` message with an Error body (events_expired; unauthenticated once the token is no longer accepted, re-checked at least every 10 s) ends the stream.',
          parameters: [
            { name: 'after', in: 'query', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
            { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
          ],
          responses: {
            '200': { description: 'An endless text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            ...common,
            '410': error('events_expired'),
            '429': retryable('rate_limited: as many live streams are open as this instance takes (MAX_STREAMS_PER_USER per user, MAX_STREAMS in all); retry after Retry-After'),
          },
        },
      },
      ...uploadPaths(),
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      headers: {
        Idempotency: {
          description: 'On every /v1 response when the server honours Idempotency-Key (absent otherwise): clients need not learn it from a replay.',
          schema: { type: 'string', const: 'supported' },
        },
        'Retry-After': { description: 'Seconds to wait before retrying the same request (with the same Idempotency-Key).', schema: { type: 'integer', minimum: 1 } },
      },
      schemas: {
        Conversation: schema(Conversation),
        File: schema(FileObject),
        ConversationPage: schema(ConversationPage),
        FilePage: schema(FilePage),
        Event: schema(ChangeEvent),
        EventPage: schema(EventPage),
        Me: schema(Me),
        Error: schema(ApiErrorBody),
      },
    },
  };
}
