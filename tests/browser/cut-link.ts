// A network link the test can cut, between the browser and the app under test: a TCP relay on a
// port of its own. Cut, it drops every open connection and refuses new ones, for every realm of
// the browser alike. Chromium's offline emulation and Playwright's routes do not reach a service
// worker the browser wakes on its own (a Background Sync event during a reload): such a worker
// starts and sends before the test's interception reaches it, and the server saw "offline"
// changes early. Behind this link nothing passes while it is cut.
import net, { type AddressInfo } from 'node:net';

export class CutLink {
  private server: net.Server | null = null;
  private readonly open = new Set<net.Socket>();
  private isCut = false;
  /** Connections refused while cut: proof that something tried. */
  refused = 0;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<string> {
    this.server = net.createServer((client) => {
      if (this.isCut) {
        this.refused += 1;
        return void client.destroy();
      }
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      this.open.add(client);
      this.open.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.open.delete(client);
        this.open.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this.origin;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  cut(): void {
    this.isCut = true;
    for (const socket of this.open) socket.destroy();
    this.open.clear();
  }

  restore(): void {
    this.isCut = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
