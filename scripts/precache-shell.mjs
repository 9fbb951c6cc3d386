// Which build files the service worker precaches: the app shell (scripts/build-sw.mjs). Read from
// the build itself: the prerendered page's HTML names the first screen's files, and Turbopack's
// chunks name the chunks they load (as "static/chunks/<hash>.js"), so the files the app can reach
// are the closure of those names. A chunk holding a viewer library is left out with everything
// only it reaches: pdf.js and its worker are most of the build's bytes, and a file is only ever
// shown after it has been opened online or kept offline.
import fs from 'node:fs';
import path from 'node:path';

/** A viewer library, and what its code contains wherever a bundler put it (names minifiers keep). */
export const VIEWER_LIBRARIES = [
  { name: 'pdf.js', marker: /\bGlobalWorkerOptions\b|\bWorkerMessageHandler\b/ },
  { name: '@medplum/core', marker: /https:\/\/medplum\.com\/fhir\// },
];

const REFERENCE = /(?:\/_next\/)?static\/(?:chunks|media|css)\/[\w.~-]+\.(?:js|css|woff2|png|svg|ico)/g;

/**
 * `files`: paths relative to .next/static, the shell; `left`: [file, library] for each chunk left
 * out because it holds a viewer library.
 */
export function shellFiles(nextDir) {
  const staticDir = path.join(nextDir, 'static');
  const html = fs.readFileSync(path.join(nextDir, 'server', 'app', 'index.html'), 'utf8');
  const files = new Set();
  const left = new Map();
  const queue = [...references(html)];
  while (queue.length > 0) {
    const file = queue.pop();
    if (files.has(file) || left.has(file)) continue;
    const full = path.join(staticDir, file);
    if (!fs.existsSync(full)) continue;
    const text = fs.readFileSync(full, 'utf8');
    const library = VIEWER_LIBRARIES.find((l) => l.marker.test(text));
    if (library) {
      left.set(file, library.name);
      continue;
    }
    files.add(file);
    queue.push(...references(text));
  }
  if (files.size === 0) throw new Error('the prerendered page names no build file: nothing to precache');
  return { files: [...files].sort(), left: [...left].sort() };
}

function references(text) {
  return [...new Set([...text.matchAll(REFERENCE)].map((m) => m[0].replace(/^\/_next\//, '').replace(/^static\//, '')))];
}
