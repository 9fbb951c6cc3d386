// The service's own request/reply shapes, and the adapters from and to Web-standard
// Request/Response. Why not Request/Response all the way down: constructing them costs ~6 µs and
// ~12 µs in Node 20, more than the whole budget of a retrieve on the fast path (see README,
// Performance). The Web-standard entry point (ApiService.handle) is a thin shell over these.
import { Readable } from 'node:stream';

export interface ApiRequest {
  method: string;
  /** Path without the query string, e.g. /v1/conversations/abc. */
  path: string;
  query: URLSearchParams;
  /** scheme://host of the request, for building absolute URLs. */
  origin: string;
  /** A header by its lowercase name. */
  header(name: string): string | null;
  /** The body as a Node stream, or null when the request has none. */
  body: Readable | null;
}

export interface ApiReply {
  status: number;
  headers: Record<string, string>;
  body: string | Readable | null;
}

export function splitTarget(target: string): { path: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  return q < 0
    ? { path: target, query: new URLSearchParams() }
    : { path: target.slice(0, q), query: new URLSearchParams(target.slice(q + 1)) };
}

export function fromWebRequest(request: Request): ApiRequest {
  const url = new URL(request.url);
  return {
    method: request.method,
    path: url.pathname,
    query: url.searchParams,
    origin: url.origin,
    header: (name) => request.headers.get(name),
    body: request.body ? Readable.fromWeb(request.body as never) : null,
  };
}

export function toWebResponse(reply: ApiReply): Response {
  const body = reply.body instanceof Readable ? (Readable.toWeb(reply.body) as ReadableStream) : reply.body;
  return new Response(body, { status: reply.status, headers: reply.headers });
}
