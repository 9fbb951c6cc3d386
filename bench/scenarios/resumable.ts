// Resumable uploads (tus at /v1/uploads, issue 18).
//
// 1. Over a bad link: an 8 MiB file uploaded by the app's sync engine — in Node, the same
//    SyncEngine the worker runs, its outbox in fake-indexeddb, tus-js-client through
//    resumable-upload.ts — to the core server (child process) through a small TCP proxy in this
//    process that throttles the upstream direction to 2 Mbit/s and cuts every connection every
//    15 s. Figures: bytes the app put on the link (everything it sent upstream: PATCH bodies,
//    headers, HEADs, pulls) per file byte (target ≤ 1.2), and the time to the file on the server
//    against the ideal transfer time (file size / link rate). The engine's own backoff (1 s base)
//    runs after each cut, as in the app.
// 2. Memory: a 500 MiB resumable upload (creation + 4 MiB PATCHes, as the app sends them) to the
//    server with its bytes on disk, and in an object store (s3rver in its own process): the
//    server's peak RSS growth during the upload, against a floor that does the same work — the
//    same bytes as one streamed POST /v1/files to the same server.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { createSyncClient } from '../../lib/sync/outbox/client';
import { inputValidators } from '../../lib/sync/outbox/validate-input';
import { openSyncDb } from '../../lib/sync/mirror/db';
import { SyncEngine } from '../../lib/sync/engine/engine';
import { resumableUploads } from '../../lib/sync/outbox/resumable-upload';
import { BENCH, readyInfo, ROOT, startChild, startTsChild, tempDir, type Child } from '../lib/proc';
import { sampleRss } from '../lib/rss';
import type { Scenario } from '../lib/scenario';
import { BENCH_RATE_LIMITS, BENCH_TOKENS, createSchema, PARLEY_TOKENS } from '../lib/seed';
import { median, MiB, round, sleep } from '../lib/stats';
import { pattern } from '../../tests/helpers/bytes';

const FILE_MIB = Number(process.env.BENCH_RESUMABLE_MIB || 8);
const LINK_BITS_PER_S = 2_000_000;
const CUT_EVERY_MS = 15_000;
const BIG_MIB = Number(process.env.BENCH_UPLOAD_MIB || 500);
const PATCH_BYTES = 4 * MiB;

/**
 * A TCP link in this process: upstream (client → server) bytes leave at `bytesPerS` (one link
 * shared by every connection), downstream is not limited; every `cutEveryMs` every open connection
 * is destroyed (both sides), as a dropped mobile link does. Counts the bytes the client sent.
 */
class BadLink {
  private server!: net.Server;
  port = 0;
  sent = 0;
  cuts = 0;
  private nextFree = 0;
  private readonly sockets = new Set<net.Socket>();
  private cutTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly target: number,
    private readonly bytesPerS: number,
    private readonly cutEveryMs: number,
  ) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => this.pipe(client));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  startCutting(): void {
    this.cutTimer = setInterval(() => {
      if (this.sockets.size === 0) return;
      this.cuts++;
      for (const socket of this.sockets) socket.destroy();
      this.sockets.clear();
    }, this.cutEveryMs);
  }

  stopCutting(): void {
    if (this.cutTimer) clearInterval(this.cutTimer);
    this.cutTimer = null;
  }

  private pipe(client: net.Socket): void {
    const upstream = net.connect(this.target, '127.0.0.1');
    this.sockets.add(client);
    this.sockets.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      this.sent += chunk.length;
      // Leaves when the link is free: after what is queued before it, at the link's rate.
      const now = performance.now();
      const start = Math.max(now, this.nextFree);
      this.nextFree = start + (chunk.length / this.bytesPerS) * 1000;
      client.pause();
      setTimeout(() => {
        if (upstream.destroyed) return;
        upstream.write(chunk);
        client.resume();
      }, this.nextFree - now);
    });
  }

  async stop(): Promise<void> {
    this.stopCutting();
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}


/** The app's sync engine in Node (fake-indexeddb), uploading one file through `baseUrl`. */
async function uploadThroughEngine(baseUrl: string, token: string, conversationId: string, bytes: Uint8Array, name: string) {
  const db = openSyncDb(`bench-resumable-${randomBytes(4).toString('hex')}`, { indexedDB: new IDBFactory(), IDBKeyRange });
  const engine = new SyncEngine({ db, fetch: (input, init) => fetch(input, init), baseUrl, getToken: () => token, resumable: resumableUploads });
  const client = createSyncClient(db, { validate: inputValidators });
  try {
    // The conversation is mirrored first (as a user opens it), then the file is queued.
    for (let i = 0; !(await db.conversations.get(conversationId)); i++) {
      const first = await engine.syncOnce();
      if (i > 20) throw new Error(`the conversation was not mirrored: ${JSON.stringify(first)}`);
    }
    await client.uploadFile({ conversationId }, { name, type: 'application/octet-stream', bytes });
    const t0 = performance.now();
    for (;;) {
      const report = await engine.syncOnce();
      if ((await db.outbox.count()) === 0) break;
      const failed = await db.outbox.where('state').equals('failed').first();
      if (failed) throw new Error(`upload refused: ${JSON.stringify(failed.error)}`);
      // The engine's timer would fire at the end of its backoff; so does this loop.
      const until = report.push.kind === 'waiting' ? report.push.until : Date.now() + 50;
      await sleep(Math.max(0, until - Date.now()));
    }
    return { seconds: (performance.now() - t0) / 1000 };
  } finally {
    db.close();
  }
}

