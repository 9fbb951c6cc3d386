// Compiles the custom server (server.ts and what it imports from lib/) into one ES module, so
// `npm start` runs it with plain node: no TypeScript tooling at run time. Packages from
// node_modules stay external (native modules such as better-sqlite3 cannot be bundled anyway).
import path from 'node:path';
import { build } from 'esbuild';
import { SERVER_BUNDLE } from './build-state.mjs';

const root = process.cwd();
await build({
  entryPoints: [path.join(root, 'server.ts')],
  outfile: path.join(root, SERVER_BUNDLE),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
console.log(`[server] ${SERVER_BUNDLE} compiled from server.ts`);
