// Which headers cross the proxy, in each direction.
import type { IncomingHttpHeaders } from 'node:http';

// Request headers are an allowlist: the contract's own headers plus what conditional and range
// requests for /files need. Everything else the browser sends (Cookie, Origin, Referer,
// X-Forwarded-*, Proxy-*) is about the browser's relation with this app, not the upstream's.
const REQUEST_HEADERS = [
  'authorization',
  'content-type',
  'content-length',
  'idempotency-key',
  // The live stream (/v1/events/stream) resumes from the last event the browser saw.
  'last-event-id',
  'accept',
  'accept-language',
  'user-agent',
  'cache-control',
  'range',
  'if-range',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'x-request-id',
];

// Hop-by-hop headers (RFC 9110 §7.6.1) describe one connection, never the message.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
]);

// Response headers the upstream may send that would mean something different on the app's origin:
// cookies and alternative services would attach to the app's host, not the upstream's.
const UPSTREAM_ONLY = new Set(['set-cookie', 'alt-svc', 'strict-transport-security']);

/** Lowercase names listed in a Connection header: they are hop-by-hop for this message too. */
export function connectionTokens(connection: string | string[] | null | undefined): Set<string> {
  const raw = Array.isArray(connection) ? connection.join(',') : (connection ?? '');
  return new Set(raw.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean));
}

export interface RequestHeaderOptions {
  /** Replaces whatever Authorization the browser sent (UPSTREAM_TOKEN). */
  token: string | null;
  /** /files is authorised by its URL signature: no credentials go there at all. */
  withAuthorization: boolean;
}

export function forwardRequestHeaders(
  header: (name: string) => string | null,
  options: RequestHeaderOptions,
): Record<string, string> {
  const named = connectionTokens(header('connection'));
  const out: Record<string, string> = {};
  for (const name of REQUEST_HEADERS) {
    if (named.has(name)) continue;
    const value = header(name);
    if (value !== null) out[name] = value;
  }
  const browserAuthorization = out.authorization ?? null;
  delete out.authorization;
  if (options.withAuthorization) {
    const authorization = options.token ? `Bearer ${options.token}` : browserAuthorization;
    if (authorization !== null) out.authorization = authorization;
  }
  // The proxy may rewrite JSON bodies (file_url), so it asks for them uncompressed.
  out['accept-encoding'] = 'identity';
  return out;
}

export function forwardResponseHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const named = connectionTokens(headers.connection);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || UPSTREAM_ONLY.has(name) || named.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
