// The OpenAPI 3.1 description of /v1, written from the route table (./routes) the service
// dispatches on: its operations, their parameters and request bodies from the zod schemas that
// validate them, and response bodies from the zod schemas responses are built from.
import { z } from 'zod';
import { ApiErrorBody, ChangeEvent, Conversation, ConversationPage, Device, DevicePage, EventPage, FileObject, FilePage, Me, Pairing, PairingCreated, PairingRedeemed, PairingToken } from '../schemas';
import { IdempotencyKey } from './domain/idempotency';
import { ROUTES, type Route } from './routes';
import { HEADERS } from './routes/responses';

const COMPONENTS = '#/components/schemas/';

/** Components named by their id; a schema used inside another is a $ref to it. */
function components(schemas: Record<string, z.core.$ZodType>, io: 'input' | 'output'): Record<string, object> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const { schemas: out } = z.toJSONSchema(registry, { target: 'draft-2020-12', io, uri: (id) => `${COMPONENTS}${id}` });
  return Object.fromEntries(Object.entries(out).map(([id, { $schema: _s, $id: _i, ...rest }]) => [id, rest]));
}

const inputSchema = (schema: z.core.$ZodType): Record<string, unknown> => {
  const { $schema: _ignored, ...rest }: Record<string, unknown> = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' });
  return rest;
};

/** An object schema's fields as OpenAPI parameters (its description lifted to the parameter). */
function parameters(object: z.ZodObject | undefined, where: 'path' | 'query' | 'header') {
  return Object.entries(object?.shape ?? {}).map(([name, field]) => {
    const inner = field instanceof z.ZodOptional ? field.unwrap() : field;
    const optional = inner !== field;
    const { description, ...schema } = inputSchema(inner);
    return { name, in: where, required: where === 'path' || !optional, ...(description ? { description } : {}), schema };
  });
}

function operation(route: Route, bodies: Record<string, z.ZodType>) {
  const params = [...parameters(route.params, 'path'), ...parameters(route.query, 'query'), ...parameters(route.headers, 'header')];
  if (route.idempotent) params.push(...parameters(z.strictObject({ 'Idempotency-Key': IdempotencyKey.optional() }), 'header'));
  let requestBody: object | undefined;
  if (route.body) {
    const { schema, name, media, required } = route.body;
    if (schema) bodies[name] = schema;
    const body = schema ? { $ref: `${COMPONENTS}${name}` } : { type: 'string', format: 'binary' };
    requestBody = { required, content: Object.fromEntries(media.map((type) => [type, { schema: body }])) };
  }
  // Every answer says whether the Idempotency-Key extension is on; those of a write may be replays.
  const responses = Object.fromEntries(
    Object.entries(route.responses).map(([status, response]) => {
      const headers: Record<string, unknown> = { ...response.headers, Idempotency: { $ref: '#/components/headers/Idempotency' } };
      // Counted requests (every one with a token, and the public ones with a limit of their own) say where they stand.
      if (route.access !== 'stream' && (route.access !== 'public' || route.rateLimit)) {
        headers['RateLimit-Policy'] = { $ref: '#/components/headers/RateLimit-Policy' };
        headers.RateLimit = { $ref: '#/components/headers/RateLimit' };
      }
      if (route.idempotent && Number(status) < 500) headers['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
      return [status, { ...response, headers }];
    }),
  );
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.access === 'public' ? { security: [] } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  const bodies: Record<string, z.ZodType> = {};
  for (const route of ROUTES) {
    if (route.method === '*') continue;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, bodies);
  }
  const responses = { Conversation, File: FileObject, ConversationPage, FilePage, Event: ChangeEvent, EventPage, Me, Device, DevicePage, PairingCreated, Pairing, PairingRedeemed, PairingToken, Error: ApiErrorBody };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Parley /v1',
      version: '1.0.0',
      description:
        'Conversations and files. Every operation is scoped to the user of the bearer token. ' +
        'Query parameters other than a list\'s own are refused on every operation, writes included (400 parameter_unknown, ' +
        'with the param); so are body fields outside an operation\'s own, __proto__ among them. Booleans in bodies and queries: ' +
        'true/false/1/0 (JSON booleans or numbers, or strings). Without ASSET_URL, a request ' +
        'whose Host is not allowed (ALLOWED_HOSTS; by default this machine\'s names and addresses on the server\'s port) ' +
        'is refused: 400 parameter_invalid, param Host. ' +
        'Limits: requests per token (and per client address without a valid token) are rate limited, 429 rate_limited with Retry-After in seconds ' +
        '(RATE_LIMIT_PER_SECOND sustained, RATE_LIMIT_BURST in reserve; shared by all instances on one PostgreSQL database), and every counted ' +
        'answer says where the token stands (RateLimit-Policy and RateLimit, draft-ietf-httpapi-ratelimit-headers); one user\'s requests ' +
        'are worked on at most MAX_REQUESTS_IN_FLIGHT_PER_USER (default 4) at once per instance, the rest wait their turn (beyond ' +
        'MAX_REQUESTS_QUEUED_PER_USER waiting: 429); live streams per user ' +
        '(MAX_STREAMS_PER_USER, default 10, per instance) and in all (MAX_STREAMS): 429. Requests to switch protocols (Upgrade: no WebSocket here), ' +
        '`*` and absolute-form request targets: 400 parameter_invalid, and the connection is closed. Event cursors are opaque and per user.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'Conversations', description: 'The caller\'s conversations' },
      { name: 'Files', description: 'Files attached to messages of the caller\'s conversations' },
      { name: 'Events', description: 'Extension: the change feed, listed and live' },
      { name: 'Uploads', description: 'Extension: resumable uploads (tus 1.0.0)' },
      { name: 'Service', description: 'What the service says about itself and the caller' },
      { name: 'Devices', description: 'Extension of Parley\'s own server: the caller\'s devices, and pairing a new one with a short code' },
    ],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      headers: HEADERS,
      schemas: { ...components(responses, 'output'), ...components(bodies, 'input') },
    },
  };
}
