// A real embedded /v1 server on a real port with a real SQLite file in a temporary DATA_DIR.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import { readConfig, type Config } from '../../lib/config';
import { ApiService, type Logger } from '../../lib/api/service';
import { createHttpServer, listen } from '../../lib/api/http/node-server';
import type { BlobStore } from '../../lib/api/storage/blob-store';
import type { ServerLog } from '../../lib/api/http/log';
import { blobInspector, type BlobInspector } from './blobs';

export const TEST_TOKENS = { alice: 'alice-test-token-0123456789', bob: 'bob-test-token-9876543210' };

export interface TestServer {
  baseUrl: string;
  port: number;
  dataDir: string;
  /** PostgreSQL connection string when the server runs on PostgreSQL, else null. */
  databaseUrl: string | null;
  tokens: { alice: string; bob: string };
  service: ApiService;
  /** What the server's blob store (disk or object store) holds. */
  blobs: BlobInspector;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

const quiet = { log: () => {}, error: (...args: unknown[]) => console.error(...args) };

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-'));
}

export interface TestServerOptions {
  env?: Record<string, string>;
  dataDir?: string;
  /** Where the service logs (default: errors to the console). */
  log?: Logger;
  /** A blob store other than the default one (disk in DATA_DIR; the bucket with S3_BUCKET): `config` is the server's. */
  store?: (dataDir: string, config: Config) => BlobStore;
  /** The sweeps' grace period; 0 plays a start long after a crash (default: the service's). */
  sweepGraceMs?: number;
}

/**
 * Tests make many requests quickly with one token, from one address: their servers get limits no
 * test reaches, unless a test sets its own (tests/api/rate-limits.test.ts). The limiter still runs.
 */
export const GENEROUS_RATE_LIMITS = { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PEAK_PER_SECOND: '0', RATE_LIMIT_WRITES_PER_SECOND: '0', RATE_LIMIT_ANONYMOUS_PER_SECOND: '1000000' };

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const config = readConfig({
    DATA_DIR: dataDir,
    PARLEY_TOKENS: `alice:${TEST_TOKENS.alice},bob:${TEST_TOKENS.bob}`,
    ...GENEROUS_RATE_LIMITS,
    ...options.env,
  });
  let server: http.Server;
  let service: ApiService;
  let port = 0;
  const start = async () => {
    const log = options.log ?? quiet;
    ({ service } = await ApiService.open(config, log, { store: options.store?.(config.dataDir, config), sweepGraceMs: options.sweepGraceMs }));
    // A log that takes request records (jsonLog) gets them, as `npm start`'s does.
    server = createHttpServer((request) => service.dispatch(request), undefined, config, 'request' in log ? { log: log as ServerLog } : {});
    port = await listen(server, port, '127.0.0.1');
  };
  const stop = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await service.close();
  };
  await start();
  const blobs = blobInspector(config);
  return {
    get baseUrl() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    get service() {
      return service;
    },
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    tokens: TEST_TOKENS,
    blobs,
    stop: async () => {
      await stop();
      blobs.close();
    },
    restart: async () => {
      await stop();
      await start();
    },
  };
}
