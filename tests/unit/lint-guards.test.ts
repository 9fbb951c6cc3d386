// eslint.config.mjs's guards on lib/sync's entry points: a deep import is refused from a bundle's
// files, static or dynamic (`import('…')`, which no-restricted-imports alone does not see), while the
// entry point itself and code inside lib/sync or the tests may import anything. The fixtures are
// linted as if they were those files (ESLint's lintText with a filePath; nothing is written).
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function refusals(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax').map((m) => `${m.ruleId}: ${m.message.replace(/^'.*' import is restricted from being used by a pattern\. /, '')}`);
}

const PAGE = "Import lib/sync/page (this bundle's entry point; lib/sync/README.md), not a module inside lib/sync.";
const WORKER = "Import lib/sync/worker (this bundle's entry point; lib/sync/README.md), not a module inside lib/sync.";

describe('deep imports of lib/sync', () => {
  it.each([
    ['static, relative', "export { openDb } from '../sync/mirror/db';", ['no-restricted-imports']],
    ['static, @/ alias', "import { openDb } from '@/lib/sync/mirror/db';\nexport const o = openDb;", ['no-restricted-imports']],
    ['dynamic, relative', "export const load = () => import('../sync/mirror/db');", ['no-restricted-syntax']],
    ['dynamic, @/ alias', "export const load = () => import('@/lib/sync/outbox/client');", ['no-restricted-syntax']],
    ['dynamic, a template without expressions', 'export const load = () => import(`../sync/engine/engine`);', ['no-restricted-syntax']],
  ])('from lib/view: %s is refused', async (_name, code, rules) => {
    expect(await refusals(code, 'lib/view/fixture.ts')).toEqual(rules.map((rule) => `${rule}: ${PAGE}`));
  });

  it.each([
    ['static', "export { connectSync } from '../sync/page';"],
    ['dynamic', "export const load = () => import('../sync/page');"],
    ['dynamic, @/ alias', "export const load = () => import('@/lib/sync/page');"],
    ['dynamic, computed (not a literal)', "const where = '../sync/mirror/db';\nexport const load = () => import(where);"],
  ])('from lib/view: the entry point, %s, is allowed', async (_name, code) => {
    expect(await refusals(code, 'lib/view/fixture.ts')).toEqual([]);
  });

  it("the worker's files: its own entry point only", async () => {
    expect(await refusals("export const load = () => import('../lib/sync/worker');", 'workers/sync.worker.ts')).toEqual([]);
    expect(await refusals("export const load = () => import('../lib/sync/page');", 'workers/sync.worker.ts')).toEqual([`no-restricted-syntax: ${WORKER}`]);
  });

  it('inside lib/sync and in the tests, anything', async () => {
    expect(await refusals("export const load = () => import('./mirror/db');", 'lib/sync/fixture.ts')).toEqual([]);
    expect(await refusals("export const load = () => import('../../lib/sync/mirror/db');", 'tests/unit/fixture.ts')).toEqual([]);
  });

  it('the object-URL rule still applies to those files (one no-restricted-syntax for both)', async () => {
    const found = await refusals('export const u = (b: Blob) => URL.createObjectURL(b);', 'lib/view/fixture.ts');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^no-restricted-syntax: Make object URLs with safeObjectUrl/);
  });
});
