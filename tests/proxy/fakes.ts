// Raw loopback servers and clients for the proxy tests: upstreams that record, stall or vanish,
// and an HTTP client that sends a request target exactly as given (fetch would normalise it).
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

export interface FakeUpstream {
  url: string;
  port: number;
  requests: Recorded[];
  stop(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const answerJson: Handler = (req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}'));
};

/** An upstream that records every request it gets, then runs `handler` (default: 200 JSON). */
export async function startRecordingUpstream(handler: Handler = answerJson): Promise<FakeUpstream> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A port whose connects never complete: a child process listens with a tiny backlog and never
 * accepts (its event loop is parked), and we fill the accept queue, so the kernel drops later SYNs.
 * (Backlog 1, not 0: Node reads 0 as "use the default", 511.)
 */
export async function startBlackhole(): Promise<{ url: string; stop(): void }> {
  const script =
    "const s=require('net').createServer();" +
    "s.listen({port:0,host:'127.0.0.1',backlog:1},()=>{console.log(s.address().port);" +
    'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0)})';
  const child: ChildProcess = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
  const fillers: net.Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    fillers.push(socket);
    const connected = await new Promise<boolean>((resolve) => {
      socket.once('connect', () => resolve(true));
      setTimeout(() => resolve(false), 300);
    });
    if (!connected) break; // the queue is full: from now on connects hang
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop() {
      for (const s of fillers) s.destroy();
      child.kill('SIGKILL');
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request with the path sent verbatim (no URL parsing), on a fresh connection. */
export function rawRequest(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Bytes written on a raw socket, and the status line of whatever comes back. */
export function rawSocketRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (d) => {
      received += d;
      if (received.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    setTimeout(() => socket.destroy(), 3000);
  });
}

export async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}
