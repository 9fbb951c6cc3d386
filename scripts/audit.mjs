// `npm run audit`: the compiled command (.next/parley/audit.mjs) when the production build is
// current — plain node, as `npm run token` — else the TypeScript source through tsx.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AUDIT_BUNDLE, buildState } from './build-state.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (buildState(root).current) {
  await import(pathToFileURL(path.join(root, AUDIT_BUNDLE)).href);
} else {
  const tsx = import.meta.resolve('tsx');
  const result = spawnSync(process.execPath, ['--import', tsx, path.join(root, 'scripts', 'audit.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
