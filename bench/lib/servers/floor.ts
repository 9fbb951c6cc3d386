// Child process: the physical floor. A bare node:http server — no routing, auth, validation,
// rate limiting, logging or framework — doing the same storage and serialisation work as the
// request it is compared with, so a ratio says what the service's own layers cost:
//   json <bytes>  answers every request with one constant JSON body of that size (after reading
//                 the request body, as a real handler must): HTTP alone, no storage (kept as a
//                 reference: what the retrieve/update floors were before issue 22);
//   one <dir> <user>
//                 GET /…/<id>: reads that conversation's row from the same SQLite file through a
//                 read-only better-sqlite3 connection (the service's fast reader: one prepared
//                 `select * … where id = ? and user_id = ?`), maps it to the API's shape
//                 (toConversation's fields) and answers it as JSON — the same body as the service;
//   put <dir> <user>
//                 PUT /…/<id>: reads the JSON body, runs the service's statement shape (one
//                 `update … set <field> = case when <supplied> then ? else <field> end … where id
//                 = ? and user_id = ? returning *`, on a writable connection with the service's
//                 pragmas: WAL, synchronous NORMAL, foreign keys, so the change feed's triggers
//                 fire as they do for the service), maps and answers the row — the same write and
//                 body as the service, without its validation or Kysely's async driver;
//   list <dir> <user>
//                 reads the same 101 rows the service reads for GET /v1/conversations?limit=100
//                 (one prepared `select * … where user_id = ? order by seq desc limit 101` on the
//                 same index, read-only connection), maps the first 100 to the API's shape and
//                 answers `{has_more, data}` — the same rows and the same body as the service;
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

/** A conversations row as SQLite returns it, and the API's shape of it (lib/api/domain/conversations.ts's toConversation). */
type Row = { id: string; contact_id: string | null; group_id: string | null; pinned_message_id: string | null; is_pinned: number; is_muted: number; last_active_at: number | null; last_opened_at: number | null; created_at: number; archived_at: number | null };
const toConversation = (row: Row) => ({
  id: row.id,
  contact_id: row.contact_id,
  group_id: row.group_id,
  pinned_message_id: row.pinned_message_id,
  is_pinned: row.is_pinned === 1,
  is_muted: row.is_muted === 1,
  last_active_at: row.last_active_at,
  last_opened_at: row.last_opened_at,
  created_at: row.created_at,
  archived_at: row.archived_at,
});
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
} else if (mode === 'one' || mode === 'put' || mode === 'list') {
  const [, dir, user] = process.argv.slice(2);
  const { default: Database } = await import('better-sqlite3');
  const file = path.join(dir!, 'parley.sqlite');
  const headers = (body: string) => ({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(body)) });
  const idOf = (url: string | undefined) => decodeURIComponent((url ?? '').split('?')[0]!.split('/').pop() ?? '');
  if (mode === 'one') {
    const db = new Database(file, { readonly: true });
    db.pragma('busy_timeout = 5000');
    const byId = db.prepare('select * from conversations where id = ? and user_id = ?');
    handler = (req, res) => {
      req.resume();
      req.once('end', () => {
        const row = byId.get(idOf(req.url), user) as Row | undefined;
        if (!row) return void res.writeHead(404).end();
        const body = JSON.stringify(toConversation(row));
        res.writeHead(200, headers(body)).end(body);
      });
    };
  } else if (mode === 'put') {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    const when = (column: string) => `${column} = case when ? = 1 then ? else ${column} end`;
    const write = db.prepare(
      `update conversations set ${['pinned_message_id', 'is_pinned', 'is_muted', 'archived_at', 'last_opened_at'].map(when).join(', ')} where id = ? and user_id = ? returning *`,
    );
    const flag = (o: Record<string, unknown>, k: string, v: (x: unknown) => unknown) => (k in o ? [1, v(o[k])] : [0, null]);
    const bool = (x: unknown) => (x ? 1 : 0);
    const same = (x: unknown) => x ?? null;
    handler = (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.once('end', () => {
        const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        const row = write.get(
          ...flag(input, 'pinned_message_id', same), ...flag(input, 'is_pinned', bool), ...flag(input, 'is_muted', bool),
          ...flag(input, 'archived_at', same), ...flag(input, 'last_opened_at', same), idOf(req.url), user,
        ) as Row | undefined;
        if (!row) return void res.writeHead(404).end();
        const body = JSON.stringify(toConversation(row));
        res.writeHead(200, headers(body)).end(body);
      });
    };
  } else {
    const db = new Database(file, { readonly: true });
    db.pragma('busy_timeout = 5000');
    const page = db.prepare('select * from conversations where user_id = ? order by seq desc limit 101');
    handler = (req, res) => {
      req.resume();
      req.once('end', () => {
        const rows = page.all(user) as Row[];
        const body = JSON.stringify({ has_more: rows.length > 100, data: rows.slice(0, 100).map(toConversation) });
        res.writeHead(200, headers(body)).end(body);
      });
    };
  }
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
