// OpenAPI 3.1 description of /v1, built from the same zod schemas the server and tests use.
import { z } from 'zod';
import { ApiErrorBody, Conversation, ConversationPage, FileObject, FilePage } from '../schemas';

const schema = (s: z.ZodType) => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  return rest;
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: ref(name) } });
const error = (description: string) => ({ description, content: json('Error') });

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
  description: 'Extension: the first response for (user, key) is stored for 24 h and replayed for a repeat.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
const common = {
  '400': error('Invalid, missing or unknown parameter; malformed body'),
  '401': error('Missing or unknown bearer token'),
  '405': error('Method not allowed (see Allow)'),
};
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

export function openApiDocument() {
  const boolInput = { oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false', '1', '0'] }] };
  const secondsInput = { oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '^\\d+$' }] };
  const clearable = (s: object) => ({ oneOf: [s, { type: 'string', const: '' }, { type: 'null' }] });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Parley /v1',
      version: '1.0.0',
      description: 'Conversations and files. Every operation is scoped to the user of the bearer token.',
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
            '409': error('conversation_exists (with existing_id) or idempotency_conflict'),
            '415': error('Unsupported Content-Type'),
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
            '409': error('idempotency_conflict'),
            '415': error('Unsupported Content-Type'),
          },
        },
        delete: {
          operationId: 'deleteConversation',
          parameters: [idempotencyKey],
          responses: { '204': { description: 'Deleted with its messages, files and bytes' }, ...common, '404': error('No such conversation') },
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
                    file: { type: 'string', contentMediaType: 'application/octet-stream' },
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
            '409': error('idempotency_conflict'),
            '413': error('file_too_large'),
            '415': error('Not multipart/form-data'),
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
          requestBody: { required: true, ...formBody({ filename: { type: 'string', minLength: 1 } }, ['filename']) },
          responses: {
            '200': { description: 'The renamed file, with a new file_url', content: json('File') },
            ...common,
            '404': error('No such file'),
            '409': error('idempotency_conflict'),
            '415': error('Unsupported Content-Type'),
          },
        },
        delete: {
          operationId: 'deleteFile',
          parameters: [idempotencyKey],
          responses: { '204': { description: 'Deleted with its bytes' }, ...common, '404': error('No such file') },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Conversation: schema(Conversation),
        File: schema(FileObject),
        ConversationPage: schema(ConversationPage),
        FilePage: schema(FilePage),
        Error: schema(ApiErrorBody),
      },
    },
  };
}
