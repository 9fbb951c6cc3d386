// A real embedded /v1 server on a real port with a real SQLite file in a temporary DATA_DIR.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import { readConfig } from '../../lib/config';
import { ApiService } from '../../lib/api/service';
import { createHttpServer, listen } from '../../lib/api/node-server';

export const TEST_TOKENS = { alice: 'alice-test-token-0123456789', bob: 'bob-test-token-9876543210' };

export interface TestServer {
  baseUrl: string;
  port: number;
  dataDir: string;
  tokens: { alice: string; bob: string };
  service: ApiService;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

const quiet = { log: () => {}, error: (...args: unknown[]) => console.error(...args) };

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-'));
}

export async function startTestServer(options: { env?: Record<string, string>; dataDir?: string } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const config = readConfig({
    DATA_DIR: dataDir,
    PARLEY_TOKENS: `alice:${TEST_TOKENS.alice},bob:${TEST_TOKENS.bob}`,
    ...options.env,
  });
  let server: http.Server;
  let service: ApiService;
  let port = 0;
  const start = async () => {
    ({ service } = await ApiService.open(config, quiet));
    server = createHttpServer((request) => service.dispatch(request));
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
    dataDir,
    tokens: TEST_TOKENS,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
  };
}
