import os from 'node:os';
import path from 'node:path';
import { defineConfig, devices } from '@playwright/test';

// Debian's Chromium; Playwright never downloads a browser here.
const chromium = {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
};

export const APP_PORT = Number(process.env.PARLEY_E2E_PORT || 3917);
export const ROUTE_HANDLER_PORT = APP_PORT + 1;
export const E2E_TOKENS = { alice: 'alice-e2e-token-0123456789', bob: 'bob-e2e-token-0123456789', carol: 'carol-e2e-token-0123456789', dave: 'dave-e2e-token-0123456789' };
const tokens = Object.entries(E2E_TOKENS).map(([user, token]) => `${user}:${token}`).join(',');
const dataRoot = path.join(os.tmpdir(), `parley-e2e-${process.pid}`);

export default defineConfig({
  testDir: 'tests/browser',
  testMatch: '**/*.spec.ts',
  outputDir: 'test-results',
  timeout: 60_000,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${APP_PORT}`,
    launchOptions: chromium,
    trace: 'off',
  },
  projects: [
    // Checks that need one viewport only run in one project (never skipped).
    { name: 'phone', testIgnore: ['**/route-handlers.spec.ts'], use: { ...devices['Pixel 7'], viewport: { width: 390, height: 844 }, launchOptions: chromium } },
    { name: 'desktop', testIgnore: ['**/volume.spec.ts'], use: { viewport: { width: 1280, height: 800 }, launchOptions: chromium } },
  ],
  webServer: [
    {
      // What `npm start` runs: the custom server (core fast path + Next).
      command: `npx tsx server.ts`,
      url: `http://127.0.0.1:${APP_PORT}/v1/openapi.json`,
      env: { PORT: String(APP_PORT), DATA_DIR: path.join(dataRoot, 'app'), PARLEY_TOKENS: tokens, NODE_ENV: 'production' },
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      // Plain `next start`: /v1 through the App Router route handlers (the serverless-friendly adapter).
      command: `npx next start -p ${ROUTE_HANDLER_PORT} -H 127.0.0.1`,
      url: `http://127.0.0.1:${ROUTE_HANDLER_PORT}/v1/openapi.json`,
      env: { DATA_DIR: path.join(dataRoot, 'next'), PARLEY_TOKENS: tokens },
      reuseExistingServer: false,
      timeout: 60_000,
    },
  ],
});
