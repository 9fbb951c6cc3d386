// A gate in front of an upstream for proxy-mode tests: it answers 404 for /v1/uploads and
// /v1/events (so nothing of tus or the feed is the upstream's), and it can fail requests the way
// a weak upstream does: the upstream down, a connection reset before the request reaches it, a
// 503 before it acts, an answer lost after it acted (`lose`), a 503 sent after it acted
// (`503-after`), an answer held back until released.
import http from 'node:http';
import { listen } from '../../lib/api/http/node-server';

export type Fault = 'down' | 'reset' | '503' | 'lose' | '503-after' | 'hold';

export interface Gate {
  url: string;
  /** Every request that reached the gate: method, path, Idempotency-Key. */
  requests: Array<{ method: string; path: string; key: string | undefined }>;
  /** What the next POST /v1/files get, in order (then: `decide`, else passed on). */
  faults: Fault[];
  /** Any request's fault when the queue has none for it (a seeded schedule); undefined: passed on. */
  decide: ((method: string, path: string) => Fault | undefined) | null;
  /** Answer 404 for /v1/me too (an upstream without it). */
  noMe: boolean;
  /** A held POST /v1/files has reached the gate / let it through (one hold per gate). */
  held: Promise<void>;
  release(): void;
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

export const fileDeliveries = (gate: Gate) => gate.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files');

const BUSY = '{"type":"api_error","code":"service_unavailable","message":"busy"}';

export async function startGate(target: string): Promise<Gate> {
  const targetUrl = new URL(target);
  let heldReached!: () => void;
  let releaseHeld!: () => void;
  const releasing = new Promise<void>((resolve) => (releaseHeld = resolve));
  const gate: Gate = {
    url: '',
    requests: [],
    faults: [],
    decide: null,
    noMe: false,
    held: new Promise<void>((resolve) => (heldReached = resolve)),
    release: () => releaseHeld(),
    down: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    up: async () => {
      await listen(server, port, '127.0.0.1');
    },
    stop: () => gate.down(),
  };
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    const pathOnly = url.split('?')[0]!;
    const method = req.method ?? '';
    gate.requests.push({ method, path: pathOnly, key: req.headers['idempotency-key'] as string | undefined });
    if (/^\/v1\/(uploads|events)(\/|$)/.test(pathOnly) || (gate.noMe && pathOnly === '/v1/me')) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'invalid_request', code: 'resource_missing', message: 'No such route' }));
      return;
    }
    const queued = method === 'POST' && pathOnly === '/v1/files' ? gate.faults.shift() : undefined;
    const fault = queued ?? gate.decide?.(method, pathOnly);
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === 'down') {
      void gate.down(); // this connection too; nobody listens until up()
      return;
    }
    if (fault === '503') {
      req.resume();
      req.on('end', () => res.writeHead(503, { 'content-type': 'application/json' }).end(BUSY));
      return;
    }
    const forward = async () => {
      let whole: Buffer | null = null;
      if (fault === 'hold') {
        // The whole request is here (the upstream will get it even if the proxy goes away); held.
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        whole = Buffer.concat(chunks);
        heldReached();
        await releasing;
      }
      const upstream = http.request(
        { host: targetUrl.hostname, port: targetUrl.port, path: url, method, headers: { ...req.headers, host: targetUrl.host } },
        (answer) => {
          if (fault === 'lose') {
            // The upstream acted; its answer never reaches the caller.
            answer.resume();
            answer.on('end', () => req.socket.destroy());
            return;
          }
          if (fault === '503-after') {
            // The upstream acted; the caller is told it was busy.
            answer.resume();
            answer.on('end', () => res.writeHead(503, { 'content-type': 'application/json' }).end(BUSY));
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => req.socket.destroy());
      if (whole) upstream.end(whole);
      else req.pipe(upstream);
    };
    void forward();
  });
  const port = await listen(server, 0, '127.0.0.1');
  gate.url = `http://127.0.0.1:${port}`;
  return gate;
}
