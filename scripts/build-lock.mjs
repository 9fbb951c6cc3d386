// One build at a time per checkout: two `npm start`s (or a start and an `npm run build`) in the
// same directory would otherwise run `next build` over each other ("Another next build process is
// already running"). The second waits for the first, then finds the build current and skips it.
// proper-lockfile keeps the lock's mtime fresh while it is held, so a lock left by a killed
// process is taken over once stale.
import path from 'node:path';
import lockfile from 'proper-lockfile';

export const BUILD_LOCK = '.parley-build.lock';

/**
 * Runs `work` holding the checkout's build lock. `onWait` is called once if another process holds
 * it (we then wait until it is released, checking every `pollMs`).
 */
export async function withBuildLock(root, work, { onWait = () => {}, pollMs = 250, staleMs = 15_000 } = {}) {
  const options = {
    realpath: false,
    lockfilePath: path.join(root, BUILD_LOCK),
    stale: staleMs,
    onCompromised: (error) => console.warn(`[parley] the build lock was lost (${error.message}); another build may start`),
  };
  let release;
  try {
    release = await lockfile.lock(root, options);
  } catch (error) {
    if (error.code !== 'ELOCKED') throw error;
    onWait();
    release = await lockfile.lock(root, { ...options, retries: { retries: 1_000_000, factor: 1, minTimeout: pollMs, maxTimeout: pollMs } });
  }
  try {
    return await work();
  } finally {
    await release();
  }
}
