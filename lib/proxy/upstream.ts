// One request to the upstream over a keep-alive agent, with the two deadlines from configuration:
// connecting (TCP, and TLS for https) and idleness (no byte either way while waiting or streaming).
// Bodies stream both ways: nothing here buffers.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { finished, type Readable } from 'node:stream';

export class UpstreamError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'timeout',
    message: string,
    readonly detail: string,
  ) {
    super(message);
  }
}

export interface UpstreamTarget {
  base: URL;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

export interface OutgoingRequest {
  method: string;
  /** Path and query, already validated and prefixed with the upstream's base path. */
  path: string;
  headers: Record<string, string>;
  body: Readable | null;
}

export interface UpstreamResponse {
  response: http.IncomingMessage;
  /** Why the response stream broke, when the proxy broke it (idle timeout); null otherwise. */
  failure(): UpstreamError | null;
}

const RETRYABLE_ON_STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE']);

export class Upstream {
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;

  constructor(private readonly target: UpstreamTarget) {
    const tls = target.base.protocol === 'https:';
    this.transport = tls ? https : http;
    // LIFO keeps the pool small under uneven load; sockets the upstream has idled out are retired
    // on its Keep-Alive hint.
    const options = { keepAlive: true, maxSockets: 256, maxFreeSockets: 32, scheduling: 'lifo' as const };
    this.agent = tls ? new https.Agent(options) : new http.Agent(options);
  }

  async send(request: OutgoingRequest): Promise<UpstreamResponse> {
    try {
      return await this.attempt(request);
    } catch (error) {
      // A pooled socket the upstream closed just as we picked it: safe to retry only when no body
      // has been consumed, which is every bodyless request.
      if (error instanceof StaleSocket && request.body === null) return this.attempt(request);
      throw error instanceof StaleSocket ? error.cause : error;
    }
  }

  close(): void {
    this.agent.destroy();
  }

  private attempt(request: OutgoingRequest): Promise<UpstreamResponse> {
    const { base, connectTimeoutMs, idleTimeoutMs } = this.target;
    return new Promise((resolve, reject) => {
      const req = this.transport.request({
        agent: this.agent,
        protocol: base.protocol,
        hostname: base.hostname.replace(/^\[|\]$/g, ''),
        port: base.port || undefined,
        method: request.method,
        path: request.path,
        headers: request.headers,
      });
      let failure: UpstreamError | null = null;
      let responded = false;
      const fail = (error: UpstreamError) => {
        failure ??= error;
        req.destroy(error);
      };
      req.on('socket', (socket: Socket) => {
        if (!socket.connecting) return; // a pooled, already connected socket
        const timer = setTimeout(
          () => fail(new UpstreamError('timeout', 'The upstream service did not accept a connection in time', `connect > ${connectTimeoutMs} ms`)),
          connectTimeoutMs,
        );
        socket.once(base.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      // Node starts this clock once connected and restarts it on every byte read or written.
      req.setTimeout(idleTimeoutMs, () =>
        fail(new UpstreamError('timeout', 'The upstream service did not answer in time', `idle > ${idleTimeoutMs} ms`)),
      );
      req.on('response', (response) => {
        responded = true;
        resolve({ response, failure: () => failure });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (responded) return; // the response stream reports it to whoever reads it
        request.body?.unpipe(req);
        if (failure) return reject(failure);
        const unavailable = new UpstreamError('unavailable', 'The upstream service could not be reached', error.code ?? error.message);
        const stale = req.reusedSocket && RETRYABLE_ON_STALE_SOCKET.has(error.code ?? '');
        reject(stale ? new StaleSocket(unavailable) : unavailable);
      });
      if (request.body) {
        // pipe, not pipeline: when the upstream fails, the browser's request must stay intact so it
        // can still be answered with a 502/504 (destroying it would reset the connection).
        request.body.pipe(req);
        finished(request.body, (error) => {
          if (error) req.destroy(); // the browser went away mid-upload: so does the upstream request
        });
      } else {
        req.end();
      }
    });
  }
}

class StaleSocket extends Error {
  constructor(override readonly cause: UpstreamError) {
    super(cause.message);
  }
}
