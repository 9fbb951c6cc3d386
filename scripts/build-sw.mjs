// After `next build`: (1) builds public/sw.js — bundle workers/sw.ts with esbuild, then inject the
// precache manifest with workbox-build (Next 16 builds with Turbopack, so webpack PWA plugins would
// silently produce nothing, see ../shared/LOCAL-FIRST.md); (2) records the hashes of the inline
// scripts of the prerendered page for the Content-Security-Policy (lib/security.ts).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { injectManifest } from 'workbox-build';

const root = process.cwd();
const buildId = fs.readFileSync(path.join(root, '.next', 'BUILD_ID'), 'utf8').trim();
const bundled = path.join(root, '.next', 'sw.bundle.js');

await build({
  entryPoints: [path.join(root, 'workers', 'sw.ts')],
  bundle: true,
  format: 'iife',
  target: 'es2020',
  minify: true,
  outfile: bundled,
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});

const { count, size, warnings } = await injectManifest({
  swSrc: bundled,
  swDest: path.join(root, 'public', 'sw.js'),
  globDirectory: path.join(root, '.next', 'static'),
  globPatterns: ['**/*.{js,css,woff2,png,svg,ico}'],
  // Hashed build files need no revision.
  modifyURLPrefix: { '': '/_next/static/' },
  dontCacheBustURLsMatching: /\.[0-9a-z_-]{8,}\./i,
  maximumFileSizeToCacheInBytes: 5 * 1024 * 1024,
  additionalManifestEntries: [
    // The offline shell every navigation gets; its revision is the build.
    { url: '/', revision: buildId },
    { url: '/manifest.webmanifest', revision: buildId },
    { url: '/icons/icon-192.png', revision: buildId },
    { url: '/icons/icon-512.png', revision: buildId },
  ],
});
for (const w of warnings) console.warn('[sw]', w);
console.log(`[sw] public/sw.js precaches ${count} files (${(size / 1024).toFixed(0)} KiB)`);

const html = fs.readFileSync(path.join(root, '.next', 'server', 'app', 'index.html'), 'utf8');
const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
  (m) => `sha256-${createHash('sha256').update(m[1]).digest('base64')}`,
);
fs.writeFileSync(path.join(root, '.next', 'csp-hashes.json'), JSON.stringify([...new Set(hashes)]));
console.log(`[csp] ${hashes.length} inline scripts allowed by hash`);
