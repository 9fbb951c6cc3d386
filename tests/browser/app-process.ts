// The built app as a process of its own, for tests that need their own instance: `npm start`
// itself (start.spec.ts), or a copy of the built app that a test may change (update.spec.ts).
// Each gets a port of its own (PORT=0, read back from its "serving" line) and a temporary
// DATA_DIR; the checkout's files are only read.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { E2E_TOKENS } from '../../playwright.config';

export const CHECKOUT = process.cwd();

export interface AppProcess {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Everything it printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** The environment of a test instance: tokens of the browser tests, data in `dataDir`, any free port. */
export function appEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'UPSTREAM_BASE_URL', 'UPSTREAM_TOKEN', 'ASSET_URL']) delete env[name];
  return {
    ...env,
    PORT: '0',
    HOSTNAME: '127.0.0.1',
    DATA_DIR: dataDir,
    PARLEY_TOKENS: Object.entries(E2E_TOKENS).map(([user, token]) => `${user}:${token}`).join(','),
    NODE_ENV: 'production',
    // No device lock unless a test asks for it (lock.spec.ts passes the default policy's values).
    LOCK_AFTER_MINUTES: '0',
    ...extra,
  };
}

function launch(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, listeners, exited };
}

/** What `npm start` prints once it serves, with its port. */
const SERVING = /\[parley\] serving http:\/\/[^:\s]+:(\d+)/;

/**
 * Starts `node <args>` in `cwd` and resolves once it says it is serving: `npm start`'s line by
 * default, or `ready` (another server: its first group is the port).
 */
export async function startApp(args: string[], cwd: string, env: NodeJS.ProcessEnv, ready: RegExp = SERVING): Promise<AppProcess> {
  const run = launch(args, cwd, env);
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = ready.exec(run.output());
      if (match) resolve(`http://127.0.0.1:${match[1]}`);
    };
    run.listeners.add(check);
    void run.exited.then((code) => reject(new Error(`exited (${code}) before serving:\n${run.output()}`)));
  });
  return {
    url,
    output: run.output,
    async stop() {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
      await run.exited;
    },
  };
}

/** Runs `node <args>` in `cwd` to its end. */
export async function runToExit(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const run = launch(args, cwd, env);
  const code = await run.exited;
  return { code, output: run.output() };
}

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A copy of the built app that a test may change: .next (without its cache), public/, the
 * config files, and node_modules linked. Start it with `startApp(['.next/parley/server.mjs'], dir, …)`
 * — the compiled server that `npm start` runs once the build is current.
 */
export function copyBuiltApp(dir: string): void {
  const nextDir = path.join(CHECKOUT, '.next');
  const cache = path.join(nextDir, 'cache');
  fs.cpSync(nextDir, path.join(dir, '.next'), { recursive: true, filter: (source) => source !== cache });
  fs.cpSync(path.join(CHECKOUT, 'public'), path.join(dir, 'public'), { recursive: true });
  for (const file of ['next.config.mjs', 'package.json']) fs.copyFileSync(path.join(CHECKOUT, file), path.join(dir, file));
  fs.symlinkSync(path.join(CHECKOUT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
}
