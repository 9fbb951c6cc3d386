// `server.ts --api-only` as a process of its own (through tsx: no build needed): the same start-up,
// logging, signal handling and shutdown as `npm start`, without the Next.js app. For tests that
// need a real process and real signals.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_TOKENS } from './server';

const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServerProcess {
  /** http://127.0.0.1:<port>, once it says it is serving. */
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves once its output matches. */
  waitFor(pattern: RegExp): Promise<void>;
  /** Its exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  /** SIGKILL if it still runs, and wait for it (clean-up). */
  kill(): Promise<void>;
}

/** The environment of a test process: the test tokens, any free port on loopback, nothing inherited that picks a back end. */
export function processEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = { ...process.env };
  for (const name of Object.keys(inherited)) {
    if (/^(DATABASE_URL|UPSTREAM_|S3_|ASSET_URL|ALLOWED_HOSTS|PARLEY_)/.test(name)) delete inherited[name];
  }
  return {
    ...inherited,
    PORT: '0',
    HOSTNAME: '127.0.0.1',
    PARLEY_TOKENS: `alice:${TEST_TOKENS.alice},bob:${TEST_TOKENS.bob}`,
    ...env,
  };
}

/** Starts the process; `ready: false` returns at once (for a start that is meant to fail). */
export function spawnServer(env: Record<string, string>): Omit<ServerProcess, 'url'> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server.ts', '--api-only'], {
    cwd: CHECKOUT,
    env: processEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitFor = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(output)) return;
        listeners.delete(check);
        resolve();
      };
      listeners.add(check);
      check();
      void exited.then((code) => {
        if (listeners.delete(check)) reject(new Error(`exited (${code}) before printing ${pattern}:\n${output}`));
      });
    });
  return {
    child,
    output: () => output,
    waitFor,
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Starts the process and waits until it serves. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const started = spawnServer(env);
  try {
    await started.waitFor(/\[parley\] serving http:\/\/[^:\s]+:\d+/);
  } catch (error) {
    await started.kill();
    throw error;
  }
  const port = /\[parley\] serving http:\/\/[^:\s]+:(\d+)/.exec(started.output())![1];
  return { ...started, url: `http://127.0.0.1:${port}` };
}
