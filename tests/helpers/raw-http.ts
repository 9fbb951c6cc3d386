// A raw HTTP/1.1 exchange over a real socket: what a client sends byte for byte (an upgrade, an
// odd request target), what comes back, and whether the server closed the connection.
import net from 'node:net';

export interface RawExchange {
  /** Everything the server sent. */
  text: string;
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** The server ended the connection (false: still open when `waitMs` was up). */
  closedByServer: boolean;
}

export function rawRequest(port: number, request: string, waitMs = 5_000): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
      resolve({ text, status: status ? Number(status) : null, headers, body, closedByServer });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (text += chunk));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (error) => (settled ? undefined : text ? finish(true) : reject(error)));
    socket.write(request);
  });
}
