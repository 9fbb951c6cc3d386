// npm test: vitest, then the browser tests (scripts/browser-tests.mjs). The browser tests' build
// (Next and the server bundles, minutes of CPU) runs while vitest does: vitest's files mostly wait
// on their servers, PostgreSQL and child processes, so the build fills the cores they leave idle,
// and the browser tests then find it current. Its output is printed once vitest has finished.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

/** Runs a command; resolves with its exit code. `quiet`: its output is kept and returned instead. */
function run(cmd, args, quiet = false) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    if (quiet) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => (output += chunk));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// Without a browser (and outside CI) the browser tests skip: nothing to build for.
const building = fs.existsSync(chromium) ? run(process.execPath, ['scripts/build.mjs', '--if-stale'], true) : null;
const unit = await run('npx', ['vitest', 'run']);
const build = await building;
if (build) process.stdout.write(build.output);
if (unit.code !== 0) process.exit(unit.code);
if (build && build.code !== 0) process.exit(build.code);
const browser = await run(process.execPath, ['scripts/browser-tests.mjs', ...process.argv.slice(2)]);
process.exit(browser.code);
