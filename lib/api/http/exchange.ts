// The service's own request/reply shapes, and the adapters from and to Web-standard
// Request/Response. Why not Request/Response all the way down: constructing them costs ~6 µs and
// ~12 µs in Node 20, more than the whole budget of a retrieve on the fast path (see README,
// Performance). The Web-standard entry point (ApiService.handle) is a thin shell over these.
import { Readable } from 'node:stream';
import type { RequestContext } from './log';
import type { AuditNote } from '../domain/audit';
import type { QuotaReading } from './rate-limit';

export interface ApiRequest {
  method: string;
  /** Path without the query string, e.g. /v1/conversations/abc. */
  path: string;
  query: URLSearchParams;
  /** How the request arrived: the scheme of file_urls built on the request's own origin. */
  scheme: 'http' | 'https';
  /**
   * The Host the client named, exactly as sent (null when it sent none). Unchecked: only
   * HostPolicy (hosts.ts) turns it into an origin, under the same rule for every adapter.
   */
  host: string | null;
  /** The port this server accepted the request on (ALLOWED_HOSTS' default is "on the server's port"). */
  localPort: number | null;
  /** A header by its lowercase name. */
  header(name: string): string | null;
  /** The body as a Node stream, or null when the request has none. */
  body: Readable | null;
  /** The request's id and, once authenticated, its user: for the log (absent: nobody logs it). */
  context?: RequestContext;
  /**
   * The client's address as the socket saw it (no X-Forwarded-For: anyone can send that), for the
   * rate limit of requests without a valid token. Null or absent when the adapter cannot tell
   * (Next's route handlers): such requests share one bucket.
   */
  remoteAddress?: string | null;
  /** The request's audit entry, set by the service once it is authenticated (absent: not audited). */
  audit?: AuditNote;
  /** Where its token (or address) stands once the request is counted: the answer's RateLimit fields. */
  quota?: QuotaReading[];
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
  // Next builds request.url on the server's own name and port, whatever the client sent; the Host
  // header is what the client asked for, and what the same rule as npm start's server must see.
  const url = new URL(request.url);
  const scheme = url.protocol === 'https:' ? 'https' : 'http';
  return {
    method: request.method,
    path: url.pathname,
    query: url.searchParams,
    scheme,
    host: request.headers.get('host') ?? url.host,
    localPort: url.port ? Number(url.port) : scheme === 'https' ? 443 : 80,
    header: (name) => request.headers.get(name),
    body: request.body ? Readable.fromWeb(request.body as never) : null,
  };
}

export function toWebResponse(reply: ApiReply): Response {
  const body = reply.body instanceof Readable ? (Readable.toWeb(reply.body) as ReadableStream) : reply.body;
  return new Response(body, { status: reply.status, headers: reply.headers });
}
