// The HTTP front of `npm start`: /v1, /files, /healthz and /readyz go straight to the
// framework-free core; everything else goes to Next (when given). Also used by the tests, without
// Next. Each request gets an id (X-Request-Id) and one log record when it ends; `drainServer` is
// the graceful half of a shutdown.
import type { EventEmitter } from 'node:events';
import http from 'node:http';
import { Socket } from 'node:net';
import { Readable, type Duplex } from 'node:stream';
import { readConfig, type Config } from '../../config';
import { fieldOf } from '../../records';
import { ApiError, invalid, serviceUnavailable } from '../errors';
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
    /^\/(healthz|readyz|device-policy|auth\/oidc)(\/|\?|$)/.test(url)
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

export type UpgradeHandler = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface HttpServerOptions {
  /** One record per request when it ends; none when absent. */
  log?: ServerLog;
  /**
   * Who may switch protocols, and for which paths: only `npm run dev` (Next's hot reload on
   * /_next/). Absent: every upgrade request is refused like any other bad request.
   */
  upgrade?: { paths: RegExp; handler: UpgradeHandler };
}

/**
 * Requests this front serves nobody: a request target that is not a path (`*`, or absolute form
 * `http://elsewhere/…`, which Next would answer with a 500 or a redirect off this server), and a
 * request to switch protocols (there is no WebSocket here). Null when the request is an ordinary one.
 */
export function refusal(req: Pick<http.IncomingMessage, 'url' | 'headers'>): ApiError | null {
  const url = req.url ?? '';
  if (!url.startsWith('/') || url.startsWith('//')) {
    return invalid(undefined, 'The request target must be a path on this server (origin-form, starting with a single "/"); "*" and absolute URLs are not served here');
  }
  if (req.headers.upgrade !== undefined) {
    return invalid('Upgrade', 'This server does not switch protocols (no WebSocket or other upgrade is served): send the request without Upgrade');
  }
  return null;
}

function errorReply(error: ApiError) {
  return { status: error.status, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...error.headers }, body: JSON.stringify(error.body()) };
}

