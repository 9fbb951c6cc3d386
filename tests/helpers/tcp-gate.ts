// A TCP proxy between a client and a real server, on a free port of 127.0.0.1: it forwards both
// ways until told to stall, and then the connection carrying the next bytes stops forwarding
// anything, either way, and stops reading (a dead link neither end's socket notices: the client's
// writes back up, no answer ever comes). When the client gives up and closes, the proxy closes
// its leg to the server, as a proxy does; connections opened afterwards are forwarded as before.
import net from 'node:net';

export class TcpGate {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Bytes still forwarded towards the server before a stall, when one is armed. */
  private remaining: number | null = null;
  /** Connections that stalled. */
  stalls = 0;
  port = 0;

  constructor(private readonly targetPort: number) {
    this.server = net.createServer((client) => this.connection(client));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  /** After `bytes` more bytes towards the server, the connection carrying them goes dead. Once. */
  stallAfter(bytes: number): void {
    this.remaining = bytes;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private connection(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    let dead = false;
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => {
      if (dead) return;
      if (this.remaining !== null && chunk.length > this.remaining) {
        upstream.write(chunk.subarray(0, this.remaining));
        this.remaining = null;
        dead = true;
        this.stalls++;
        client.pause(); // nothing more is read: the client's writes back up
        return;
      }
      if (this.remaining !== null) this.remaining -= chunk.length;
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => dead || client.resume());
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (dead) return;
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });
    // The client gave up: the proxy's leg goes too. The server closing a dead connection is never
    // heard by the client (the link is dead).
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => dead || client.destroy());
  }
}
