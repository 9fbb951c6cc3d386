// The HTTP front of `npm start`: /v1, /files, /healthz and /readyz go straight to the
// framework-free core; everything else goes to Next (when given). Also used by the tests, without
// Next. Each request gets an id (X-Request-Id) and one log record when it ends; `drainServer` is
// the graceful half of a shutdown.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { readConfig, type Config } from '../../config';
import { serviceUnavailable } from '../errors';
import { fromNodeRequest, writeNodeReply } from './node-adapter';
import { splitTarget, type ApiReply, type ApiRequest } from './exchange';
import { requestId, routeTemplate, type RequestContext, type ServerLog } from './log';

export type Dispatch = (request: ApiRequest) => Promise<ApiReply>;
export type NodeHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;
export type HttpTimeouts = Pick<Config, 'headersTimeoutMs' | 'bodyIdleTimeoutMs' | 'requestTimeoutMs'>;

export function isApiPath(url: string): boolean {
  return (
    url === '/v1' ||
    url.startsWith('/v1/') ||
    url.startsWith('/v1?') ||
    url.startsWith('/files/') ||
    /^\/(healthz|readyz)(\/|\?|$)/.test(url)
  );
}

function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
}

/**
 * While the body is arriving, a socket that receives nothing for `ms` is destroyed (Node's default
 * for a socket timeout nobody handles); the request stream then fails, and an upload in progress
 * removes its temporary bytes. Once the body is in, the handler's own time does not count as idle.
 */
function limitBodyIdle(req: http.IncomingMessage, ms: number): void {
  if (!hasBody(req)) return;
  req.socket.setTimeout(ms);
  req.once('end', () => req.socket.setTimeout(0));
}

/** What a server is doing, for the shutdown: its responses not yet finished, its handlers still running. */
interface FrontState {
  draining: boolean;
  responses: Set<http.ServerResponse>;
  handlers: Set<Promise<unknown>>;
}

const states = new WeakMap<http.Server, FrontState>();

export interface HttpServerOptions {
  /** One record per request when it ends; none when absent. */
  log?: ServerLog;
}

const SHUTTING_DOWN = serviceUnavailable('This server is shutting down; send the request again (another instance, or this one once restarted)');

export function createHttpServer(
  dispatch: Dispatch,
  fallback?: NodeHandler,
  timeouts: HttpTimeouts = readConfig({}),
  options: HttpServerOptions = {},
): http.Server {
  const state: FrontState = { draining: false, responses: new Set(), handlers: new Set() };
  const track = (handled: Promise<unknown>) => {
    state.handlers.add(handled);
    void handled.finally(() => state.handlers.delete(handled));
  };
  const server = http.createServer(
    {
      // Node answers 408 and closes the connection when the headers, or the whole request, take longer.
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      // How often Node looks for such requests: a fraction of the shortest limit.
      connectionsCheckingInterval: Math.max(25, Math.min(30_000, Math.floor(Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs) / 4))),
    },
    (req, res) => {
      const started = performance.now();
      const context: RequestContext = { id: requestId(req.headers['x-request-id']), user: null };
      res.setHeader('X-Request-Id', context.id);
      state.responses.add(res);
      res.once('close', () => {
        state.responses.delete(res);
        options.log?.request({
          request_id: context.id,
          method: req.method ?? 'GET',
          route: routeTemplate(splitTarget(req.url ?? '/').path),
          status: res.headersSent ? res.statusCode : null,
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
          user_id: context.user,
          ...(res.writableFinished ? {} : { aborted: true as const }),
        });
        // Its connection is idle now: during a shutdown, close it rather than keep it alive.
        if (state.draining) setImmediate(() => server.closeIdleConnections());
      });
      const url = req.url ?? '/';
      if (state.draining) {
        // A request on a connection kept alive from before the shutdown: not taken.
        res.shouldKeepAlive = false;
        writeNodeReply(res, { status: SHUTTING_DOWN.status, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...SHUTTING_DOWN.headers }, body: JSON.stringify(SHUTTING_DOWN.body()) });
        return;
      }
      limitBodyIdle(req, timeouts.bodyIdleTimeoutMs);
      if (isApiPath(url)) {
        track(
          dispatch(fromNodeRequest(req, context)).then(
            (reply) => {
              if (!res.destroyed) {
                if (state.draining) res.shouldKeepAlive = false;
                return writeNodeReply(res, reply);
              }
              // The connection is gone (cut off by a timeout, or the client left): only let go of the body.
              if (reply.body instanceof Readable) reply.body.destroy();
            },
            () => res.destroy(),
          ),
        );
      } else if (fallback) {
        track(Promise.resolve(fallback(req, res)).catch(() => res.destroy()));
      } else {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
      }
    },
  );
  server.keepAliveTimeout = 65_000;
  states.set(server, state);
  return server;
}

export function listen(server: http.Server, port: number, hostname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export interface DrainResult {
  /** Responses still unfinished when the time was up, whose connections were cut. */
  cut: number;
}

/**
 * The first half of a graceful shutdown: stop accepting connections, close idle kept-alive ones,
 * answer nothing new on the others (503 and close), let the requests in flight (uploads too)
 * finish within `timeoutMs`, then cut what is left. `closing` runs once nothing new is accepted:
 * where long-lived responses (live event streams) are ended.
 */
export async function drainServer(server: http.Server, timeoutMs: number, closing: () => void = () => {}): Promise<DrainResult> {
  const state = states.get(server);
  if (!state) throw new Error('drainServer: not a server made by createHttpServer');
  state.draining = true;
  // Answers not yet begun go out with Connection: close.
  for (const res of state.responses) if (!res.headersSent) res.shouldKeepAlive = false;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  closing();
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
  clearTimeout(timer);
  const cut = inTime ? 0 : state.responses.size;
  if (!inTime) {
    server.closeAllConnections();
    await closed;
  }
  // Handlers whose connections were cut fail as their streams do; wait for them (not for ever)
  // before the database and the store they use are closed.
  await Promise.race([Promise.allSettled([...state.handlers]), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  return { cut };
}
