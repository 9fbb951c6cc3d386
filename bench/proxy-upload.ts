// 500 MiB multipart upload through a proxy-mode server to an embedded upstream.
//   npx tsx bench/proxy-upload.ts [MiB]
// The proxy runs in a child process so its RSS is its own: the figure that matters is how much it
// grows while the upload passes through (it should stay flat, independent of the file size).
// The upload is generated on the fly; nothing holds the file in memory. Figures are printed only.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { createHttpServer, listen } from '../lib/api/http/node-server';
import { createProxy } from '../lib/proxy/proxy';
import { readConfig } from '../lib/config';
import { startTestServer, TEST_TOKENS } from '../tests/helpers/server';

const MiB = 1024 * 1024;

type FromChild = { port: number } | { baselineRss: number; peakRss: number };

async function child(upstreamUrl: string): Promise<void> {
  const proxy = createProxy(readConfig({ UPSTREAM_BASE_URL: upstreamUrl }), { log: () => {}, error: console.error });
  const port = await listen(createHttpServer((request) => proxy.dispatch(request)), 0, '127.0.0.1');
  let baselineRss = process.memoryUsage.rss();
  let peakRss = baselineRss;
  setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 20).unref();
  process.on('message', (message) => {
    if (message === 'baseline') baselineRss = peakRss = process.memoryUsage.rss();
    if (message === 'report') process.send!({ baselineRss, peakRss } satisfies FromChild);
    if (message === 'exit') process.exit(0);
  });
  process.send!({ port } satisfies FromChild);
}

function request(port: number, method: string, path: string, headers: Record<string, string>, write: (req: http.ClientRequest) => Promise<void>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    write(req).then(() => req.end(), reject);
  });
}

async function writeBytes(req: http.ClientRequest, total: number): Promise<void> {
  const block = randomBytes(MiB); // never mutated, so queued writes may share it
  for (let sent = 0; sent < total; sent += MiB) {
    if (!req.write(block.subarray(0, Math.min(MiB, total - sent)))) await new Promise((r) => req.once('drain', r));
  }
}

async function main(): Promise<void> {
  const fileMiB = Number(process.argv[2] ?? 500);
  const size = fileMiB * MiB;
  const upstream = await startTestServer({ env: { MAX_UPLOAD_BYTES: String(size + MiB) } });
  const proxyProcess = fork(fileURLToPath(import.meta.url), ['--child', upstream.baseUrl], { execArgv: process.execArgv });
  const fromChild = <T extends FromChild>() => new Promise<T>((resolve) => proxyProcess.once('message', (m) => resolve(m as T)));
  const { port } = await fromChild<{ port: number }>();
  const auth = { authorization: `Bearer ${TEST_TOKENS.alice}` };

  const created = await request(port, 'POST', '/v1/conversations', { ...auth, 'content-type': 'application/json' }, async (req) => {
    req.write(JSON.stringify({ contact_id: 'bench' }));
  });
  const conversationId = JSON.parse(created.body).id as string;
  proxyProcess.send('baseline');

  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="conversation_id"\r\n\r\n${conversationId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const started = performance.now();
  const uploaded = await request(
    port,
    'POST',
    '/v1/files',
    { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    async (req) => {
      req.write(head);
      await writeBytes(req, size);
      req.write(tail);
    },
  );
  const seconds = (performance.now() - started) / 1000;
  proxyProcess.send('report');
  const { baselineRss, peakRss } = await fromChild<{ baselineRss: number; peakRss: number }>();
  proxyProcess.send('exit');
  await upstream.stop();
  fs.rmSync(upstream.dataDir, { recursive: true, force: true });

  const file = uploaded.status === 201 ? JSON.parse(uploaded.body) : null;
  const mib = (bytes: number) => (bytes / MiB).toFixed(1);
  console.log(`upload through the proxy: ${fileMiB} MiB, HTTP ${uploaded.status}${file ? `, stored file_size ${file.file_size} (${file.file_size === size ? 'matches' : 'MISMATCH'})` : `: ${uploaded.body}`}`);
  console.log(`time ${seconds.toFixed(2)} s, ${(fileMiB / seconds).toFixed(0)} MiB/s (client, proxy and upstream on one machine; the upstream writes to disk)`);
  console.log(`proxy process RSS: ${mib(baselineRss)} MiB before, peak ${mib(peakRss)} MiB during, growth ${mib(peakRss - baselineRss)} MiB`);
}

if (process.argv[2] === '--child') {
  void child(process.argv[3]!);
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
