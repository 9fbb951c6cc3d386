// The npm registry mirror this project is built against serves only some platforms' builds of
// packages such as @next/swc-* and @rollup/rollup-*, so `npm install` leaves the other platforms'
// optional packages out of package-lock.json — and `npm ci` then refuses the lockfile ("Missing:
// … from lock file"). This adds them back as optional entries with their os/cpu, which npm ci skips
// on a non-matching platform (and fetches from the registry on a matching one).
// The file is written exactly as npm writes it (same key order), so a later `npm install` leaves
// it byte for byte as it is and a newcomer's checkout stays clean.
// Run after changing dependencies: node scripts/lockfile-platform-stubs.mjs
import fs from 'node:fs';

const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const packages = lock.packages;
const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openbsd', 'openharmony', 'netbsd', 'sunos', 'aix'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 's390x', 'riscv64', 'mips64el'];
let added = 0;

for (const [path, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `${path ? `${path}/` : ''}node_modules/${name}`;
    if (packages[key] || packages[`node_modules/${name}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = OS.find((o) => parts.includes(o));
    const cpu = CPU.find((c) => parts.includes(c));
    if (!os || !cpu) continue; // not a platform build: leave it to npm
    const libc = parts.includes('musl') ? ['musl'] : parts.includes('gnu') || parts.includes('gnueabihf') ? ['glibc'] : undefined;
    packages[`node_modules/${name}`] = {
      version: range.replace(/^[\^~=]/, ''),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(libc ? { libc } : {}),
    };
    added++;
  }
}
fs.writeFileSync('package-lock.json', stringifyLikeNpm(lock));
console.log(`[lockfile] added ${added} platform-specific optional entries`);

/**
 * JSON the way npm writes package-lock.json (@npmcli/arborist with json-stringify-nice): in every
 * object, plain values before objects (arrays count as plain), a few top-level keys first in a
 * fixed order, the rest by `localeCompare(…, 'en')`; two-space indent and a final newline.
 */
function stringifyLikeNpm(data) {
  const preferred = ['name', 'version', 'lockfileVersion', 'resolved', 'integrity', 'requires', 'packages', 'dependencies'];
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const rank = (k) => (preferred.includes(k) ? preferred.indexOf(k) : preferred.length);
  const compare = ([ak, av], [bk, bv]) => {
    if (isObject(av) !== isObject(bv)) return isObject(av) ? 1 : -1;
    return rank(ak) - rank(bk) || (rank(ak) === preferred.length ? ak.localeCompare(bk, 'en') : 0);
  };
  const sorted = (_key, value) => (isObject(value) ? Object.fromEntries(Object.entries(value).sort(compare)) : value);
  return `${JSON.stringify(data, sorted, 2)}\n`;
}
