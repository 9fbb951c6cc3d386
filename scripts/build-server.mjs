// Compiles the custom server (server.ts and what it imports from lib/) into one ES module, so
// `npm start` runs it with plain node: no TypeScript tooling at run time. The token and audit
// commands (scripts/token.ts, scripts/audit.ts), which operators run beside the server, are
// compiled the same way (compile-node.mjs).
import path from 'node:path';
import { AUDIT_BUNDLE, SERVER_BUNDLE, TOKEN_BUNDLE } from './build-state.mjs';
import { compileNodeEntry } from './compile-node.mjs';

const root = process.cwd();
for (const [source, bundle] of [
  ['server.ts', SERVER_BUNDLE],
  ['scripts/token.ts', TOKEN_BUNDLE],
  ['scripts/audit.ts', AUDIT_BUNDLE],
]) {
  await compileNodeEntry(path.join(root, source), path.join(root, bundle));
  console.log(`[server] ${bundle} compiled from ${source}`);
}
