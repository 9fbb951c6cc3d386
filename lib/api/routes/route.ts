// What one entry of the route table says: the operation (method and path template), the schemas
// of its inputs, what it answers, and its handler. The service dispatches on the table
// (service.ts, router.ts) and the OpenAPI document is written from it (openapi.ts).
import type { z } from 'zod';
import type { Config, Extension } from '../../config';
import type { ApiReply, ApiRequest } from '../http/exchange';
import type { ApiResult } from '../result';
import type { Conversations } from '../domain/conversations';
import type { Files } from '../domain/files';
import type { IdempotencyStore } from '../domain/idempotency';
import type { ChangeFeed } from '../domain/events';
import type { EventHub } from '../domain/event-hub';
import type { Pairings } from '../domain/pairings';
import type { TusUploads } from '../http/tus/uploads';
import type { EventStream } from '../http/event-stream';
import type { BlobStore } from '../storage/blob-store';
import type { DrainResult } from '../storage/blob-deletions';
import type { Db } from '../storage/db';
import type { Logger } from '../http/log';
import type { Responses } from './responses';
import type { Fields } from '../domain/inputs';
import { readListQuery, refuseQueryParameters, type ListParams } from '../domain/pagination';
import { PageQuery } from '../../schemas';
import { parseInput } from '../domain/validation';
import { invalid } from '../errors';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD' | 'PATCH' | 'OPTIONS';

/** What handlers work with: the service's parts (service.ts builds it). */
export interface Api {
  readonly config: Config;
  readonly db: Db;
  readonly store: BlobStore;
  readonly log: Logger;
  readonly conversations: Conversations;
  readonly files: Files;
  readonly idempotency: IdempotencyStore;
  readonly feed: ChangeFeed;
  readonly hub: EventHub;
  readonly uploads: TusUploads;
  /** Pairing codes (an extension: domain/pairings.ts). */
  readonly pairings: Pairings;
  /** A stored token was revoked: this process's token cache lets go of it at once. */
  forgetToken(tokenId: string): void;
  /** Live event streams of this process (ended at shutdown). */
  readonly streams: Set<EventStream>;
  readonly shuttingDown: boolean;
  /** The origin file_urls are built on (ASSET_URL, or the request's allowed origin). */
  assetBase(request: ApiRequest): string;
  /** After a write that succeeded: this process's live streams of the user look at the feed. */
  written(user: string, result: ApiResult): ApiResult;
  drainBlobDeletions(): Promise<DrainResult>;
  /** The OpenAPI document as JSON text (built once). */
  openapiText(): string;
}

/** One request, matched to a route. `user` is '' on public routes. */
export interface Call {
  request: ApiRequest;
  user: string;
  /** The stored token of the request (its id), or null: a static token, or a public route. */
  tokenId: string | null;
  /** The path template's parameters, e.g. { id } for /v1/files/{id}. */
  params: Record<string, string>;
}

interface RouteFields {
  /** `*`: every method the path's other routes do not take (tus has its own rules; undocumented). */
  method: Method | '*';
  /** The OpenAPI path template: /v1/conversations/{id}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Served only when this extension is on (EXTENSIONS). */
  extension?: Extension;
  /** Public routes: counted per client address (pairing: RATE_LIMIT_PAIRING_PER_MINUTE; address: the limit without a valid token). */
  rateLimit?: 'pairing' | 'address';
  /** Moves bytes for long: takes no fair-share turn (http/fair-share.ts). */
  long?: boolean;
  /** Path parameters. With `missing`, one that fails its schema is a missing <missing> (404), checked before the method. */
  params?: z.ZodObject;
  missing?: string;
  /** Query parameters (documented; the handler or the domain reads them with these schemas). */
  query?: z.ZodObject;
  /** Request headers (documented). */
  headers?: z.ZodObject;
  /** Takes Idempotency-Key; its answers may be replays (Idempotent-Replayed). */
  idempotent?: boolean;
  /** A body: fields validated by `schema` (a component named `name` in the document), or raw bytes (schema null). */
  body?: { schema: z.ZodType | null; media: readonly string[]; required: boolean; name: string };
  responses: Responses;
}

/**
 * `access` — public: no token (and a method the path does not take is refused before any token is
 * asked for); stream: a token, but no rate-limit charge or fair-share turn, and the handler answers
 * with a raw reply; default: a token, the rate limits and a fair-share turn. Only a stream's
 * handler answers with a raw reply, so the type says which handler answers what.
 */
export type Route =
  | (RouteFields & { access?: 'public'; handle(api: Api, call: Call): Promise<ApiResult> | ApiResult })
  | (RouteFields & { access: 'stream'; handle(api: Api, call: Call): Promise<ApiReply> });

/** Bodies of POST/PUT that carry fields (http/body.ts reads all three). */
const FIELD_MEDIA = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'] as const;

/**
 * A body of fields, described once: the route's `body` documents it and its `parse` is what the
 * handler validates the fields with (the contract's 400s: missing, unknown or invalid field). The
 * domain is given the parsed input, so no schema is written, or parsed, twice.
 */
export function fieldsBody<S extends z.ZodType>(schema: S, name: string, required: boolean) {
  return { schema, media: FIELD_MEDIA, required, name, parse: (fields: Fields): z.output<S> => parseInput(schema, fields) };
}

/**
 * A list's query, described once: the page (limit, starting_after, ending_before: pagination.ts
 * reads them, with the contract's cursor errors) and the list's own filters, parsed by `filters`.
 */
export function listQueryOf<S extends z.ZodObject>(filters: S) {
  const names = Object.keys(filters.shape);
  return {
    schema: filters.extend(PageQuery.shape),
    parse(query: URLSearchParams): { list: ListParams; filters: z.output<S> } {
      const read = readListQuery(query, names);
      return { list: read.list, filters: parseInput(filters, read.filters) };
    },
  };
}

/**
 * A query of named parameters, described once: the route's `query` is `schema`, and `parse`
 * validates the request's query with it (a parameter given twice is refused, as list queries do).
 */
export function queryOf<S extends z.ZodObject>(schema: S) {
  return {
    schema,
    parse(query: URLSearchParams): z.output<S> {
      const values: Record<string, string> = Object.create(null);
      for (const [name, value] of query) {
        if (Object.hasOwn(values, name)) throw invalid(name, `${name} was given more than once`);
        values[name] = value;
      }
      return parseInput(schema, values);
    },
  };
}

/**
 * After a delete: the rows are gone (committed), their keys queued in the same transaction; now
 * the bytes. A removal that fails stays queued and is retried.
 */
export async function afterDelete(api: Api, user: string, result: ApiResult): Promise<ApiResult> {
  await api.drainBlobDeletions().catch((error) => api.log.error('[parley] a blob deletion pass failed:', error));
  return api.written(user, result);
}

/**
 * A DELETE of one resource, by id: idempotent by key, one write (the cascade and the trigger that
 * queues the bytes are part of the one statement), 204; then the bytes (afterDelete).
 */
export async function deleteOne(api: Api, { request, user }: Call, remove: (trx: Db) => Promise<void>): Promise<ApiResult> {
  refuseQueryParameters(request.query);
  const result = await api.idempotency.run(
    user,
    request.header('idempotency-key'),
    () => ({ method: 'DELETE', path: request.path, content: {} }),
    async (trx) => {
      await remove(trx);
      return { status: 204 };
    },
    { singleWrite: true, audit: request.audit },
  );
  return afterDelete(api, user, result);
}
