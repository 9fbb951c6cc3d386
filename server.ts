// `npm start`: one process serving the app (Next.js) and the /v1 service (framework-free core).
import next from 'next';
import { readConfig } from './lib/config';
import { ApiService } from './lib/api/service';
import { createHttpServer, listen } from './lib/api/node-server';

async function main() {
  const config = readConfig();
  const dev = process.argv.includes('--dev');
  const { service, info } = await ApiService.open(config);
  const app = next({ dev, hostname: 'localhost', port: config.port, dir: process.cwd() });
  await app.prepare();
  const handle = app.getRequestHandler();
  const server = createHttpServer((request) => service.dispatch(request), (req, res) => handle(req, res));
  const port = await listen(server, config.port, config.hostname);
  const url = `http://localhost:${port}`;
  console.log(`[parley] serving ${url} (data in ${config.dataDir})`);
  if (info.swept.orphans || info.swept.temp) {
    console.log(`[parley] start-up sweep removed ${info.swept.orphans} orphaned and ${info.swept.temp} temporary files`);
  }
  if (info.demoToken) {
    console.log(`[parley] first start: created a token for user "demo". Sign in at ${url} with:\n\n    ${info.demoToken}\n`);
    console.log(`[parley] try: curl -H "Authorization: Bearer ${info.demoToken}" ${url}/v1/conversations`);
  }
  const stop = async () => {
    server.close();
    server.closeAllConnections();
    await service.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error('[parley] failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
