// The answers routes document: OpenAPI response objects, with the errors every route shares.
// Component names (Conversation, Error, …) are the schemas of openapi.ts.

/** An OpenAPI response object: its headers and content as the document writes them. */
export interface ResponseObject {
  description: string;
  headers?: object;
  content?: object;
}
export type Responses = Record<string, ResponseObject>;

const header = (name: string) => ({ [name]: { $ref: `#/components/headers/${name}` } });
const json = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });

/** A success with a JSON body: the component `schema`. */
export const ok = (description: string, schema: string, headers: object = {}) => ({ description, headers, content: json(schema) });
/** A success without a body. */
export const empty = (description: string, headers: object = {}) => ({ description, headers });
/** An error in the contract's shape. */
export const error = (description: string, headers: object = {}) => ({ description, headers, content: json('Error') });
export const retryable = (description: string) => error(description, header('Retry-After'));

/** What any route of a user may answer besides its own. */
export const common = {
  '400': error('parameter_invalid, parameter_missing or parameter_unknown (query or body; with the param); a malformed body; a Host that is not allowed'),
  '401': error('unauthenticated: a missing, malformed or unknown bearer token', header('WWW-Authenticate')),
  '405': error('method_not_allowed: the path does not take this method; Allow lists those it takes', header('Allow')),
  '429': retryable(
    'rate_limited: this token (or, without a valid token, this client address) made more requests than its limit (RATE_LIMIT_*), or its requests waiting for a turn are too many (MAX_REQUESTS_QUEUED_PER_USER); retry after Retry-After',
  ),
  '500': error('internal: an unexpected failure (logged; no details in the answer)'),
  '503': retryable('service_unavailable: the database is read-only or unreachable; retry after Retry-After'),
} satisfies Responses;

/** What a write may answer besides: storage that cannot take it (retryable, nothing stored). */
export const writes: Responses = {
  '409': retryable(
    'idempotency_conflict (the Idempotency-Key was used for another request), or idempotency_in_progress (a request with this key is still running: retry after Retry-After with the same key)',
  ),
  '507': retryable('insufficient_storage: the disk or the database is full; nothing was stored; retry later'),
};

export const unsupportedMedia = (accepted: string) => ({ '415': error(`unsupported_media_type: the body is not ${accepted}`) });
export const notFound = (what: string) => ({ '404': error(`resource_missing: ${what}`) });

/** Public routes answer without a token: no 401, no per-token limits. */
export const publicCommon: Responses = { '405': common['405'], '500': common['500'] };

/** Headers components (openapi.ts). */
export const HEADERS = {
  Idempotency: {
    description: 'On every /v1 response when the server honours Idempotency-Key (absent otherwise): clients need not learn it from a replay.',
    schema: { type: 'string', const: 'supported' },
  },
  'Idempotent-Replayed': {
    description: 'true on a response replayed for a repeated Idempotency-Key (the first response for that key and user, stored 24 h)',
    schema: { type: 'string', const: 'true' },
  },
  'RateLimit-Policy': {
    description:
      'Extension (draft-ietf-httpapi-ratelimit-headers): the limit the request was counted against, e.g. "token";q=100;w=1;parley-reserve=2000;parley-reserve-w=60 ' +
      '(RATE_LIMIT_PER_SECOND sustained, and RATE_LIMIT_BURST in reserve per RATE_LIMIT_BURST_SECONDS, spent once the share of the moment is). On every answer to a counted request.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'Extension (draft-ietf-httpapi-ratelimit-headers): what the token may still send now, e.g. "token";r=1987;t=1 (the rest of the current share and of the reserve; ' +
      'r=0 with Retry-After on a 429). A client that keeps a margin and then sends at most q per w seconds is not refused.',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying the same request (with the same Idempotency-Key).', schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': { description: 'The scheme to authenticate with: Bearer realm="parley"', schema: { type: 'string', pattern: '^Bearer' } },
  Allow: { description: 'The methods the path takes, comma-separated', schema: { type: 'string' } },
};
