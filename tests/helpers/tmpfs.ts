// Real "disk full": a tiny tmpfs mounted where a test wants it (the test machines run as root), and
// a filler file that takes every byte left on it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function tryMount(dir: string, bytes: number): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message.split('\n')[0]! : String(error);
  }
}

/** Whether this machine lets the tests mount a tmpfs. Never "no" under CI=true: there it fails. */
export function tmpfsProblem(): string | null {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-tmpfs-probe-'));
  const problem = tryMount(probe, 64 * 1024);
  if (!problem) execFileSync('umount', [probe]);
  fs.rmdirSync(probe);
  if (problem && process.env.CI === 'true') throw new Error(`cannot mount a tmpfs under CI: ${problem}`);
  if (problem) console.warn(`\n[parley] disk-full tests SKIPPED: cannot mount a tmpfs here (${problem}).\n`);
  return problem;
}

export interface Tmpfs {
  dir: string;
  unmount(): void;
}

/** A fresh directory with a tmpfs of `bytes` mounted on it. */
export function mountTmpfs(bytes: number): Tmpfs {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-full-'));
  const problem = tryMount(dir, bytes);
  if (problem) throw new Error(`mount tmpfs: ${problem}`);
  return {
    dir,
    unmount() {
      execFileSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes a file until the filesystem has no byte left; returns its path (unlink it to free the space). */
export function fillDisk(dir: string): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  try {
    for (const size of [1024 * 1024, 64 * 1024, 4096, 1]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          fs.writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

/** Gives `bytes` back to the filesystem by shortening the filler. */
export function freeBytes(filler: string, bytes: number): void {
  fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - bytes));
}
