// `npm run build`: the whole production build — Next.js, the service worker (public/sw.js), the
// compiled custom server — under the checkout's build lock, with the stamp written last (see
// build-state.mjs). `--if-stale`: do nothing when the build is already current (what `npm start`
// uses, so a start that waited for another one's build does not build again).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { withBuildLock } from './build-lock.mjs';
import { buildState, removeStamp, sourcesDigest, writeStamp } from './build-state.mjs';

const root = process.cwd();
const ifStale = process.argv.includes('--if-stale');

/** Async, not spawnSync: the lock's keep-alive runs on this process's event loop meanwhile. */
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', cwd: root });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${[command, ...args].join(' ')} failed (${signal ?? `exit ${code}`})`)),
    );
  });
}

const nextCli = createRequire(import.meta.url).resolve('next/dist/bin/next');

try {
  await withBuildLock(
    root,
    async () => {
      if (ifStale) {
        const state = buildState(root);
        if (state.current) {
          console.log('[parley] the build is current (same sources as the last complete build): nothing to build');
          return;
        }
      }
      // The digest of the sources as the build starts: a change made while it runs leaves the
      // stamp behind the sources, so the next start builds again.
      const digest = sourcesDigest(root);
      removeStamp(root);
      await run(process.execPath, [nextCli, 'build']);
      await run(process.execPath, ['scripts/build-sw.mjs']);
      await run(process.execPath, ['scripts/build-server.mjs']);
      writeStamp(root, digest);
      console.log('[parley] build complete');
    },
    { onWait: () => console.log('[parley] another build of this checkout is running; waiting for it to finish…') },
  );
} catch (error) {
  console.error(`[parley] build failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
