// `npm start`: serve the production build with plain node. Build first only when there is no
// current build (none yet, or the sources changed since): an unchanged, built checkout starts in
// seconds and needs no build toolchain.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildState, SERVER_BUNDLE } from './build-state.mjs';

const root = process.cwd();
const state = buildState(root);
if (state.current) {
  console.log(`[parley] the build is current (built ${state.stamp.builtAt}, sources unchanged): serving it without building`);
} else {
  console.log(`[parley] building the app first (${state.reason})…`);
  // Waits if another start is building this checkout, then skips what that one built.
  const result = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
process.env.NODE_ENV ??= 'production';
await import(pathToFileURL(path.join(root, SERVER_BUNDLE)).href);