function request(port: number, method: string, urlPath: string, headers: Record<string, string>, body?: (req: http.ClientRequest) => Promise<void>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    (body ? body(req) : Promise.resolve()).then(() => req.end(), reject);
  });
}

const block = randomBytes(MiB);
async function writeBytes(req: http.ClientRequest, total: number): Promise<void> {
  for (let sent = 0; sent < total; sent += MiB) {
    if (!req.write(block.subarray(0, Math.min(MiB, total - sent)))) await new Promise((r) => req.once('drain', r));
  }
}

/** s3rver in its own process with one bucket (as the uploads scenario starts it). */
async function startObjectStore(): Promise<{ child: Child; env: Record<string, string> }> {
  const child = await startChild(process.execPath, ['--openssl-legacy-provider', path.join(ROOT, 'tests/helpers/s3rver-process.mjs'), tempDir('s3rver')], {
    name: 's3rver',
    ready: /S3RVER_READY (\{.*\})/,
  });
  const endpoint = `http://127.0.0.1:${readyInfo<{ port: number }>(child).port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  await client.send(new CreateBucketCommand({ Bucket: 'parley-bench-tus' }));
  client.destroy();
  return {
    child,
    env: {
      S3_BUCKET: 'parley-bench-tus',
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  };
}

async function startCore(store: 'disk' | 's3', maxBytes: number) {
  const dataDir = tempDir(`resumable-${store}`);
  await createSchema(dataDir);
  const objectStore = store === 's3' ? await startObjectStore() : null;
  const core = await startTsChild(path.join(BENCH, 'lib/servers/core.ts'), [], {
    name: `core server (${store})`,
    // The engine reaches it through the link's port too: any port of 127.0.0.1 is this server.
    env: { DATA_DIR: dataDir, PARLEY_TOKENS, ...BENCH_RATE_LIMITS, MAX_UPLOAD_BYTES: String(maxBytes), ALLOWED_HOSTS: '127.0.0.1', ...objectStore?.env },
  });
  return {
    core,
    port: readyInfo<{ port: number }>(core).port,
    stop: () => Promise.all([core.stop(), objectStore?.child.stop()]),
  };
}

const auth = { Authorization: `Bearer ${BENCH_TOKENS.alice}` };

async function createConversation(port: number, contact: string): Promise<string> {
  const created = await request(port, 'POST', '/v1/conversations', { ...auth, 'Content-Type': 'application/json' }, async (req) => void req.write(JSON.stringify({ contact_id: contact })));
  if (created.status !== 201) throw new Error(`conversation: ${created.status} ${created.body}`);
  return JSON.parse(created.body).id as string;
}

/** A resumable upload as the app sends it: the creation, then PATCHes of 4 MiB. Returns the file id. */
async function tusUpload(port: number, conversationId: string, size: number, name: string): Promise<string> {
  const meta = `filename ${Buffer.from(name).toString('base64')},filetype ${Buffer.from('application/octet-stream').toString('base64')},conversation_id ${Buffer.from(conversationId).toString('base64')}`;
  const created = await request(port, 'POST', '/v1/uploads', { ...auth, 'Tus-Resumable': '1.0.0', 'Upload-Length': String(size), 'Upload-Metadata': meta });
  if (created.status !== 201) throw new Error(`creation: ${created.status} ${created.body}`);
  const location = new URL(String(created.headers.location), 'http://x').pathname;
  let fileId: string | undefined;
  for (let offset = 0; offset < size; offset += PATCH_BYTES) {
    const length = Math.min(PATCH_BYTES, size - offset);
    const patched = await request(
      port,
      'PATCH',
      location,
      { ...auth, 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(length) },
      (req) => writeBytes(req, length),
    );
    if (patched.status !== 204) throw new Error(`PATCH at ${offset}: ${patched.status} ${patched.body}`);
    fileId = patched.headers['upload-file-id'] as string | undefined;
  }
  if (!fileId) throw new Error('the upload completed without Upload-File-Id');
  return fileId;
}

/** The floor: the same bytes as one streamed POST /v1/files. Returns the file id. */
async function postUpload(port: number, conversationId: string, size: number, name: string): Promise<string> {
  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="conversation_id"\r\n\r\n${conversationId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const u = await request(port, 'POST', '/v1/files', { ...auth, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(head.length + size + tail.length) }, async (req) => {
    req.write(head);
    await writeBytes(req, size);
    req.write(tail);
  });
  if (u.status !== 201) throw new Error(`POST /v1/files: ${u.status} ${u.body}`);
  return JSON.parse(u.body).id as string;
}

async function deleteFile(port: number, id: string): Promise<void> {
  const del = await request(port, 'DELETE', `/v1/files/${id}`, auth);
  if (del.status !== 204) throw new Error(`delete: ${del.status}`);
}

/** Peak RSS growth (MiB) of the server while `work` runs. */
async function growthDuring(pid: number, work: () => Promise<string>, port: number): Promise<number> {
  const rss = sampleRss(pid, 5);
  const id = await work();
  const mem = rss.stop();
  await deleteFile(port, id);
  return mem.growth / MiB;
}

export const resumable: Scenario = {
  name: 'resumable',
  title: `Resumable uploads: ${FILE_MIB} MiB by the sync engine (Node, fake-indexeddb) over 2 Mbit/s cut every 15 s; ${BIG_MIB} MiB tus upload's server memory (disk, s3rver)`,
  async run({ runs, log }) {
    const figures = [];
    // ---- 1. The bad link, through the app's engine. ----
    {
      const size = FILE_MIB * MiB;
      const server = await startCore('disk', size + MiB);
      const link = new BadLink(server.port, LINK_BITS_PER_S / 8, CUT_EVERY_MS);
      await link.start();
      try {
        const conversationId = await createConversation(server.port, 'bench-resumable');
        const ideal = size / (LINK_BITS_PER_S / 8);
        const ratios: number[] = [];
        const times: number[] = [];
        const cuts: number[] = [];
        for (let r = 0; r < runs; r++) {
          const bytes = pattern(size, r + 1);
          link.sent = 0;
          link.cuts = 0;
          link.startCutting();
          const { seconds } = await uploadThroughEngine(`http://127.0.0.1:${link.port}`, BENCH_TOKENS.alice, conversationId, bytes, `link-${r}.bin`);
          link.stopCutting();
          ratios.push(link.sent / size);
          times.push(seconds / ideal);
          cuts.push(link.cuts);
          log(`run ${r + 1}/${runs}: ${(link.sent / MiB).toFixed(2)} MiB sent for ${FILE_MIB} MiB (${(link.sent / size).toFixed(3)}×), ${seconds.toFixed(1)} s vs ideal ${ideal.toFixed(1)} s, ${link.cuts} cuts`);
        }
        // Everything arrived, once each (one file per run, the right size).
        const listed = await request(server.port, 'GET', `/v1/files?conversation_id=${conversationId}&limit=100`, auth);
        const files = JSON.parse(listed.body).data as Array<{ file_size: number }>;
        if (files.length !== runs || files.some((f) => f.file_size !== size)) throw new Error(`expected ${runs} files of ${size} bytes, found ${JSON.stringify(files)}`);
        figures.push(
          { name: `${FILE_MIB} MiB over 2 Mbit/s cut every 15 s: bytes sent per file byte (all upstream traffic)`, value: round(median(ratios), 3), unit: '×', target: { op: '<=' as const, value: 1.2 } },
          { name: `${FILE_MIB} MiB over 2 Mbit/s cut every 15 s: time vs ideal (${round(ideal, 1)} s)`, value: round(median(times), 2), unit: '×', note: `cuts per upload: ${median(cuts)}` },
        );
      } finally {
        await link.stop();
        await server.stop();
      }
    }
    // ---- 2. Memory of a big resumable upload, disk and object store. ----
    for (const store of ['disk', 's3'] as const) {
      const size = BIG_MIB * MiB;
      const server = await startCore(store, size + MiB);
      try {
        const conversationId = await createConversation(server.port, `bench-resumable-${store}`);
        const floor = await growthDuring(server.core.pid, () => postUpload(server.port, conversationId, size, 'floor.bin'), server.port);
        const t0 = performance.now();
        const tus = await growthDuring(server.core.pid, () => tusUpload(server.port, conversationId, size, 'tus.bin'), server.port);
        const seconds = (performance.now() - t0) / 1000;
        log(`${store}: ${BIG_MIB} MiB tus upload in ${seconds.toFixed(1)} s, RSS growth ${tus.toFixed(1)} MiB; POST /v1/files floor ${floor.toFixed(1)} MiB`);
        const where = store === 'disk' ? 'disk' : 'object store (s3rver)';
        figures.push(
          { name: `${BIG_MIB} MiB tus upload → ${where}: server peak RSS growth`, value: round(tus, 1), unit: 'MiB', target: { op: '<=' as const, value: 64 } },
          { name: `${BIG_MIB} MiB POST /v1/files → ${where} (floor): server peak RSS growth`, value: round(floor, 1), unit: 'MiB' },
          { name: `${BIG_MIB} MiB tus upload → ${where}: RSS growth minus floor`, value: round(tus - floor, 1), unit: 'MiB', target: { op: '<=' as const, value: 32 } },
        );
      } finally {
        await server.stop();
      }
    }
    return figures;
  },
};
