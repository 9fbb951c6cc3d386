// Child processes and temporary directories of a bench run: started here, always stopped/removed,
// also when a scenario throws or the run is interrupted (exit hooks).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BENCH = path.join(ROOT, 'bench');

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-bench-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

export interface Child {
  proc: ChildProcess;
  pid: number;
  /** Everything the child wrote (stdout + stderr), for error messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `command args` and waits until a line of its output matches `ready` (or the timeout).
 * The child gets its own process group so a child that forks (tsx, next) is stopped whole.
 */
export async function startChild(
  command: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; ready: RegExp; timeoutMs?: number; name: string },
): Promise<Child & { match: RegExpMatchArray }> {
  const proc = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.add(proc);
  let out = '';
  const child: Child = {
    proc,
    pid: proc.pid!,
    output: () => out,
    stop: () => stopProcess(proc),
  };
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${options.name} did not start within ${options.timeoutMs ?? 60_000} ms:\n${out.slice(-3000)}`));
    }, options.timeoutMs ?? 60_000);
    const onData = (data: Buffer) => {
      out += data.toString();
      if (out.length > 200_000) out = out.slice(-100_000);
      const m = out.match(options.ready);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (${code ?? signal}) before it was ready:\n${out.slice(-3000)}`));
    });
  }).catch(async (error) => {
    await stopProcess(proc);
    throw error;
  });
  return { ...child, match };
}

function stopProcess(proc: ChildProcess): Promise<void> {
  children.delete(proc);
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-proc.pid!, signal); // our own child's process group
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => kill('SIGKILL'), 5_000);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    kill('SIGTERM');
  });
}

/** Runs a TypeScript file of the project in a separate Node process (tsx as a loader: one pid). */
export function startTsChild(file: string, args: string[], options: Omit<Parameters<typeof startChild>[2], 'ready'> & { ready?: RegExp }) {
  return startChild(process.execPath, ['--import', 'tsx', file, ...args], {
    ready: /BENCH_READY (\{.*\})/,
    ...options,
  });
}

export function readyInfo<T>(child: { match: RegExpMatchArray }): T {
  return JSON.parse(child.match[1]!) as T;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stopProcess(c)));
  for (const dir of [...tempDirs]) removeTempDir(dir);
}

function stopAllSync(): void {
  for (const proc of children) {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  children.clear();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

let hooked = false;
export function installExitHooks(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', stopAllSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      console.error(`\n[bench] ${signal}: stopping what the bench started`);
      stopAllSync();
      process.exit(130);
    });
  }
}
