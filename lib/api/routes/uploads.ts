// Resumable uploads (tus 1.0.0; an extension): /v1/uploads and /v1/uploads/{id}, one handler per
// method (http/tus/handlers.ts). The headers each route documents are the schemas its handler
// parses them with (http/tus/headers.ts). A path's `*` route takes the methods it does not list:
// a POST with X-HTTP-Method-Override goes to that method's handler, anything else is tus's 405
// (after the version check, with Tus-Resumable, as every tus answer).
import { z } from 'zod';
import { Id } from '../../schemas';
import { methodOverride, AppendHeaders, CreationHeaders, UploadHeaders } from '../http/tus/headers';
import { serveTus, tusHandlers } from '../http/tus/handlers';
import { options as tusOptions } from '../http/tus/options';
import { common, empty, error, notFound, ok, publicCommon, retryable, writes, type Responses } from './responses';
import type { Api, Call, Route } from './route';

const schemaHeader = (name: string, description: string, schema: object = { type: 'string' }) => ({ [name]: { description, schema } });
const tusResumable = schemaHeader('Tus-Resumable', 'Always 1.0.0', { type: 'string', const: '1.0.0' });
const offset = schemaHeader('Upload-Offset', 'Bytes stored so far', { type: 'integer', minimum: 0 });
const fileId = schemaHeader('Upload-File-Id', 'Once the last byte is stored: the id of the file it became (GET /v1/files/{id})', { type: 'string', pattern: '^[A-Za-z0-9]{16}$' });
const length = schemaHeader('Upload-Length', 'The declared length', { type: 'integer', minimum: 0 });
const expires = schemaHeader('Upload-Expires', 'While unfinished: when the upload expires (HTTP-date); UPLOAD_EXPIRY_HOURS after its last write');
const applied = schemaHeader('Preference-Applied', 'return=representation when the body is the file', { type: 'string', const: 'return=representation' });

const tus = {
  ...common,
  '412': error('tus_version_unsupported: a Tus-Resumable this server does not speak (Tus-Version lists those it does)'),
};

/** Every answer of the tus handler carries Tus-Resumable, errors too. */
const tusAnswers = (responses: Responses): Responses =>
  Object.fromEntries(Object.entries(responses).map(([status, r]) => [status, { ...r, headers: { ...tusResumable, ...r.headers } }]));

const upload = { path: '/v1/uploads/{id}', tag: 'Uploads', extension: 'uploads', long: true, params: z.strictObject({ id: Id }) } as const;
/** The path's other methods: an overridden POST's handler, or 405. */
const others = (api: Api, { request, user, params }: Call) => serveTus(api.uploads, request, user, params.id);
const options = {
  method: 'OPTIONS',
  tag: 'Uploads',
  extension: 'uploads',
  access: 'public',
  summary: 'What the upload server speaks',
  description: 'No token needed: tus clients probe it first.',
  responses: {
    '204': empty('Tus-Version 1.0.0, Tus-Extension creation,creation-with-upload,termination,expiration, Tus-Max-Size = MAX_UPLOAD_BYTES', {
      ...tusResumable,
      ...schemaHeader('Tus-Version', 'Protocol versions', { type: 'string', const: '1.0.0' }),
      ...schemaHeader('Tus-Extension', 'Extensions', { type: 'string' }),
      ...schemaHeader('Tus-Max-Size', 'MAX_UPLOAD_BYTES', { type: 'integer' }),
    }),
    ...publicCommon,
  },
  handle: (api: Api) => tusOptions(api.config.maxUploadBytes),
} as const satisfies Omit<Route, 'path' | 'operationId'>;

