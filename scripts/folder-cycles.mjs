// `node scripts/folder-cycles.mjs` (part of `npm run lint`): import cycles between folders.
//
// Files may import each other in a circle only within one folder; between folders the imports
// go one way. Every import of lib/ and app/ is read (static, `export … from`, `import type`,
// dynamic `import()` and `typeof import()`: a type needed both ways is a cycle too) with the
// TypeScript compiler's pre-processor, resolved (relative, or `@/` from the root) to a file, and
// the folders' graph is searched for strongly connected components. Where a parent folder
// declares the order of its subfolders (LAYERS), an import that goes up that order is reported as
// well, even before it closes a cycle. Exit status 1 on any finding, with the imports that make it.
//
// Options: --root <dir> (default: the repository), then the folders to read (default: lib app).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { sourceFiles } from './source-files.mjs';

/**
 * The direction of each layered folder: its subfolders, lowest first. A subfolder may import the
 * ones before it, never one after it. Files directly in the parent (entry points) may import any.
 */
export const LAYERS = {
  // lib/sync/README.md: core ← mirror ← outbox ← pull ← engine ← session.
  'lib/sync': ['core', 'mirror', 'outbox', 'pull', 'engine', 'session'],
  // The server: storage ← the domain'''s records and rules ← HTTP plumbing ← the routes; service.ts and
  // openapi.ts, directly in lib/api, assemble them.
  'lib/api': ['storage', 'domain', 'http', 'routes'],
};

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.js', '.mjs', '.jsx'];

function resolveFile(base) {
  const candidates = [base, ...EXTENSIONS.map((ext) => base + ext), ...EXTENSIONS.map((ext) => path.join(base, 'index' + ext))];
  // `./x.js` written for `./x.ts` (ESM style).
  if (/\.m?js$/.test(base)) candidates.push(base.replace(/\.m?js$/, '.ts'), base.replace(/\.m?js$/, '.tsx'));
  return candidates.find((file) => fs.existsSync(file) && fs.statSync(file).isFile()) ?? null;
}

/** The file an import names, or null (a package, or a file that is not there). */
export function resolveImport(root, fromFile, specifier) {
  if (specifier.startsWith('@/')) return resolveFile(path.join(root, specifier.slice(2)));
  if (specifier.startsWith('.')) return resolveFile(path.resolve(path.dirname(fromFile), specifier));
  return null;
}

/**
 * The graph of imports between siblings, at every level: an import from one file to another is an
 * edge between the two children of their deepest common folder that hold them — a subfolder
 * (everything under it, as one node) or a file directly in that folder. `lib/sync/mirror/x.ts` →
 * `lib/view/y.ts` is `lib/sync` → `lib/view`; `lib/sync/page.ts` → `lib/sync/mirror/db.ts` is
 * `lib/sync/page.ts` → `lib/sync/mirror`; two files of one folder make no edge. Node → node → the
 * imports (file → file, relative to root) that make the edge. Only files inside `dirs` are read
 * and followed.
 */
export function folderGraph(root, dirs = ['lib', 'app']) {
  const graph = new Map();
  const rel = (file) => path.relative(root, file).split(path.sep).join('/');
  const inside = (file) => dirs.some((dir) => rel(file) === dir || rel(file).startsWith(dir + '/'));
  const node = (file) => {
    if (!graph.has(file)) graph.set(file, new Map());
    return graph.get(file);
  };
  for (const dir of dirs) {
    for (const file of sourceFiles(path.join(root, dir), EXTENSIONS)) {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        const target = resolveImport(root, file, fileName);
        if (!target || !inside(target)) continue;
        const a = rel(file).split('/');
        const b = rel(target).split('/');
        let common = 0;
        while (common < a.length - 1 && common < b.length - 1 && a[common] === b[common]) common++;
        // Both directly in the common folder: files of one folder may import each other freely.
        if (common === a.length - 1 && common === b.length - 1) continue;
        const from = a.slice(0, common + 1).join('/');
        const to = b.slice(0, common + 1).join('/');
        if (from === to) continue;
        const edges = node(from);
        node(to);
        if (!edges.has(to)) edges.set(to, []);
        edges.get(to).push(`${rel(file)} → ${rel(target)}`);
      }
    }
  }
  return graph;
}

/** Whether a node of folderGraph is a folder (not a source file). */
const isFolder = (name) => !EXTENSIONS.some((ext) => name.endsWith(ext));

/** The strongly connected components of more than one folder (Tarjan), each sorted. */
export function findCycles(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (node) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indices.get(next)));
    }
    if (low.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      // Files of one folder in a circle are allowed; a circle through a folder is not.
      if (component.length > 1 && component.some(isFolder)) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indices.has(node)) visit(node);
  return components.sort((a, b) => a[0].localeCompare(b[0]));
}

/** Which layer of `layers` a folder is in: [parent, rank] or null. */
function layerOf(folder, layers) {
  for (const [parent, order] of Object.entries(layers)) {
    if (!folder.startsWith(parent + '/')) continue;
    const rank = order.indexOf(folder.slice(parent.length + 1).split('/')[0]);
    if (rank >= 0) return [parent, rank];
  }
  return null;
}

/** Imports that go up a declared order (a lower layer importing a higher one of the same parent). */
export function layerViolations(graph, layers = LAYERS) {
  const found = [];
  for (const [from, edges] of graph) {
    const a = layerOf(from, layers);
    if (!a) continue;
    for (const [to, imports] of edges) {
      const b = layerOf(to, layers);
      if (b && b[0] === a[0] && b[1] > a[1]) found.push({ from, to, imports });
    }
  }
  return found.sort((x, y) => x.from.localeCompare(y.from) || x.to.localeCompare(y.to));
}

/** Every finding as lines of text (empty: none). */
export function report(root, dirs, layers = LAYERS) {
  const graph = folderGraph(root, dirs);
  const lines = [];
  for (const component of findCycles(graph)) {
    lines.push(`Folder cycle: ${component.join(' ↔ ')}`);
    for (const from of component) {
      for (const [to, imports] of graph.get(from) ?? []) {
        if (component.includes(to)) for (const line of imports) lines.push(`  ${line}`);
      }
    }
  }
  for (const { from, to, imports } of layerViolations(graph, layers)) {
    const parent = Object.keys(layers).find((p) => from.startsWith(p + '/'));
    lines.push(`Layer order (${parent}: ${layers[parent].join(' ← ')}): ${from} may not import ${to}`);
    for (const line of imports) lines.push(`  ${line}`);
  }
  return lines;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const at = args.indexOf('--root');
  if (at >= 0) {
    root = path.resolve(args[at + 1]);
    args.splice(at, 2);
  }
  const dirs = args.length > 0 ? args : ['lib', 'app'];
  const lines = report(root, dirs);
  if (lines.length > 0) {
    console.error(lines.join('\n'));
    console.error('\nImports between folders go one way (scripts/folder-cycles.mjs; lib/sync/README.md).');
    process.exit(1);
  }
  console.log(`folder-cycles: no cycle between the folders of ${dirs.join(', ')}`);
}
