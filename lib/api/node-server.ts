// The HTTP front of `npm start`: /v1 and /files go straight to the framework-free core; everything
// else goes to Next (when given). Also used by the tests, without Next.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromNodeRequest, writeNodeReply } from './node-adapter';
import type { ApiReply, ApiRequest } from './http';

export type Dispatch = (request: ApiRequest) => Promise<ApiReply>;
export type NodeHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export function isApiPath(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?') || url.startsWith('/files/');
}

export function createHttpServer(dispatch: Dispatch, fallback?: NodeHandler): http.Server {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (isApiPath(url)) {
      dispatch(fromNodeRequest(req)).then(
        (reply) => writeNodeReply(res, reply),
        () => res.destroy(),
      );
    } else if (fallback) {
      void fallback(req, res);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
    }
  });
  server.keepAliveTimeout = 65_000;
  // Uploads of hundreds of MiB on slow phones: no overall request deadline, but idle sockets close.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
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
