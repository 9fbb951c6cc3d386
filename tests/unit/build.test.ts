// @vitest-environment node
// The start-up's build bookkeeping, on a scratch project (never the checkout's own build): when
// a build counts as current, and one build at a time per checkout.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILD_LOCK, withBuildLock } from '../../scripts/build-lock.mjs';
import { buildState, sourcesDigest, STAMP, writeStamp } from '../../scripts/build-state.mjs';
import { tempDataDir } from '../helpers/server';

let root: string;
const write = (file: string, content: string) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), content);
};

/** A project as a finished build leaves it: sources, outputs, and the stamp written last. */
function builtProject() {
  write('app/page.tsx', 'export default function Page() {}');
  write('lib/config.ts', 'export const port = 3000;');
  write('public/icons/icon.png', 'png');
  write('server.ts', 'import "./lib/config";');
  write('package.json', '{}');
  write('.next/BUILD_ID', 'build-1');
  write('.next/csp-hashes.json', '[]');
  write('.next/parley/server.mjs', '// compiled');
  write('.next/parley/token.mjs', '// compiled');
  write('.next/parley/audit.mjs', '// compiled');
  write('public/sw.js', '// generated worker');
  write('public/sw-background.js', '// its IndexedDB half');
  writeStamp(root, sourcesDigest(root));
}

beforeEach(() => {
  root = tempDataDir();
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('build state', () => {
  it('a finished build is current; generated files, copies and touched files do not make it stale', () => {
    builtProject();
    expect(buildState(root)).toMatchObject({ current: true });
    write('public/sw.js', '// a newer generated worker'); // written by the build itself, after next build
    write('public/sw-background.js', '// a newer half');
    const later = new Date(Date.now() + 3_600_000);
    fs.utimesSync(path.join(root, 'lib/config.ts'), later, later); // touched, same content
    expect(buildState(root)).toMatchObject({ current: true });
  });

  it('is stale when a source changes, appears or goes, and says why', () => {
    builtProject();
    write('lib/config.ts', 'export const port = 4000;');
    expect(buildState(root)).toEqual({ current: false, reason: 'the sources changed since the last build' });
    builtProject();
    write('workers/sw.ts', 'self;');
    expect(buildState(root)).toMatchObject({ current: false });
    builtProject();
    fs.rmSync(path.join(root, 'public/icons/icon.png'));
    expect(buildState(root)).toMatchObject({ current: false });
  });

  it('is not current without its stamp, with an output missing, or after another next build', () => {
    expect(buildState(root)).toEqual({ current: false, reason: 'no complete build yet' });
    builtProject();
    fs.rmSync(path.join(root, '.next/parley/server.mjs'));
    expect(buildState(root)).toEqual({ current: false, reason: `${path.join('.next', 'parley', 'server.mjs')} is missing` });
    builtProject();
    write('.next/BUILD_ID', 'build-2');
    expect(buildState(root)).toEqual({ current: false, reason: 'the Next.js build was replaced by another build' });
    builtProject();
    fs.rmSync(path.join(root, STAMP));
    expect(buildState(root)).toMatchObject({ current: false });
  });
});

describe('build lock', () => {
  it('a second builder waits for the first, then runs', async () => {
    const events: string[] = [];
    let finishFirst!: () => void;
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    const first = withBuildLock(root, async () => {
      events.push('first starts');
      firstStarted();
      await new Promise<void>((resolve) => (finishFirst = resolve));
      events.push('first ends');
    });
    await started;
    let waiting!: () => void;
    const waits = new Promise<void>((resolve) => (waiting = resolve));
    const second = withBuildLock(root, async () => void events.push('second runs'), { onWait: () => waiting(), pollMs: 20 });
    await waits; // told that another build is running
    expect(events).toEqual(['first starts']);
    finishFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(['first starts', 'first ends', 'second runs']);
    expect(fs.existsSync(path.join(root, BUILD_LOCK))).toBe(false);
  });

  it('takes over a lock left by a process that died', async () => {
    fs.mkdirSync(path.join(root, BUILD_LOCK));
    const long = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(root, BUILD_LOCK), long, long); // nobody has kept it fresh for a minute
    let waited = false;
    expect(await withBuildLock(root, async () => 'built', { onWait: () => (waited = true) })).toBe('built');
    expect(waited).toBe(false);
  });

  it('a start that waited for another build does not build again (build.mjs --if-stale)', async () => {
    builtProject();
    let release!: () => void;
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const other = withBuildLock(root, async () => {
      holding();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await held;
    const child = spawn(process.execPath, [path.join(process.cwd(), 'scripts', 'build.mjs'), '--if-stale'], { cwd: root });
    let output = '';
    const saidWaiting = new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => {
        output += d;
        if (output.includes('waiting for it to finish')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await saidWaiting;
    release();
    await other;
    expect(await exited).toBe(0);
    expect(output).toContain('nothing to build');
    expect(output).not.toContain('next build');
  });
});
