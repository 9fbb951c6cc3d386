// Child process: the physical floor. A bare node:http server that
//   json <bytes>  answers every request with one constant JSON body of that size (after reading
//                 the request body, as a real handler must);
//   list <dir> <user>  reads the same 101 rows the service reads for GET /v1/conversations?limit=100
//                 (one prepared better-sqlite3 statement on DATA_DIR's SQLite file, the same index)
//                 and answers them as JSON — no routing, auth, validation or mapping: what a list
//                 page costs at least;
//   upload <dir>  writes the request body to a file in <dir>, fsyncs it, answers 201 and deletes it
//                 (the same disk work the service does for an upload, minus parsing and the row).
//   upload-s3 <endpoint> <bucket>
//                 streams the request body to an object in that bucket (s3rver's account) with
//                 lib-storage's Upload, as the object store does (same part size, parts in flight
//                 and client settings), answers 201 and deletes the object.
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
} else if (mode === 'list') {
  const [, dir, user] = process.argv.slice(2);
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(dir!, 'parley.sqlite'), { readonly: true });
  const page = db.prepare('select * from conversations where user_id = ? order by seq desc limit 101');
  handler = (req, res) => {
    req.resume();
    req.once('end', () => {
      const rows = page.all(user) as unknown[];
      const body = JSON.stringify({ has_more: rows.length > 100, data: rows.slice(0, 100) });
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(body)) }).end(body);
    });
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
} else if (mode === 'upload-s3') {
  const { S3BlobStore } = await import('../../../lib/api/storage/s3-blob-store');
  const store = S3BlobStore.fromConfig(
    { bucket: process.argv[4]!, endpoint: arg!, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, forcePathStyle: true, presignedRedirect: false },
    { maxUploadBytes: 1024 ** 4 },
  );
  handler = async (req, res) => {
    const blob = store.begin();
    let size = 0;
    req.on('data', (chunk: Buffer) => (size += chunk.length));
    await pipeline(req, blob.sink);
    await blob.finish();
    await store.remove(blob.key);
    res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ size }));
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
