// After `next build`: (1) builds public/sw.js — bundle workers/sw.ts with esbuild (and its
// IndexedDB half, workers/sw-background.ts, as public/sw-background.js), then inject the
// precache manifest with workbox-build (Next 16 builds with Turbopack, so webpack PWA plugins would
// silently produce nothing, see ../shared/LOCAL-FIRST.md); (2) records the hashes of the inline
// scripts of the prerendered page for the Content-Security-Policy (lib/security.ts).
//
// The precache is the app shell only (issue 30): the page, and the build files it reaches — what
// its HTML names and every chunk those name in turn (the screens and the write path loaded on
// first use, the sync worker) — but not the viewer's libraries (pdf.js and its workers, the HL7
// parser), nor what only they reach: those are cached by the service worker when first used.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { injectManifest } from 'workbox-build';
import { shellFiles } from './precache-shell.mjs';

const root = process.cwd();
const buildId = fs.readFileSync(path.join(root, '.next', 'BUILD_ID'), 'utf8').trim();
const bundled = path.join(root, '.next', 'sw.bundle.js');
const options = { bundle: true, format: 'iife', target: 'es2020', minify: true, logLevel: 'warning' };

// The service worker's IndexedDB half first (workers/sw-background.ts): sw.ts names it with a hash
// of its bytes, so a change to it alone is a new version of sw.js, which the browser installs.
const background = await build({
  ...options,
  entryPoints: [path.join(root, 'workers', 'sw-background.ts')],
  write: false,
  outfile: path.join(root, 'public', 'sw-background.js'),
  define: { 'process.env.NODE_ENV': '"production"' },
});
const backgroundBytes = background.outputFiles[0].contents;
fs.writeFileSync(path.join(root, 'public', 'sw-background.js'), backgroundBytes);
const backgroundUrl = `/sw-background.js?v=${createHash('sha256').update(backgroundBytes).digest('hex').slice(0, 16)}`;

await build({
  ...options,
  entryPoints: [path.join(root, 'workers', 'sw.ts')],
  outfile: bundled,
  define: { 'process.env.NODE_ENV': '"production"', PARLEY_BUILD_ID: JSON.stringify(buildId), PARLEY_BACKGROUND_URL: JSON.stringify(backgroundUrl) },
  // sw.ts takes constants from modules that also use Dexie: Dexie is imported for what it
  // exports, never for an effect of loading it, so it stays out unless something calls it.
  plugins: [importedForExportsOnly(/^dexie$/)],
});

/** Marks the packages matching `filter` free of side effects, so an unused import of them is dropped. */
function importedForExportsOnly(filter) {
  return {
    name: 'imported-for-exports-only',
    setup(b) {
      b.onResolve({ filter }, async (args) => {
        if (args.pluginData?.resolving) return undefined;
        const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { resolving: true } });
        return { ...resolved, sideEffects: false };
      });
    },
  };
}

const shell = shellFiles(path.join(root, '.next'));
for (const [file, library] of shell.left) console.log(`[sw] not precached: ${file} (${library}, and what only it reaches)`);

const { count, size, warnings } = await injectManifest({
  swSrc: bundled,
  swDest: path.join(root, 'public', 'sw.js'),
  globDirectory: path.join(root, '.next', 'static'),
  globPatterns: shell.files,
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
console.log(`[sw] public/sw.js precaches ${count} files (${(size / 1024).toFixed(0)} KiB); its IndexedDB half is ${backgroundUrl}`);

const html = fs.readFileSync(path.join(root, '.next', 'server', 'app', 'index.html'), 'utf8');
const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
  (m) => `sha256-${createHash('sha256').update(m[1]).digest('base64')}`,
);
fs.writeFileSync(path.join(root, '.next', 'csp-hashes.json'), JSON.stringify([...new Set(hashes)]));
console.log(`[csp] ${hashes.length} inline scripts allowed by hash`);
