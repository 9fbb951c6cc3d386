// Is the production build current? The build (scripts/build.mjs) writes a stamp LAST, holding a
// digest of the sources as they were when it started; the build counts as current when the stamp
// is there, its digest matches the sources now, and the outputs it vouches for are present.
// Contents, not modification times: a checkout, a copy or a `touch` does not force a rebuild, and
// generated files (public/sw.js) never count as sources.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** What the build reads. Directories are walked; missing entries are simply absent. */
export const SOURCES = [
  'app',
  'lib',
  'workers',
  'public',
  'server.ts',
  'scripts/token.ts',
  'scripts/audit.ts',
  'next.config.mjs',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/build-sw.mjs',
  'scripts/precache-shell.mjs',
  'scripts/build-server.mjs',
];

/** Files the build writes inside source directories: never sources. */
export const GENERATED = new Set(['public/sw.js', 'public/sw-background.js']);

/** Build outputs, relative to the project root. */
export const OUTPUT_DIR = path.join('.next', 'parley');
export const STAMP = path.join(OUTPUT_DIR, 'build-stamp.json');
export const SERVER_BUNDLE = path.join(OUTPUT_DIR, 'server.mjs');
/** `npm run token` compiled, so an operator's machine runs it with plain node too. */
export const TOKEN_BUNDLE = path.join(OUTPUT_DIR, 'token.mjs');
/** `npm run audit` compiled the same way. */
export const AUDIT_BUNDLE = path.join(OUTPUT_DIR, 'audit.mjs');
const NEXT_BUILD_ID = path.join('.next', 'BUILD_ID');
/** What must exist for the stamp to mean anything (a half-deleted build is not current). */
const OUTPUTS = [NEXT_BUILD_ID, SERVER_BUNDLE, TOKEN_BUNDLE, AUDIT_BUNDLE, 'public/sw.js', 'public/sw-background.js', path.join('.next', 'csp-hashes.json')];

function sourceFiles(root) {
  const files = [];
  const walk = (relative) => {
    const full = path.join(root, relative);
    let stat;
    try {
      stat = fs.statSync(full);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) walk(path.posix.join(relative, name));
    } else if (stat.isFile() && !GENERATED.has(relative)) {
      files.push(relative);
    }
  };
  for (const entry of SOURCES) walk(entry);
  return files;
}

/** SHA-256 over every source file's path and contents. */
export function sourcesDigest(root) {
  const hash = createHash('sha256');
  for (const file of sourceFiles(root)) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

export function readStamp(root) {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, STAMP), 'utf8'));
  } catch {
    return null;
  }
}

export function readNextBuildId(root) {
  try {
    return fs.readFileSync(path.join(root, NEXT_BUILD_ID), 'utf8').trim();
  } catch {
    return null;
  }
}

/** Written last, once every output is in place. */
export function writeStamp(root, digest) {
  const stamp = { digest, nextBuildId: readNextBuildId(root), builtAt: new Date().toISOString() };
  fs.mkdirSync(path.join(root, OUTPUT_DIR), { recursive: true });
  const temporary = path.join(root, `${STAMP}.tmp`);
  fs.writeFileSync(temporary, `${JSON.stringify(stamp, null, 2)}\n`);
  fs.renameSync(temporary, path.join(root, STAMP));
  return stamp;
}

export function removeStamp(root) {
  fs.rmSync(path.join(root, STAMP), { force: true });
}

/** { current: true, stamp } or { current: false, reason } — the reason is shown to the user. */
export function buildState(root) {
  const stamp = readStamp(root);
  if (!stamp) return { current: false, reason: 'no complete build yet' };
  const missing = OUTPUTS.find((output) => !fs.existsSync(path.join(root, output)));
  if (missing) return { current: false, reason: `${missing} is missing` };
  if (readNextBuildId(root) !== stamp.nextBuildId) return { current: false, reason: 'the Next.js build was replaced by another build' };
  if (sourcesDigest(root) !== stamp.digest) return { current: false, reason: 'the sources changed since the last build' };
  return { current: true, stamp };
}
