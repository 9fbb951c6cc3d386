// `npm start` on an unchanged, built checkout (the build npm run test:browser made) serves at
// once without building, and a second start on the same port is refused, saying why. Desktop
// project only (no page involved).
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { SOURCES } from '../../scripts/build-state.mjs';
import { appEnv, CHECKOUT, runToExit, startApp, tempDir } from './app-process';

const buildFiles = ['.next/BUILD_ID', '.next/parley/build-stamp.json', '.next/parley/server.mjs', 'public/sw.js'];
const snapshot = () =>
  buildFiles.map((file) => {
    const full = path.join(CHECKOUT, file);
    return { file, mtimeMs: fs.statSync(full).mtimeMs, content: fs.readFileSync(full, 'utf8') };
  });

test('a second start of an unchanged checkout serves without building; a taken port is refused clearly', async () => {
  const scratch = tempDir('parley-start-');
  const before = snapshot();
  // What `npm start` runs.
  const app = await startApp(['scripts/start.mjs'], CHECKOUT, appEnv(path.join(scratch.dir, 'data')));
  try {
    expect(app.output()).toContain('serving it without building');
    expect(app.output()).not.toContain('building the app');
    expect(snapshot()).toEqual(before); // nothing was rebuilt or rewritten

    // The generated service worker, served from the build with no-cache (a new one must be seen at once).
    const sw = await fetch(`${app.url}/sw.js`);
    expect(sw.status).toBe(200);
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    expect(await sw.text()).toContain('precache');

    // A second start from the same checkout on the same port: refused, saying so, and it never
    // got as far as its data directory.
    const secondData = path.join(scratch.dir, 'second');
    const second = await runToExit(['scripts/start.mjs'], CHECKOUT, appEnv(secondData, { PORT: new URL(app.url).port }));
    expect(second.code).toBe(1);
    expect(second.output).toMatch(/port \d+ on 127\.0\.0\.1 is already in use/);
    expect(fs.existsSync(secondData)).toBe(false);
    expect((await fetch(`${app.url}/v1/openapi.json`)).status).toBe(200); // the first one is unharmed
  } finally {
    await app.stop();
    scratch.remove();
  }
  expect(snapshot()).toEqual(before);
});

// What an operator's machine has: the built checkout and its runtime packages, without any
// TypeScript tooling. `npm start` and `npm run token` must both work there with plain node.
const TYPESCRIPT_TOOLING = new Set(['.bin', 'tsx', 'typescript', 'esbuild', '@esbuild', 'vitest', '@vitest', '@playwright', 'playwright', 'playwright-core']);

test('npm start and npm run token run with plain node, no TypeScript tooling installed', async () => {
  const scratch = tempDir('parley-no-ts-');
  try {
    const dir = path.join(scratch.dir, 'app');
    fs.mkdirSync(dir);
    // The sources (so the build counts as current), the scripts and the build, .next/cache left out.
    const cache = path.join(CHECKOUT, '.next', 'cache');
    for (const entry of [...SOURCES, 'scripts', '.next']) {
      const from = path.join(CHECKOUT, entry);
      if (fs.existsSync(from)) fs.cpSync(from, path.join(dir, entry), { recursive: true, filter: (source) => source !== cache });
    }
    // node_modules without the tooling: a bundle importing tsx, typescript or esbuild fails to start.
    fs.mkdirSync(path.join(dir, 'node_modules'));
    for (const name of fs.readdirSync(path.join(CHECKOUT, 'node_modules'))) {
      if (!TYPESCRIPT_TOOLING.has(name)) fs.symlinkSync(path.join(CHECKOUT, 'node_modules', name), path.join(dir, 'node_modules', name), 'dir');
    }
    expect(fs.existsSync(path.join(dir, 'node_modules', 'tsx'))).toBe(false);
    const env = appEnv(path.join(scratch.dir, 'data'), { PARLEY_TOKENS: '' });

    const created = await runToExit(['scripts/token.mjs', 'create', '--user', 'olga', '--label', 'ward phone'], dir, env);
    expect(created.code, created.output).toBe(0);
    const token = /^(\S{20,})$/m.exec(created.output)?.[1];
    expect(token, created.output).toBeTruthy();
    const listed = await runToExit(['scripts/token.mjs', 'list'], dir, env);
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toMatch(/olga\s+\S+\s+ward phone/);

    const app = await startApp(['scripts/start.mjs'], dir, env);
    try {
      expect(app.output()).toContain('serving it without building');
      const me = await fetch(`${app.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ id: 'olga' });
    } finally {
      await app.stop();
    }
  } finally {
    scratch.remove();
  }
});
