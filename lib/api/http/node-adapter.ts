// node:http ⇄ the service's own request/reply, with no Web Request/Response objects in between:
// this is the fast path `npm start` serves /v1 and /files through.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { TLSSocket } from 'node:tls';
import { splitTarget, type ApiReply, type ApiRequest } from './exchange';
import { requestId, type RequestContext } from './log';

export function fromNodeRequest(req: IncomingMessage, context: RequestContext = { id: requestId(req.headers['x-request-id']), user: null }): ApiRequest {
  const { path, query } = splitTarget(req.url ?? '/');
  const scheme = req.socket instanceof TLSSocket && req.socket.encrypted ? 'https' : 'http';
  const length = req.headers['content-length'];
  const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
  return {
    method: req.method ?? 'GET',
    path,
    query,
    scheme,
    // Checked, like every adapter's, by HostPolicy (hosts.ts) before it reaches any URL.
    host: req.headers.host ?? null,
    localPort: req.socket.localPort ?? null,
    header(name) {
      const value = req.headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
    body: hasBody ? req : null,
    context,
    remoteAddress: req.socket.remoteAddress ?? null,
  };
}

/**
 * Writes `reply` with its request's id (X-Request-Id). All of the headers in one writeHead, none
 * set on `res` before: Node then validates and stores each header once, where a header set
 * before made it take every other through setHeader as well.
 */
export function writeNodeReply(res: ServerResponse, reply: ApiReply, requestId: string): void {
  const body = reply.body;
  const headers: Record<string, string | number> = { 'X-Request-Id': requestId, ...reply.headers };
  if (typeof body === 'string') {
    headers['Content-Length'] = Buffer.byteLength(body);
    res.writeHead(reply.status, headers);
    res.end(body);
  } else if (body === null) {
    res.writeHead(reply.status, headers);
    res.end();
  } else {
    res.writeHead(reply.status, headers);
    pipeline(body, res).catch(() => res.destroy());
  }
}
