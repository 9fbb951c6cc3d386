// Child process: the /v1 core behind the same node:http front `npm start` uses (createHttpServer),
// without Next (not on the /v1 hot path). Env: DATA_DIR, PARLEY_TOKENS, MAX_UPLOAD_BYTES.
import { readConfig } from '../../../lib/config';
import { ApiService } from '../../../lib/api/service';
import { createHttpServer, listen } from '../../../lib/api/http/node-server';

const config = readConfig(process.env);
const { service } = await ApiService.open(config, { log: () => {}, error: console.error });
const server = createHttpServer((request) => service.dispatch(request));
const port = await listen(server, 0, '127.0.0.1');
console.log(`BENCH_READY ${JSON.stringify({ port, pid: process.pid })}`);
const stop = async () => {
  server.close();
  server.closeAllConnections();
  await service.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
