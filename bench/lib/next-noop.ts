// bench/next-noop: a minimal Next app of the same build setup as Parley (Next's app router, its
// default bundler, the same next/react/dexie from the root node_modules). It holds the floors
// the app is compared with: a no-op route handler (/noop, for the api scenario) and the
// first-screen floor page (/first-screen, for the app and first-screen scenarios). Built once and
// cached in bench/next-noop/.next; built again when its sources change (a digest of them is kept
// next to the build).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH, freePort, ROOT, startChild, type Child } from './proc';

export const NOOP_DIR = path.join(BENCH, 'next-noop');
export const NEXT_BIN = path.join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');
const DIGEST_FILE = path.join(NOOP_DIR, '.next', 'bench-sources.sha256');

function sourcesDigest(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === '.next' || entry.name === 'node_modules') continue;
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else hash.update(path.relative(NOOP_DIR, file)).update('\0').update(fs.readFileSync(file)).update('\0');
    }
  };
  walk(NOOP_DIR);
  // The same versions as the app's build: a new next/react/dexie is a new floor.
  hash.update(fs.readFileSync(path.join(ROOT, 'package-lock.json')));
  return hash.digest('hex');
}

let built: Promise<void> | null = null;
export function ensureNoopBuild(log: (m: string) => void): Promise<void> {
  built ??= (async () => {
    const digest = sourcesDigest();
    if (fs.existsSync(path.join(NOOP_DIR, '.next', 'BUILD_ID')) && fs.existsSync(DIGEST_FILE) && fs.readFileSync(DIGEST_FILE, 'utf8') === digest) return;
    log('building bench/next-noop (cached in bench/next-noop/.next)…');
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [NEXT_BIN, 'build', NOOP_DIR], { cwd: ROOT, env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' }, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
        error ? reject(new Error(`next build bench/next-noop failed:\n${stdout}${stderr}`)) : resolve(),
      ),
    );
    fs.writeFileSync(DIGEST_FILE, digest);
  })();
  built.catch(() => (built = null));
  return built;
}

/** `next start bench/next-noop` on a free 127.0.0.1 port. */
export async function startNoop(): Promise<{ child: Child; baseUrl: string }> {
  const port = await freePort();
  const child = await startChild(process.execPath, [NEXT_BIN, 'start', NOOP_DIR, '-p', String(port), '-H', '127.0.0.1'], {
    name: 'next start bench/next-noop',
    env: { NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    ready: /Ready in|✓ Ready/,
  });
  return { child, baseUrl: `http://127.0.0.1:${port}` };
}
