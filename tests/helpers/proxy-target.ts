// PARLEY_TEST_VIA_PROXY=1: an embedded upstream with a proxy-mode server in front of it, behind
// the same TestServer interface, so the API suite runs unchanged through the proxy.
import type http from 'node:http';
import { readConfig } from '../../lib/config';
import { createProxy, type ApiProxy } from '../../lib/proxy/proxy';
import { createHttpServer, listen } from '../../lib/api/http/node-server';
import fs from 'node:fs';
import { GENEROUS_RATE_LIMITS, startTestServer, tempDataDir, type TestServer, type TestServerOptions } from './server';

const quiet = { log: () => {}, error: () => {} };

export interface ProxyServer {
  baseUrl: string;
  port: number;
  proxy: ApiProxy;
  stop(): Promise<void>;
}

/** A proxy-mode server on 127.0.0.1 in front of `upstreamBaseUrl`; env as for readConfig. */
export async function startProxy(upstreamBaseUrl: string, env: Record<string, string> = {}): Promise<ProxyServer> {
  // Its own DATA_DIR: the proxy stages resumable uploads there (never ./data of the checkout).
  const ownDataDir = env.DATA_DIR ? null : tempDataDir();
  const config = readConfig({ UPSTREAM_BASE_URL: upstreamBaseUrl, ...GENEROUS_RATE_LIMITS, ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}), ...env });
  const proxy = createProxy(config, quiet);
  const server: http.Server = createHttpServer((request) => proxy.dispatch(request), undefined, config);
  const port = await listen(server, 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    proxy,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await proxy.close();
      if (ownDataDir) fs.rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}

const HTTP_TIMEOUTS = ['HEADERS_TIMEOUT_MS', 'BODY_IDLE_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS'];

export async function startProxiedServer(options: Omit<TestServerOptions, 'dataDir'> & { edgeEnv?: Record<string, string> } = {}): Promise<TestServer> {
  const { edgeEnv, ...upstreamOptions } = options;
  const upstream = await startTestServer(upstreamOptions);
  // Proxy-side settings only: the upstream's own env (tokens, limits) belongs to the upstream. The
  // HTTP timeouts are the front's too: it is the server a stalled client talks to.
  const timeouts = Object.fromEntries(Object.entries(options.env ?? {}).filter(([name]) => HTTP_TIMEOUTS.includes(name)));
  const front = await startProxy(upstream.baseUrl, {
    UPSTREAM_CONNECT_TIMEOUT_MS: '2000',
    UPSTREAM_IDLE_TIMEOUT_MS: '30000',
    ...timeouts,
    ...edgeEnv,
  });
  return {
    baseUrl: front.baseUrl,
    port: front.port,
    get dataDir() {
      return upstream.dataDir;
    },
    databaseUrl: upstream.databaseUrl,
    get service() {
      return upstream.service;
    },
    tokens: upstream.tokens,
    blobs: upstream.blobs,
    restart: () => upstream.restart(),
    stop: async () => {
      await front.stop();
      await upstream.stop();
    },
  };
}
