// Browser tests: build the app (if needed), then run Playwright against Debian's Chromium. In CI a missing
// browser is a failure, never a skip.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (!fs.existsSync(chromium)) {
  const message = `[parley] ${chromium} not found: install it with "apt-get install -y chromium"`;
  if (process.env.CI) {
    console.error(message);
    process.exit(1);
  }
  console.warn(`${message}; browser tests skipped (they never skip in CI).`);
  process.exit(0);
}
const run = (cmd, args) => {
  const result = spawnSync(cmd, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
// Builds unless the build is current (same sources as the last complete build).
run(process.execPath, ['scripts/build.mjs', '--if-stale']);
run('npx', ['playwright', 'test', ...process.argv.slice(2)]);
