// A network link the test can cut, between the browser and the app under test: an HTTP relay on a
// port of its own that passes requests as they are (their Host too: the app's file URLs and the
// service worker's origin are the link's). Cut, it drops every open connection and every request;
// `refusing` drops only the requests it names (writes held, reads passing). Either way the browser
// meets a network error, in every realm alike. Why not Chromium's offline emulation or Playwright's
// routes: neither reaches a service worker the browser wakes on its own — a Background Sync event
// while no page is visible (a reload, a closed app) — before it sends, and the server then saw
// changes the test held back (offline.spec, storage.spec on CI).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class CutLink {
  private server: http.Server | null = null;
  private isCut = false;
  /** Requests dropped (while cut, or by `refusing`): proof that something tried. */
  refused = 0;
  /** Drops the requests this names even while the link is up (null: none). */
  refusing: ((method: string, path: string) => boolean) | null = null;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      if (this.isCut || this.refusing?.(req.method ?? 'GET', req.url ?? '/')) {
        this.refused += 1;
        return void req.socket.destroy();
      }
      const up = http.request({ host: '127.0.0.1', port: this.targetPort, method: req.method, path: req.url, headers: req.headers });
      up.on('response', (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => req.socket.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this.origin;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  cut(): void {
    this.isCut = true;
    this.server?.closeAllConnections(); // the live stream and idle keep-alive sockets too
  }

  restore(): void {
    this.isCut = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
