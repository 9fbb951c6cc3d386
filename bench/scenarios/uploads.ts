// 3. A 500 MiB upload, generated on the fly (never held in memory): MiB/s through the service
//    (core server in a child process) vs a bare node:http server writing the same stream to the same
//    disk and fsyncing it (the floor); and the service's peak RSS growth while it streams.
//    `uploads-s3` sends the same request with the service's file bytes in an S3-compatible object
//    store (s3rver in its own process on loopback — not S3), against the same floor.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { BENCH, readyInfo, ROOT, startChild, startTsChild, tempDir, type Child } from '../lib/proc';
import { sampleRss } from '../lib/rss';
import type { Scenario } from '../lib/scenario';
import { BENCH_RATE_LIMITS, BENCH_TOKENS, createSchema, PARLEY_TOKENS } from '../lib/seed';
import { median, MiB, round } from '../lib/stats';

const SIZE_MIB = Number(process.env.BENCH_UPLOAD_MIB || 500);

function send(port: number, method: string, urlPath: string, headers: Record<string, string>, write: (req: http.ClientRequest) => Promise<void>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    write(req).then(() => req.end(), reject);
  });
}

const block = randomBytes(MiB); // shared, never mutated
async function writeBytes(req: http.ClientRequest, total: number): Promise<void> {
  for (let sent = 0; sent < total; sent += MiB) {
    if (!req.write(block.subarray(0, Math.min(MiB, total - sent)))) await new Promise((r) => req.once('drain', r));
  }
}

