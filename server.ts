// `npm start` (compiled to .next/parley/server.mjs by the build) and `npm run dev` (through tsx):
// one process serving the app (Next.js) and /v1, /files, /healthz, /readyz straight from the
// framework-free core — the embedded service, or the proxy when UPSTREAM_BASE_URL is set.
// `--api-only` serves the core without the app (no build needed: what the process tests start).
//
// Logs: start-up lines are plain text for the person starting it; then one JSON line per request
// and per error (lib/api/http/log.ts). SIGTERM/SIGINT shut down gracefully (SHUTDOWN_TIMEOUT_MS).
import type http from 'node:http';
import { ConfigError, readConfig, type Config } from './lib/config';
import { ApiService } from './lib/api/service';
import { createProxy } from './lib/proxy/proxy';
import { createHttpServer, drainServer, listen, type Dispatch, type NodeHandler, type UpgradeHandler } from './lib/api/http/node-server';
import { isHealthPath, serveHealth } from './lib/api/http/health';
import { jsonLog, type ServerLog } from './lib/api/http/log';
import { appSecurityHeaders, readScriptHashes } from './lib/security';

interface Backend {
  dispatch: Dispatch;
  /** Origins besides this one the app's code reads files from: the object store's, when /files/… redirects there. */
  connectOrigins: string[];
  ready(url: string): void;
  /** Nothing new is accepted: end what would otherwise run for ever (live event streams). */
  beginShutdown(): void;
  close(): Promise<void>;
}

async function openBackend(config: Config, log: ServerLog): Promise<Backend> {
  if (config.upstreamBaseUrl) {
    const proxy = createProxy(config, log);
    let shuttingDown = false;
    return {
      // No dependencies of its own to be ready for (see health.ts): /readyz is this process's.
      dispatch: (request) =>
        isHealthPath(request.path) ? serveHealth(request, {}, log, { shuttingDown }) : proxy.dispatch(request),
      // The upstream's file URLs are its own (a redirect there is its business): none known here.
      connectOrigins: [],
      ready: () => {
        log.log(`[parley] proxy mode: /v1 is forwarded to ${config.upstreamBaseUrl}`);
        if (config.oidc) log.log('[parley] OIDC_* ignored: single sign-on makes tokens of this server, which the upstream does not know (not offered in proxy mode)');
        void proxy.check(); // logs whether the upstream answers; never fails start-up
      },
      beginShutdown: () => {
        shuttingDown = true;
      },
      close: async () => proxy.close(),
    };
  }
  const { service, info } = await ApiService.open(config, log);
  return {
    dispatch: (request) => service.dispatch(request),
    connectOrigins: info.redirectOrigin ? [info.redirectOrigin] : [],
    ready: (url) => {
      log.log(`[parley] embedded /v1 with data in ${config.dataDir}`);
      log.log(`[parley] file bytes: ${info.blobStore}`);
      if (config.oidc) log.log(`[parley] single sign-on with ${config.oidc.issuerUrl} (redirect URI: ${config.assetUrl ?? url}/auth/oidc/callback)`);
      if (info.swept.orphans || info.swept.temp) {
        log.log(`[parley] start-up sweep removed ${info.swept.orphans} orphaned and ${info.swept.temp} temporary files`);
      }
      if (info.demoToken) {
        log.log(`[parley] first start: created a token for user "demo". Sign in at ${url} with:\n\n    ${info.demoToken}\n`);
        log.log(`[parley] try: curl -H "Authorization: Bearer ${info.demoToken}" ${url}/v1/conversations`);
      }
    },
    beginShutdown: () => service.beginShutdown(),
    close: () => service.close(),
  };
}

/** Refuses to start on a port someone else has, saying so. */
async function bind(server: http.Server, config: Config): Promise<number> {
  try {
    return await listen(server, config.port, config.hostname);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(
      `port ${config.port} on ${config.hostname} is already in use — is Parley (or another program) already running there? ` +
        'Stop it, or set PORT to serve on another port.',
    );
  }
}

const dev = process.argv.includes('--dev');

