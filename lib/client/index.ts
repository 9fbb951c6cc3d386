// A typed client for TypeScript consumers of /v1: openapi-fetch over the types that
// `npm run client:generate` writes to ./v1.ts from the OpenAPI document the server serves.
// Every path, parameter, body and answer (the error body too) is typed by the document:
//
//   const parley = createParleyClient({ baseUrl: 'http://localhost:3000', token });
//   const { data, error } = await parley.GET('/v1/conversations', { params: { query: { limit: 20 } } });
//
// Uploads (multipart POST /v1/files) need `bodySerializer: multipart`; see uploadFile below.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './v1';

export type { components, operations, paths } from './v1';
export type Conversation = components['schemas']['Conversation'];
export type ParleyFile = components['schemas']['File'];
export type ApiError = components['schemas']['Error'];
export type ParleyClient = Client<paths>;

export interface ParleyClientOptions {
  /** The server's origin, e.g. `http://localhost:3000` (the paths carry `/v1`). */
  baseUrl: string;
  /** The bearer token, or a function asked before every request (for a token that changes). */
  token: string | (() => string | Promise<string>);
  /** A fetch of your own (tests, a proxy, a runtime without a global fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

export function createParleyClient({ baseUrl, token, fetch }: ParleyClientOptions): ParleyClient {
  const client = createClient<paths>({ baseUrl: baseUrl.replace(/\/+$/, ''), ...(fetch ? { fetch } : {}) });
  client.use({
    async onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
      return request;
    },
  });
  return client;
}

/**
 * The body serializer of a multipart operation (POST /v1/files): each field a part, a Blob as a
 * file part (a File keeps its name; a plain Blob is sent as "blob"). fetch then sets the
 * Content-Type with its boundary.
 */
export function multipart(body: object): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (value instanceof Blob) form.append(name, value);
    else form.append(name, String(value));
  }
  return form;
}

type UploadBody = NonNullable<paths['/v1/files']['post']['requestBody']>['content']['multipart/form-data'];

/** POST /v1/files: `file` is a Blob or a File (whose name becomes the file's name). */
export function uploadFile(client: ParleyClient, body: UploadBody, options: { idempotencyKey?: string } = {}) {
  return client.POST('/v1/files', {
    body,
    bodySerializer: multipart,
    params: { header: options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {} },
  });
}
