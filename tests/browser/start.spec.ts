// `npm start` on an unchanged, built checkout (the build npm run test:browser made) serves at
// once without building, and a second start on the same port is refused, saying why. Desktop
// project only (no page involved).
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
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
