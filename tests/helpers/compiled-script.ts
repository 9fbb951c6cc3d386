// A command of scripts/ (token.ts, audit.ts) compiled once per test file, as the production build
// compiles it (scripts/build-server.mjs: one ES module, packages external), so that a test runs
// it as an operator does — plain node — instead of through tsx, which transforms the TypeScript
// again on every start (two processes each time: seconds apiece on a loaded machine, so a test
// file that starts the command tens of times ran into its time limit).
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const checkout = process.cwd();

export interface CompiledScript {
  /** The compiled module: run it with `process.execPath`. */
  file: string;
  remove(): void;
}

/**
 * Compiles `scripts/<name>.ts` into a fresh directory under node_modules/.cache, where the
 * packages it leaves external resolve as they do for the build's output.
 */
export async function compileScript(name: string): Promise<CompiledScript> {
  const cache = path.join(checkout, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  const dir = fs.mkdtempSync(path.join(cache, `parley-${name}-`));
  const file = path.join(dir, `${name}.mjs`);
  await build({
    entryPoints: [path.join(checkout, 'scripts', `${name}.ts`)],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
