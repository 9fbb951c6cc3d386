// An S3-compatible server (s3rver, in its own process on a free port) for tests that keep file
// bytes in an object store, and the S3_* settings that point the service at a fresh bucket in it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

const LAUNCHER = path.join(path.dirname(fileURLToPath(import.meta.url)), 's3rver-process.mjs');
/** s3rver's built-in account. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface S3TestServer {
  endpoint: string;
  /** Where s3rver keeps the buckets. */
  directory: string;
  pid: number;
  /** Creates a fresh bucket and returns the env that points the service at it. */
  newBucket(): Promise<{ bucket: string; env: Record<string, string> }>;
  client(): S3Client;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
  /** Kills the server at once (as a crash would), keeping its directory for a new one. */
  kill(): Promise<void>;
}

export function s3Client(endpoint: string): S3Client {
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3RVER_CREDENTIALS });
}

/**
 * `directory`: reuse what an earlier (killed) server stored; a fresh temporary one by default.
 * `asPublished`: s3rver without the two multipart operations the launcher adds (a store that lacks them).
 */
export async function startS3Server(options: { directory?: string; asPublished?: boolean } = {}): Promise<S3TestServer> {
  const directory = options.directory ?? fs.mkdtempSync(path.join(os.tmpdir(), 'parley-s3rver-'));
  // s3rver makes ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its legacy provider.
  const child = spawn(process.execPath, ['--openssl-legacy-provider', LAUNCHER, '--exit-with-stdin', ...(options.asPublished ? ['--as-published'] : []), directory], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /S3RVER_READY (\{.*\})/.exec(output);
      if (ready) resolve(JSON.parse(ready[1]!).port);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`s3rver exited (${code ?? signal}) before it was ready:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const clients: S3Client[] = [];
  const client = () => {
    const c = s3Client(endpoint);
    clients.push(c);
    return c;
  };
  return {
    endpoint,
    directory,
    pid: child.pid!,
    client,
    async newBucket() {
      const bucket = `parley-${randomBytes(6).toString('hex')}`;
      const c = s3Client(endpoint);
      try {
        await c.send(new CreateBucketCommand({ Bucket: bucket }));
      } finally {
        c.destroy();
      }
      return {
        bucket,
        env: {
          S3_BUCKET: bucket,
          S3_ENDPOINT: endpoint,
          S3_FORCE_PATH_STYLE: 'true',
          S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
          S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
        },
      };
    },
    async stop() {
      for (const c of clients) c.destroy();
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(directory, { recursive: true, force: true });
    },
    async kill() {
      for (const c of clients) c.destroy();
      child.kill('SIGKILL');
      await exited;
    },
  };
}