interface Pages {
  page: NodeHandler;
  /** Next's hot reload (`--dev` only). */
  upgrade?: UpgradeHandler;
}

/** The app's pages through Next, or none (`--api-only`: 404 for everything but the core's paths). */
async function openPages(port: number, connectOrigins: readonly string[]): Promise<Pages | undefined> {
  if (process.argv.includes('--api-only')) return undefined;
  const { default: next } = await import('next');
  const app = next({ dev, hostname: 'localhost', port, dir: process.cwd() });
  await app.prepare();
  const handle = app.getRequestHandler();
  const securityHeaders = Object.entries(appSecurityHeaders(dev ? [] : readScriptHashes(), connectOrigins));
  return {
    page: (req, res) => {
      if (!dev) for (const [name, value] of securityHeaders) res.setHeader(name, value);
      return handle(req, res);
    },
    upgrade: dev ? (app.getUpgradeHandler() as UpgradeHandler) : undefined,
  };
}

async function main() {
  // Every configuration problem at once, before anything listens or opens.
  const config = readConfig();
  const log = jsonLog();
  // Listen first, answering once ready: a second start on a taken port stops here, before it
  // opens (and sweeps) the data directory another instance may be using.
  let ready!: (handlers: { dispatch: Dispatch; pages?: Pages }) => void;
  const handlers = new Promise<{ dispatch: Dispatch; pages?: Pages }>((resolve) => (ready = resolve));
  const server = createHttpServer(
    async (request) => (await handlers).dispatch(request),
    async (req, res) => {
      const { pages } = await handlers;
      if (pages) return pages.page(req, res);
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
    },
    config,
    {
      log,
      // Only Next's hot reload switches protocols, only in development; every other upgrade
      // request is refused by the front.
      upgrade: dev
        ? { paths: /^\/_next\//, handler: (req, socket, head) => void handlers.then(({ pages }) => (pages?.upgrade ? pages.upgrade(req, socket, head) : socket.destroy())) }
        : undefined,
    },
  );
  const port = await bind(server, config);
  const backend = await openBackend(config, log);
  const pages = await openPages(port, backend.connectOrigins);
  ready({ dispatch: backend.dispatch, pages });
  const url = `http://localhost:${port}`;
  log.log(`[parley] serving ${url}`);
  backend.ready(url);

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      log.log(`[parley] ${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    log.log(`[parley] ${signal}: shutting down — no new connections; requests in flight have ${config.shutdownTimeoutMs} ms to finish`);
    const { cut } = await drainServer(server, config.shutdownTimeoutMs, () => backend.beginShutdown());
    if (cut) log.error(`[parley] shutdown: ${cut} request(s) still running after ${config.shutdownTimeoutMs} ms were cut off`, { cut });
    // Closing waits for the database's pooled connections, and a request cut above may still hold
    // one (its query waiting on a lock held elsewhere, for ever): the close gets the same budget,
    // then the process goes anyway — a shutdown that never ends only waits for a SIGKILL.
    let deadline: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      backend.close().then(() => true),
      new Promise<false>((resolve) => (deadline = setTimeout(() => resolve(false), config.shutdownTimeoutMs))),
    ]);
    clearTimeout(deadline);
    if (!closed) {
      log.error(`[parley] shutdown: closing the database and the file store did not finish within ${config.shutdownTimeoutMs} ms; exiting without it`);
      process.exit(1);
    }
    log.log('[parley] stopped');
    process.exit(0);
  };
  process.on('SIGINT', (signal) => void stop(signal));
  process.on('SIGTERM', (signal) => void stop(signal));
}

main().catch((error) => {
  if (error instanceof ConfigError) {
    console.error(`[parley] cannot start: ${error.problems.length === 1 ? 'a problem' : `${error.problems.length} problems`} with the configuration (see README, Configuration):`);
    for (const problem of error.problems) console.error(`  - ${problem}`);
  } else {
    console.error('[parley] failed to start:', error instanceof Error ? error.message : error);
  }
  process.exit(1);
});
