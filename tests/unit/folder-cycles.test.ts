// scripts/folder-cycles.mjs (part of `npm run lint`): import cycles between folders, and imports
// against a declared layer order, on the small trees of tests/fixtures/folder-cycles/ — and none
// in this repository.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { report } from '../../scripts/folder-cycles.mjs';

const fixtures = path.resolve(__dirname, '../fixtures/folder-cycles');
const lines = (tree: string, layers: Record<string, string[]> = {}): string[] => report(path.join(fixtures, tree), ['lib'], layers);

describe('folder cycles', () => {
  it('finds a cycle between two folders, one way by a type-only import', () => {
    expect(lines('cycle')).toEqual([
      'Folder cycle: lib/a ↔ lib/b',
      '  lib/a/one.ts → lib/b/two.ts',
      '  lib/b/two.ts → lib/a/three.ts',
    ]);
  });

  it('follows a dynamic import()', () => {
    expect(lines('dynamic')).toEqual(['Folder cycle: lib/c ↔ lib/d', '  lib/c/x.ts → lib/d/y.ts', '  lib/d/y.ts → lib/c/x.ts']);
  });

  it('finds a file of a folder and its subfolder importing each other', () => {
    expect(lines('parent')).toEqual(['Folder cycle: lib/g ↔ lib/top.ts', '  lib/g/user.ts → lib/top.ts', '  lib/top.ts → lib/g/inner.ts']);
  });

  it('allows files of one folder in a circle, and folders importing one way', () => {
    expect(lines('allowed')).toEqual([]);
  });

  it('reports an import against the declared order, before it closes a cycle', () => {
    expect(lines('layers')).toEqual([]);
    expect(lines('layers', { lib: ['low', 'high'] })).toEqual(['Layer order (lib: low ← high): lib/low may not import lib/high', '  lib/low/low.ts → lib/high/high.ts']);
    expect(lines('layers', { lib: ['high', 'low'] })).toEqual([]);
  });

  it('fails on the command line with the imports that make it, and passes on this repository', () => {
    const script = path.resolve(__dirname, '../../scripts/folder-cycles.mjs');
    const failing = spawnSync(process.execPath, [script, '--root', path.join(fixtures, 'cycle'), 'lib'], { encoding: 'utf8' });
    expect(failing.status).toBe(1);
    expect(failing.stderr).toContain('Folder cycle: lib/a ↔ lib/b');
    const repo = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect(repo.stderr).toBe('');
    expect(repo.status).toBe(0);
  });
});
