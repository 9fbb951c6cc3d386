// A real S3-compatible server for the tests and the bench, in its own process: s3rver on
// 127.0.0.1 (a free port), keeping objects in the directory given as the first argument.
// Prints `S3RVER_READY {"port":…}` once listening; exits on SIGTERM, and with --exit-with-stdin
// also when its stdin closes (the parent is gone).
//
// s3rver 3.7 stores multipart uploads but answers ListMultipartUploads with NotImplemented and
// AbortMultipartUpload with MethodNotAllowed. The service needs both (a refused upload aborts its
// multipart upload; the start-up sweep lists and aborts stale ones), so this adds the two
// operations on s3rver's own upload store (<dir>/<bucket>/._S3rver_uploads/<uploadId>/key, parts).
// Their requests are not signature-checked; every other operation is s3rver's own.
import fs from 'node:fs/promises';
import path from 'node:path';
import S3rver from 's3rver';

const args = process.argv.slice(2);
const exitWithStdin = args.includes('--exit-with-stdin');
// s3rver exactly as published: no ListMultipartUploads, no AbortMultipartUpload (what some
// S3-compatible stores lack too).
const asPublished = args.includes('--as-published');
const directory = args.find((a) => !a.startsWith('--'));
if (!directory) {
  console.error('usage: node --openssl-legacy-provider s3rver-process.mjs [--exit-with-stdin] <directory>');
  process.exit(2);
}

const xmlEscape = (s) => String(s).replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
const uploadsDir = (bucket) => path.join(directory, bucket, '._S3rver_uploads');

async function uploadsOf(bucket) {
  const root = uploadsDir(bucket);
  const ids = await fs.readdir(root).catch(() => []);
  const uploads = [];
  for (const uploadId of ids) {
    const dir = path.join(root, uploadId);
    // A directory without its key file is still an upload the store holds: list it, keyless.
    const key = await fs.readFile(path.join(dir, 'key'), 'utf8').catch(() => '');
    const stat = await fs.stat(dir).catch(() => null);
    if (stat) uploads.push({ key, uploadId, initiated: stat.birthtime.getTime() ? stat.birthtime : stat.ctime });
  }
  return uploads.sort((a, b) => (a.key === b.key ? (a.uploadId < b.uploadId ? -1 : 1) : a.key < b.key ? -1 : 1));
}

function errorXml(ctx, status, code, message, extra = '') {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message>${extra}</Error>`;
}

async function bucketExists(bucket) {
  return fs.stat(path.join(directory, bucket)).then((s) => s.isDirectory(), () => false);
}

/** GET /<bucket>?uploads: ListMultipartUploads (prefix, key-marker, upload-id-marker, max-uploads). */
async function listMultipartUploads(ctx, bucket) {
  if (!(await bucketExists(bucket))) return errorXml(ctx, 404, 'NoSuchBucket', 'The specified bucket does not exist');
  const prefix = ctx.query.prefix ?? '';
  const keyMarker = ctx.query['key-marker'] ?? '';
  const idMarker = ctx.query['upload-id-marker'] ?? '';
  const max = Math.min(Number(ctx.query['max-uploads'] ?? 1000) || 1000, 1000);
  const after = (u) => !keyMarker || u.key > keyMarker || (u.key === keyMarker && idMarker !== '' && u.uploadId > idMarker);
  const matching = (await uploadsOf(bucket)).filter((u) => u.key.startsWith(prefix) && after(u));
  const page = matching.slice(0, max);
  const truncated = matching.length > page.length;
  const last = page[page.length - 1];
  ctx.status = 200;
  ctx.type = 'application/xml';
  ctx.body =
    `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
    `<Bucket>${xmlEscape(bucket)}</Bucket><KeyMarker>${xmlEscape(keyMarker)}</KeyMarker><UploadIdMarker>${xmlEscape(idMarker)}</UploadIdMarker>` +
    (truncated ? `<NextKeyMarker>${xmlEscape(last.key)}</NextKeyMarker><NextUploadIdMarker>${last.uploadId}</NextUploadIdMarker>` : '') +
    `<Prefix>${xmlEscape(prefix)}</Prefix><MaxUploads>${max}</MaxUploads><IsTruncated>${truncated}</IsTruncated>` +
    page
      .map((u) => `<Upload><Key>${xmlEscape(u.key)}</Key><UploadId>${u.uploadId}</UploadId><Initiated>${u.initiated.toISOString()}</Initiated><StorageClass>STANDARD</StorageClass></Upload>`)
      .join('') +
    `</ListMultipartUploadsResult>`;
}

/** DELETE /<bucket>/<key>?uploadId=…: AbortMultipartUpload. */
async function abortMultipartUpload(ctx, bucket, key) {
  const uploadId = String(ctx.query.uploadId);
  const dir = path.join(uploadsDir(bucket), path.basename(uploadId));
  const storedKey = await fs.readFile(path.join(dir, 'key'), 'utf8').catch(() => null);
  if (storedKey !== key) {
    return errorXml(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist.', `<UploadId>${xmlEscape(uploadId)}</UploadId>`);
  }
  await fs.rm(dir, { recursive: true, force: true });
  ctx.status = 204;
}

async function multipartExtras(ctx, next) {
  // The SDK addresses a bucket as /<bucket>/ and an object as /<bucket>/<key>.
  const [bucket, ...rest] = ctx.path.slice(1).replace(/\/$/, '').split('/');
  if (ctx.method === 'GET' && bucket && rest.length === 0 && 'uploads' in ctx.query) return listMultipartUploads(ctx, bucket);
  if (ctx.method === 'DELETE' && bucket && rest.length > 0 && 'uploadId' in ctx.query) {
    return abortMultipartUpload(ctx, bucket, rest.map((s) => decodeURIComponent(s)).join('/'));
  }
  return next();
}

const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true });
// s3rver 3.7's filesystem store removes a key's directory once a DeleteObject leaves it empty,
// racing a concurrent PutObject into that same directory: the write stream then fails with ENOENT,
// an unhandled 'error' that ends the whole process (seen with uploads racing a conversation's
// delete). An object store has no directories to remove: delete only the object's own files.
server.store.deleteObject = async function deleteObject(bucket, key) {
  await Promise.all(
    ['object', 'object.md5', 'metadata.json'].map((kind) =>
      fs.unlink(this.getResourcePath(bucket, key, kind)).catch((error) => {
        if (error.code !== 'ENOENT') throw error;
      }),
    ),
  );
};
// Koa composes its middleware when it starts listening: put the two operations before s3rver's router.
if (!asPublished) server.middleware.splice(server.middleware.length - 1, 0, multipartExtras);
const { port } = await server.run();
console.log(`S3RVER_READY ${JSON.stringify({ port })}`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
if (exitWithStdin) {
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
}
