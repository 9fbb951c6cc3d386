// Child process: the physical floor. A bare node:http server that
//   json <bytes>  answers every request with one constant JSON body of that size (after reading
//                 the request body, as a real handler must);
//   upload <dir>  writes the request body to a file in <dir>, fsyncs it, answers 201 and deletes it
//                 (the same disk work the service does for an upload, minus parsing and the row).
import fs from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const [mode, arg] = process.argv.slice(2);
let handler: http.RequestListener;
if (mode === 'json') {
  const size = Number(arg);
  const prefix = '{"data":"';
  const suffix = '"}';
  const body = Buffer.from(prefix + 'x'.repeat(Math.max(0, size - prefix.length - suffix.length)) + suffix);
  const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(body.length) };
  handler = (req, res) => {
    req.resume();
    req.once('end', () => res.writeHead(200, headers).end(body));
  };
} else if (mode === 'upload') {
  const dir = arg!;
  let n = 0;
  handler = async (req, res) => {
    const file = path.join(dir, `floor-${process.pid}-${n++}.bin`);
    try {
      const out = fs.createWriteStream(file);
      await pipeline(req, out);
      const fd = fs.openSync(file, 'r');
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      const size = fs.statSync(file).size;
      res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ size }));
    } finally {
      fs.rmSync(file, { force: true });
    }
  };
} else {
  throw new Error(`floor: unknown mode ${mode}`);
}
const server = http.createServer(handler);
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1');
await once(server, 'listening');
console.log(`BENCH_READY ${JSON.stringify({ port: (server.address() as { port: number }).port })}`);
process.once('SIGTERM', () => process.exit(0));
