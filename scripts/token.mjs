// `npm run token`: the compiled command (.next/parley/token.mjs) when the production build is
// current — plain node, no TypeScript tooling, which is what an operator's machine has — else the
// TypeScript source through tsx (a development checkout whose sources changed since the build).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildState, TOKEN_BUNDLE } from './build-state.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (buildState(root).current) {
  await import(pathToFileURL(path.join(root, TOKEN_BUNDLE)).href);
} else {
  const tsx = import.meta.resolve('tsx');
  const result = spawnSync(process.execPath, ['--import', tsx, path.join(root, 'scripts', 'token.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
