// `npm start`: one process serving the app (Next.js) and /v1 + /files straight from the
// framework-free core — the embedded service, or the proxy when UPSTREAM_BASE_URL is set.
import next from 'next';
import { readConfig, type Config } from './lib/config';
import { ApiService } from './lib/api/service';
import { createProxy } from './lib/api/proxy';
import { createHttpServer, listen, type Dispatch } from './lib/api/node-server';
import { appSecurityHeaders, readScriptHashes } from './lib/security';

async function openBackend(config: Config): Promise<{ dispatch: Dispatch; ready(url: string): void; close(): Promise<void> }> {
  if (config.upstreamBaseUrl) {
    const proxy = createProxy(config);
    return {
      dispatch: (request) => proxy.dispatch(request),
      ready: () => {
        console.log(`[parley] proxy mode: /v1 is forwarded to ${config.upstreamBaseUrl}`);
        void proxy.check(); // logs whether the upstream answers; never fails start-up
      },
      close: async () => proxy.close(),
    };
  }
  const { service, info } = await ApiService.open(config);
  return {
    dispatch: (request) => service.dispatch(request),
    ready: (url) => {
      console.log(`[parley] embedded /v1 with data in ${config.dataDir}`);
      if (info.swept.orphans || info.swept.temp) {
        console.log(`[parley] start-up sweep removed ${info.swept.orphans} orphaned and ${info.swept.temp} temporary files`);
      }
      if (info.demoToken) {
        console.log(`[parley] first start: created a token for user "demo". Sign in at ${url} with:\n\n    ${info.demoToken}\n`);
        console.log(`[parley] try: curl -H "Authorization: Bearer ${info.demoToken}" ${url}/v1/conversations`);
      }
    },
    close: () => service.close(),
  };
}

async function main() {
  const config = readConfig();
  const dev = process.argv.includes('--dev');
  const backend = await openBackend(config);
  const app = next({ dev, hostname: 'localhost', port: config.port, dir: process.cwd() });
  await app.prepare();
  const handle = app.getRequestHandler();
  const securityHeaders = Object.entries(appSecurityHeaders(dev ? [] : readScriptHashes()));
  const server = createHttpServer(backend.dispatch, (req, res) => {
    if (!dev) for (const [name, value] of securityHeaders) res.setHeader(name, value);
    return handle(req, res);
  });
  const port = await listen(server, config.port, config.hostname);
  const url = `http://localhost:${port}`;
  console.log(`[parley] serving ${url}`);
  backend.ready(url);
  const stop = async () => {
    server.close();
    server.closeAllConnections();
    await backend.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error('[parley] failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
