// The operator's commands (`npm run token`, `npm run audit`) as the tests run them: compiled once
// per test file exactly as the production build compiles them (scripts/compile-node.mjs), then run
// with plain node in a process of their own — what `npm run token` runs after a build. Running the
// TypeScript source through tsx instead cost ~1.6 s a command (the loader, then a compile of the
// command and everything it imports): minutes over the API suite's five projects, and a test
// file that starts the command tens of times ran into its time limit on a loaded machine.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compileNodeEntry } from '../../scripts/compile-node.mjs';

export type Command = 'token' | 'audit';
export interface CommandResult {
  code: number | null;
  out: string;
  err: string;
}

const checkout = process.cwd();
const compiled = new Map<Command, Promise<string>>();

/**
 * The command's compiled module, in a fresh folder under node_modules/.cache (where the packages
 * it leaves external resolve as they do for the build's output), removed when the process ends.
 */
function compiledCommand(name: Command): Promise<string> {
  let bundle = compiled.get(name);
  if (!bundle) {
    const cache = path.join(checkout, 'node_modules', '.cache');
    fs.mkdirSync(cache, { recursive: true });
    const dir = fs.mkdtempSync(path.join(cache, `parley-${name}-`));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const outfile = path.join(dir, `${name}.mjs`);
    bundle = compileNodeEntry(path.join(checkout, 'scripts', `${name}.ts`), outfile, { sourcemap: false }).then(() => outfile);
    compiled.set(name, bundle);
  }
  return bundle;
}

/**
 * Runs `npm run <name> -- ...args` in `cwd` (the checkout by default) with the given settings:
 * DATA_DIR, DATABASE_URL and UPSTREAM_BASE_URL come only from `env`, never from the test process.
 */
export async function runCommand(name: Command, args: string[], env: Record<string, string | undefined>, cwd = checkout): Promise<CommandResult> {
  const bundle = await compiledCommand(name);
  const base = { ...process.env };
  for (const setting of ['DATA_DIR', 'DATABASE_URL', 'UPSTREAM_BASE_URL']) delete base[setting];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], { cwd, env: { ...base, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}
