// Compiles the custom server (server.ts and what it imports from lib/) into one ES module, so
// `npm start` runs it with plain node: no TypeScript tooling at run time. The token and audit
// commands (scripts/token.ts, scripts/audit.ts), which operators run beside the server, are compiled the same way. Packages from
// node_modules stay external (native modules such as better-sqlite3 cannot be bundled anyway).
import path from 'node:path';
import { build } from 'esbuild';
import { AUDIT_BUNDLE, SERVER_BUNDLE, TOKEN_BUNDLE } from './build-state.mjs';

const root = process.cwd();
for (const [source, bundle] of [
  ['server.ts', SERVER_BUNDLE],
  ['scripts/token.ts', TOKEN_BUNDLE],
  ['scripts/audit.ts', AUDIT_BUNDLE],
]) {
  await build({
    entryPoints: [path.join(root, source)],
    outfile: path.join(root, bundle),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
  console.log(`[server] ${bundle} compiled from ${source}`);
}