/** The raw HTTP/1.1 answer to an upgrade request refused before any response object exists. */
function refuseOnSocket(socket: Duplex, error: ApiError, id: string): void {
  const body = JSON.stringify(error.body());
  const head = [
    `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    'Cache-Control: no-store',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${id}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  // A client that never reads its answer does not keep the socket.
  if (socket instanceof Socket) socket.setTimeout(5_000, () => socket.destroy());
}

/**
 * What Node's parser refuses besides a malformed request, answered in the contract's shape (Node's
 * own answers have no body): headers beyond its limit (16 KiB: `--max-http-header-size`, e.g. a
 * huge Upload-Metadata: 431), chunk extensions beyond its limit (400; Node says 413), and a request
 * that took too long (408).
 */
const NODE_REFUSALS: Record<string, () => ApiError> = {
  HPE_HEADER_OVERFLOW: () =>
    new ApiError('request_header_fields_too_large', 'The request headers are too large (at most 16 KiB in all); send shorter headers (Upload-Metadata carries only the metadata the server reads)'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () => invalid(undefined, 'The chunk extensions of the request body are too large (at most 16 KiB)'),
  ERR_HTTP_REQUEST_TIMEOUT: () =>
    new ApiError('request_timeout', 'The request did not arrive in time (HEADERS_TIMEOUT_MS for its headers, REQUEST_TIMEOUT_MS for all of it); send it again'),
};

/**
 * A request Node's parser refused: 400 in the contract's shape (a target that is not a URL, a
 * broken header line), or the answer NODE_REFUSALS gives, then the connection is closed — what
 * Node does by default, with a body a client can read. A client that closed its side of the
 * connection in the middle of a request whose headers were taken (a body cut short) is not
 * refused: its request is being handled (an upload keeps what arrived), and the connection just
 * goes — there is no one left to read an answer on it.
 */
function answerUnparsable(error: NodeJS.ErrnoException, socket: Duplex): void {
  // Node's own field: the response in progress on this connection, if any.
  const message = fieldOf(socket, '_httpMessage');
  const inFlight = message instanceof http.ServerResponse ? message : undefined;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) return void socket.destroy();
  if (error.code === 'HPE_INVALID_EOF_STATE' && inFlight) return void socket.destroy();
  const refusal = error.code ? NODE_REFUSALS[error.code] : undefined;
  if (refusal) refuseOnSocket(socket, refusal(), requestId(undefined));
  else if (error.code === 'HPE_INVALID_EOF_STATE') {
    refuseOnSocket(socket, invalid(undefined, 'The connection was closed before the request was complete'), requestId(undefined));
  } else refuseOnSocket(socket, invalid(undefined, 'The request could not be parsed as HTTP/1.1 (its request target must be a path on this server)'), requestId(undefined));
}

type Listener = Parameters<EventEmitter['on']>[1];

/**
 * Nothing but this front listens for upgrades. Next adds an `upgrade` listener to the server of the
 * first page request it handles (for its dev hot reload); in production that listener takes every
 * upgrade request on any path and never answers it, so each one held a socket (CLOSE-WAIT once the
 * client left) until the process ran out of file descriptors. Without any listener, Node hands an
 * upgrade request to the ordinary request handler, which refuses it through the front like any
 * other bad request (the request log, the timeouts). Once `closeUpgrades()` is called (after the
 * front's own listener, if any), an `upgrade` listener is not added, however it is asked for.
 */
class FrontServer extends http.Server {
  /** No initializer: Node's constructor adds its listeners (through these methods) before one would run. */
  private upgradesClosed?: boolean;

  closeUpgrades(): void {
    this.upgradesClosed = true;
  }

  private takes(event: string): boolean {
    return !(this.upgradesClosed && event === 'upgrade');
  }

  override on(event: string, listener: Listener): this {
    return this.takes(event) ? super.on(event, listener) : this;
  }

  override addListener(event: string, listener: Listener): this {
    return this.takes(event) ? super.addListener(event, listener) : this;
  }

  override prependListener(event: string, listener: Listener): this {
    return this.takes(event) ? super.prependListener(event, listener) : this;
  }

  override once(event: string, listener: Listener): this {
    return this.takes(event) ? super.once(event, listener) : this;
  }

  override prependOnceListener(event: string, listener: Listener): this {
    return this.takes(event) ? super.prependOnceListener(event, listener) : this;
  }
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
  const server = new FrontServer(
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
      state.responses.add(res);
      res.once('close', () => {
        state.responses.delete(res);
        options.log?.request({
          request_id: context.id,
          method: req.method ?? 'GET',
          route: routeTemplate(splitTarget(req.url ?? '/').path, context),
          status: res.headersSent ? res.statusCode : null,
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
          user_id: context.user,
          ...(res.writableFinished ? {} : { aborted: true as const }),
        });
        // Its connection is idle now: during a shutdown, close it rather than keep it alive.
        if (state.draining) setImmediate(() => server.closeIdleConnections());
      });
      const url = req.url ?? '/';
      const refused = refusal(req);
      if (refused) {
        // Answered and closed: nothing more is read from this connection.
        res.shouldKeepAlive = false;
        writeNodeReply(res, errorReply(refused), context.id);
        return;
      }
      if (state.draining) {
        // A request on a connection kept alive from before the shutdown: not taken.
        res.shouldKeepAlive = false;
        writeNodeReply(res, errorReply(SHUTTING_DOWN), context.id);
        return;
      }
      limitBodyIdle(req, timeouts.bodyIdleTimeoutMs);
      if (isApiPath(url)) {
        track(
          dispatch(fromNodeRequest(req, context)).then(
            (reply) => {
              if (!res.destroyed) {
                if (state.draining) res.shouldKeepAlive = false;
                return writeNodeReply(res, reply, context.id);
              }
              // The connection is gone (cut off by a timeout, or the client left): only let go of the body.
              if (reply.body instanceof Readable) reply.body.destroy();
            },
            () => res.destroy(),
          ),
        );
      } else {
        // Next writes its answers itself: the id is set on the response before it does.
        res.setHeader('X-Request-Id', context.id);
        if (fallback) track(Promise.resolve(fallback(req, res)).catch(() => res.destroy()));
        else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
      }
    },
  );
  server.keepAliveTimeout = 65_000;
  if (options.upgrade) {
    const { paths, handler } = options.upgrade;
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      if (paths.test(req.url ?? '')) return handler(req, socket, head);
      const id = requestId(req.headers['x-request-id']);
      refuseOnSocket(socket, refusal(req) ?? refusal({ url: req.url, headers: { upgrade: 'websocket' } })!, id);
      options.log?.request({ request_id: id, method: req.method ?? 'GET', route: routeTemplate(splitTarget(req.url ?? '/').path), status: 400, duration_ms: 0, user_id: null });
    });
  }
  server.on('clientError', answerUnparsable);
  server.closeUpgrades();
  states.set(server, state);
  return server;
}

export function listen(server: http.Server, port: number, hostname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => {
      server.off('error', reject);
      const address = server.address();
      // A server listening on a port has an address with one (a string is a pipe's or a socket file's name).
      if (address === null || typeof address === 'string') reject(new Error(`the server is not listening on a port (${address})`));
      else resolve(address.port);
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