/** s3rver (the tests' launcher) in its own process, with one bucket; the S3_* env that points the service at it. */
async function startObjectStore(): Promise<{ child: Child; endpoint: string; bucket: string; env: Record<string, string> }> {
  const child = await startChild(process.execPath, ['--openssl-legacy-provider', path.join(ROOT, 'tests/helpers/s3rver-process.mjs'), tempDir('s3rver')], {
    name: 's3rver',
    ready: /S3RVER_READY (\{.*\})/,
  });
  const endpoint = `http://127.0.0.1:${readyInfo<{ port: number }>(child).port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  await client.send(new CreateBucketCommand({ Bucket: 'parley-bench' }));
  client.destroy();
  return {
    child,
    endpoint,
    bucket: 'parley-bench',
    env: {
      S3_BUCKET: 'parley-bench',
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  };
}

function uploadScenario(store: 'disk' | 's3'): Scenario {
  const where = store === 'disk' ? '' : ' → object store (s3rver)';
  return {
    name: store === 'disk' ? 'uploads' : 'uploads-s3',
    title:
      store === 'disk'
        ? `Uploads: ${SIZE_MIB} MiB streamed, service vs bare node:http to the same disk`
        : `Uploads: ${SIZE_MIB} MiB streamed, service with bytes in an object store (s3rver on loopback) vs bare node:http to disk`,
    async run({ runs, log }) {
      const size = SIZE_MIB * MiB;
      const dataDir = tempDir('upload');
      await createSchema(dataDir);
      const floorDir = path.join(dataDir, 'floor');
      fs.mkdirSync(floorDir);
      const objectStore = store === 's3' ? await startObjectStore() : null;
      const core = await startTsChild(path.join(BENCH, 'lib/servers/core.ts'), [], {
        name: 'core server',
        env: { DATA_DIR: dataDir, PARLEY_TOKENS, ...BENCH_RATE_LIMITS, MAX_UPLOAD_BYTES: String(size + MiB), ...objectStore?.env },
      });
      const floor = await startTsChild(path.join(BENCH, 'lib/servers/floor.ts'), ['upload', floorDir], { name: 'floor (upload)' });
      // For context: the same bytes through a bare node:http server into the same store's write path.
      const storeFloor = objectStore
        ? await startTsChild(path.join(BENCH, 'lib/servers/floor.ts'), ['upload-s3', objectStore.endpoint, objectStore.bucket], {
            name: 'floor (upload to s3rver)',
            env: objectStore.env,
          })
        : null;
      try {
        const corePort = readyInfo<{ port: number }>(core).port;
        const floorPort = readyInfo<{ port: number }>(floor).port;
        const auth = { Authorization: `Bearer ${BENCH_TOKENS.alice}` };
        const created = await send(corePort, 'POST', '/v1/conversations', { ...auth, 'Content-Type': 'application/json' }, async (req) => void req.write('{"contact_id":"bench-upload"}'));
        const conversationId = JSON.parse(created.body).id as string;

        const floorRates: number[] = [];
        const storeFloorRates: number[] = [];
        const coreRates: number[] = [];
        const growth: number[] = [];
        for (let r = 0; r < runs; r++) {
          // Floor: the raw bytes, to the same disk, fsynced.
          let t0 = performance.now();
          const f = await send(floorPort, 'POST', '/upload', { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) }, (req) => writeBytes(req, size));
          const floorS = (performance.now() - t0) / 1000;
          if (f.status !== 201 || JSON.parse(f.body).size !== size) throw new Error(`floor upload: ${f.status} ${f.body}`);
          floorRates.push(SIZE_MIB / floorS);
          if (storeFloor) {
            t0 = performance.now();
            const sf = await send(readyInfo<{ port: number }>(storeFloor).port, 'POST', '/upload', { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) }, (req) => writeBytes(req, size));
            if (sf.status !== 201 || JSON.parse(sf.body).size !== size) throw new Error(`store floor upload: ${sf.status} ${sf.body}`);
            storeFloorRates.push(SIZE_MIB / ((performance.now() - t0) / 1000));
          }

          // The service: multipart, as the app and curl -F send it.
          const boundary = `bench${randomBytes(8).toString('hex')}`;
          const head = Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="conversation_id"\r\n\r\n${conversationId}\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big-${r}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          );
          const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
          const rss = sampleRss(core.pid, 5);
          t0 = performance.now();
          const u = await send(
            corePort,
            'POST',
            '/v1/files',
            { ...auth, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(head.length + size + tail.length) },
            async (req) => {
              req.write(head);
              await writeBytes(req, size);
              req.write(tail);
            },
          );
          const coreS = (performance.now() - t0) / 1000;
          const mem = rss.stop();
          if (u.status !== 201) throw new Error(`upload: ${u.status} ${u.body}`);
          const file = JSON.parse(u.body);
          if (file.file_size !== size) throw new Error(`upload stored ${file.file_size} bytes, sent ${size}`);
          coreRates.push(SIZE_MIB / coreS);
          growth.push(mem.growth / MiB);
          const storeFloorNote = storeFloor ? `, store floor ${storeFloorRates[r]!.toFixed(0)} MiB/s` : '';
          log(`run ${r + 1}/${runs}: floor ${(SIZE_MIB / floorS).toFixed(0)} MiB/s${storeFloorNote}, service ${(SIZE_MIB / coreS).toFixed(0)} MiB/s, RSS ${(mem.baseline / MiB).toFixed(0)} → peak ${(mem.peak / MiB).toFixed(0)} MiB`);
          // Free the disk for the next run.
          const del = await fetch(`http://127.0.0.1:${corePort}/v1/files/${file.id}`, { method: 'DELETE', headers: auth });
          if (del.status !== 204) throw new Error(`delete: ${del.status}`);
        }
        const ratio = round(median(coreRates.map((c, i) => c / floorRates[i]!)), 3);
        const rss = { name: 'server peak RSS growth during upload (max of runs)', value: round(Math.max(...growth), 1), unit: 'MiB', target: { op: '<=' as const, value: 64 } };
        const service = { name: `${SIZE_MIB} MiB upload: service${where}`, value: round(median(coreRates), 0), unit: 'MiB/s' };
        const diskFloor = { name: `${SIZE_MIB} MiB upload: floor (bare node:http → disk, fsync)`, value: round(median(floorRates), 0), unit: 'MiB/s' };
        if (store === 'disk') return [service, diskFloor, { name: 'upload vs floor', value: ratio, unit: '×', target: { op: '>=', value: 0.7 } }, rss];
        // s3rver's own work (each part written to disk, then copied into the object, with MD5s) is
        // in the object-store figures: reported, held to no target.
        return [
          service,
          diskFloor,
          { name: 'upload → object store vs disk floor', value: ratio, unit: '×' },
          { name: `${SIZE_MIB} MiB upload: store floor (bare node:http → Upload → s3rver)`, value: round(median(storeFloorRates), 0), unit: 'MiB/s' },
          { name: 'upload → object store vs store floor', value: round(median(coreRates.map((c, i) => c / storeFloorRates[i]!)), 3), unit: '×' },
          rss,
        ];
      } finally {
        await Promise.all([core.stop(), floor.stop(), storeFloor?.stop(), objectStore?.child.stop()]);
      }
    },
  };
}

export const uploads = uploadScenario('disk');
export const uploadsS3 = uploadScenario('s3');
