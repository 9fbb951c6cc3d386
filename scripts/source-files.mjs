// The source files under a folder, for the lint scripts that read them with the TypeScript
// parser (folder-cycles.mjs, count-casts.mjs): node_modules, dot-folders and declaration files left out.
import fs from 'node:fs';
import path from 'node:path';

/** Every file under `dir` whose name ends with one of `extensions` (none if `dir` does not exist). */
export function sourceFiles(dir, extensions) {
  const out = [];
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full, extensions));
    else if (extensions.some((ext) => entry.name.endsWith(ext)) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}