export const uploadRoutes: Route[] = [
  { ...options, path: '/v1/uploads', operationId: 'uploadOptions' },
  {
    method: 'POST',
    path: '/v1/uploads',
    tag: 'Uploads',
    extension: 'uploads',
    long: true,
    operationId: 'createUpload',
    summary: 'Start a resumable upload',
    description:
      'Extension: starts a resumable upload (tus creation, creation-with-upload). Upload-Metadata carries filename, optional filetype, and exactly one of conversation_id / message_id (other keys are ignored); every check of POST /v1/files that needs no bytes is made before any byte is read. A body (Content-Type: application/offset+octet-stream) is the upload\'s first bytes.',
    idempotent: true,
    headers: CreationHeaders,
    body: { schema: null, media: ['application/offset+octet-stream'], required: false, name: '' },
    responses: tusAnswers({
      '201': ok(
        'Created; Location: /v1/uploads/{id}. No body, except when the creation stored the last byte (creation-with-upload) and was asked with Prefer: return=representation: then the file.',
        'File',
        { ...tusResumable, ...schemaHeader('Location', '/v1/uploads/{id}'), ...expires, ...offset, ...length, ...fileId, ...applied },
      ),
      ...tus,
      ...notFound('the conversation or message is not the caller\'s'),
      ...writes,
      '413': error('file_too_large: Upload-Length over MAX_UPLOAD_BYTES (Tus-Max-Size), or a body past Upload-Length'),
      '415': error('unsupported_media_type: a body that is not application/offset+octet-stream'),
      '429': retryable(
        `${common['429'].description}; or too_many_uploads: the user has MAX_OPEN_UPLOADS_PER_USER unfinished uploads (an abandoned one counts until it expires; Retry-After: until the first of them does) — finish or DELETE one`,
      ),
    }),
    handle: (api, call) => (methodOverride(call.request) ? others(api, call) : tusHandlers.POST(api.uploads, call.request, call.user)),
  },
  { method: '*', path: '/v1/uploads', operationId: '', summary: '', tag: 'Uploads', extension: 'uploads', long: true, responses: {}, handle: others },
  { ...options, path: '/v1/uploads/{id}', operationId: 'uploadOptionsOfUpload', params: upload.params },
  {
    ...upload,
    method: 'HEAD',
    operationId: 'getUploadOffset',
    summary: 'Where an upload stands',
    description: 'Its offset and length. Another user\'s upload answers as a missing one. HEAD: no answer has a body.',
    headers: UploadHeaders,
    responses: tusAnswers({
      '200': empty('Where it stands', { ...tusResumable, ...offset, ...length, ...expires, ...fileId }),
      ...Object.fromEntries(Object.entries({ ...tus, ...notFound('no such upload'), '410': error('upload_expired') }).map(([status, r]) => [status, { description: r.description, headers: r.headers }])),
    }),
    handle: (api, { request, user, params }) => tusHandlers.HEAD(api.uploads, request, user, params.id ?? ''),
  },
  {
    ...upload,
    method: 'PATCH',
    operationId: 'appendToUpload',
    summary: 'Append bytes to an upload',
    description:
      'Appends bytes at Upload-Offset. The request that stores the last byte creates the file exactly as POST /v1/files would, once, and answers with Upload-File-Id; a repeat of it answers the same. One PATCH at a time per upload.',
    headers: AppendHeaders,
    body: { schema: null, media: ['application/offset+octet-stream'], required: true, name: '' },
    responses: tusAnswers({
      '200': ok('Stored the last byte, asked with Prefer: return=representation: the file it became', 'File', { ...tusResumable, ...offset, ...length, ...fileId, ...applied }),
      '204': empty('Stored', { ...tusResumable, ...offset, ...length, ...expires, ...fileId }),
      ...tus,
      ...notFound('no such upload'),
      ...writes,
      '409': error(
        'upload_offset_mismatch (Upload-Offset is not the upload\'s, which the answer\'s Upload-Offset tells: resume from there), upload_in_progress (another PATCH holds the upload; retry after Retry-After, what is left of its hold), or upload_chunk_limit (the upload holds MAX_UPLOAD_CHUNKS - 1 pieces: the next PATCH must carry every byte left, and one that ends short keeps nothing)',
        { ...offset, ...length, ...expires, ...fileId, 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
      ),
      '410': error('upload_expired: its bytes were removed'),
      '413': error('file_too_large: the body goes past Upload-Length'),
      '415': error('unsupported_media_type: not application/offset+octet-stream'),
    }),
    handle: (api, { request, user, params }) => tusHandlers.PATCH(api.uploads, request, user, params.id ?? ''),
  },
  {
    ...upload,
    method: 'DELETE',
    operationId: 'deleteUpload',
    summary: 'End an upload',
    description: 'Ends the upload (tus termination) and removes its bytes; the file of a finished upload stays.',
    idempotent: true,
    headers: UploadHeaders,
    responses: tusAnswers({ '204': empty('Ended'), ...tus, ...notFound('no such upload'), ...writes }),
    handle: (api, { request, user, params }) => tusHandlers.DELETE(api.uploads, request, user, params.id ?? ''),
  },
  { ...upload, method: '*', operationId: '', summary: '', responses: {}, handle: others },
];

