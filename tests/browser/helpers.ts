// Shared steps for the browser tests: the server is checked and seeded through /v1 directly.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect, test, type APIRequestContext, type APIResponse, type Page, type TestInfo } from '@playwright/test';
import { APP_PORT, E2E_TOKENS } from '../../playwright.config';

/** The app of the 'phone' and 'desktop' projects (the lock off). Specs the 'locked' project runs use `appOrigin()`. */
export const base = `http://127.0.0.1:${APP_PORT}`;

/** The app under test of the running test's project (its baseURL). */
export function appOrigin(): string {
  return test.info().project.use.baseURL!;
}
export const appPort = () => Number(new URL(appOrigin()).port);

/** The 'locked' project's server has the device lock on in its default policy (issue 28). */
export const lockOn = () => test.info().project.name === 'locked';
/** The PIN the tests set when the app asks to protect the device. */
export const TEST_PIN = '482915';

/** After the first sign-in with the lock on: the app asks for a lock before it shows anything. */
export async function setPinIfAsked(page: Page) {
  if (!lockOn()) return;
  // Asked on the server's word: a device that has not stored the policy yet (a first visit, or a
  // token kept in clear by an earlier version) waits for /v1's answer, which on a loaded CI
  // machine, beside the service worker's first install, took over 5 s once (stop 37).
  await expect(page.getByRole('heading', { name: 'Protect this device' })).toBeVisible({ timeout: 15_000 });
  await page.getByLabel(/PIN \(at least 6 digits\)/).fill(TEST_PIN);
  await page.getByLabel('The same PIN again').fill(TEST_PIN);
  await page.getByRole('button', { name: 'Set PIN' }).click();
}

/**
 * Leaves what an earlier version left in this origin's localStorage, with no page of the app open:
 * an app page acts on what appears there (its policy answer moves a token kept in clear into its own
 * memory, and a reload then finds none — the race of account.spec's "earlier version" test, stop 38).
 * /healthz is of the same origin and runs no script.
 */
export async function leaveInStorage(page: Page, origin: string, entries: Record<string, string>, options: { clear?: boolean } = {}) {
  await page.goto(`${origin}/healthz`);
  await page.evaluate(
    ({ entries, clear }) => {
      if (clear) localStorage.clear();
      for (const [name, value] of Object.entries(entries)) localStorage.setItem(name, value);
    },
    { entries, clear: options.clear ?? false },
  );
}

/** After a reload or a new page of a signed-in context with the lock on: the lock screen, opened with the PIN. */
export async function unlockIfLocked(page: Page) {
  if (!lockOn()) return;
  await expect(page.getByTestId('lock-screen')).toBeVisible();
  await page.getByLabel('PIN').fill(TEST_PIN);
  await page.getByRole('button', { name: 'Unlock' }).click();
  await expect(page.getByTestId('lock-screen')).toHaveCount(0);
}

/** Each viewport project works as its own user, so the projects never see each other's data. */
export function userFor(info: TestInfo): { token: string; auth: Record<string, string> } {
  const token = info.project.name === 'phone' ? E2E_TOKENS.alice : E2E_TOKENS.bob;
  return { token, auth: { authorization: `Bearer ${token}` } };
}

export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/**
 * A request sent again after Retry-After while the server answers 429: the servers run with the
 * default rate limits, and the tests' own seeding shares each user's token with the app's syncs.
 */
export async function honouringRetryAfter(send: () => Promise<APIResponse>): Promise<APIResponse> {
  for (;;) {
    const answer = await send();
    if (answer.status() !== 429) return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers()['retry-after'] ?? '1') * 1000));
  }
}

/** The API as the test's user, at the app under test (or at `origin`: another server of the test's own). */
export async function api(request: APIRequestContext, info: TestInfo, origin = appOrigin()) {
  const { auth } = userFor(info);
  return {
    async createConversation(contact_id: string) {
      const r = await honouringRetryAfter(() => request.post(`${origin}/v1/conversations`, { headers: auth, data: { contact_id } }));
      expect(r.status()).toBe(201);
      return r.json();
    },
    async upload(conversation_id: string, name: string, body: string) {
      const r = await honouringRetryAfter(() =>
        request.post(`${origin}/v1/files`, {
          headers: auth,
          multipart: { conversation_id, file: { name, mimeType: 'text/plain', buffer: Buffer.from(body) } },
        }),
      );
      expect(r.status()).toBe(201);
      return r.json();
    },
    async get(path: string) {
      const r = await honouringRetryAfter(() => request.get(`${origin}${path}`, { headers: auth }));
      return { status: r.status(), body: r.status() === 204 ? null : await r.json() };
    },
    async del(path: string) {
      return (await honouringRetryAfter(() => request.delete(`${origin}${path}`, { headers: auth }))).status();
    },
    async allConversations() {
      return (await this.get('/v1/conversations?limit=100')).body.data as any[];
    },
  };
}

/** Signs in as the test's user, at the app under test (or at `origin`: a link to it of the test's own). */
export async function signIn(page: Page, info: TestInfo, origin?: string) {
  await page.goto(origin ? `${origin}/` : '/');
  await page.getByLabel('Access token').fill(userFor(info).token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await setPinIfAsked(page);
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  await expectAllSynced(page);
}

export async function expectAllSynced(page: Page, timeout = 30_000) {
  await expect(page.getByTestId('sync-status')).toHaveText('All synced', { timeout });
}

/** Until the service worker controls the page, a reload offline would find nothing. */
export async function waitForServiceWorker(page: Page) {
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  if (!(await page.evaluate(() => navigator.serviceWorker.controller !== null))) {
    await page.reload();
    await unlockIfLocked(page);
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
    });
  }
  expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
}

export async function openConversation(page: Page, title: string) {
  await page.getByRole('link', { name: new RegExp(title) }).first().click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(title) })).toBeVisible();
}

/** A conversation's row in the list. */
export function conversationRow(page: Page, title: string) {
  return page.getByRole('table', { name: 'Conversations' }).getByRole('row').filter({ has: page.getByRole('link', { name: new RegExp(title) }) });
}

/**
 * One of a row's actions, from its menu ("More actions": on a phone the only button on a row; delete
 * is only ever there): `choice` is the menu's button, e.g. 'Pin', 'Unmute', 'Delete…'.
 */
export async function rowMenuAction(page: Page, title: string, choice: string) {
  await page.getByRole('button', { name: `More actions for ${title}` }).click();
  await page.getByRole('dialog', { name: title }).getByRole('button', { name: choice, exact: true }).click();
}

/**
 * One of the open conversation's actions from its page's "More actions" sheet (the permanent
 * delete is only ever there): `choice` is the sheet's button, e.g. 'Delete…'.
 */
export async function conversationMenuAction(page: Page, choice: string) {
  await page.getByRole('button', { name: 'More actions', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: choice, exact: true }).click();
}

export async function screenshot(page: Page, info: TestInfo, name: string) {
  // Kept as artifacts: test-results/screenshots/<viewport>-<screen>.png
  await page.screenshot({ path: path.join('test-results', 'screenshots', `${info.project.name}-${name}.png`) });
}

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * WCAG 2.1 AA violations axe finds on the page, one line each. Axe is injected as a script tag,
 * so the page's context needs `bypassCSP: true` (the app's CSP refuses inline scripts, as it should).
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa'] });
    return result.violations.map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3).join(', ')})`);
  });
}

/**
 * The way back to the conversations list from an open conversation: its "Back to conversations"
 * link one screen at a time (a phone); on a wide screen, where the list stays beside the
 * conversation and that link is not there (two-pane.spec), the Main navigation's Conversations.
 */
export function backToConversationsLink(page: Page) {
  // The app's own width for two panes: app/_components/useNarrow.ts WIDE, (min-width: 1024px).
  const wide = (page.viewportSize()?.width ?? 0) >= 1024;
  return wide ? page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Conversations' }) : page.getByRole('link', { name: 'Back to conversations' });
}

/**
 * After a revoke with wipe: ask the server ("Sync now") until the app has erased itself and says so.
 * The server keeps an accepted token in its cache for up to 10 s, so a few asks may pass; and the
 * app may hear it on its own first (the live stream's next request), in which case "Sync now" is
 * already gone with the rest — so the notice is looked for before each ask.
 */
export async function askUntilWiped(page: Page) {
  const notice = page.getByTestId('signin-notice');
  await expect(async () => {
    if (!(await notice.isVisible())) await page.getByRole('button', { name: 'Sync now' }).click({ timeout: 1_000 });
    await expect(notice).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  await expect(notice).toHaveText(/signed out and cleared by your organisation/);
}

/**
 * The browser says Data Saver is on (Chromium's navigator.connection, replaced before the app
 * loads): nothing is fetched only to draw a thumbnail. `window.testConnection` turns it off.
 */
export async function dataSaverOn(page: Page) {
  await page.addInitScript(() => {
    const connection = Object.assign(new EventTarget(), { saveData: true, effectiveType: '4g', type: 'wifi' });
    Object.defineProperty(Navigator.prototype, 'connection', { configurable: true, get: () => connection });
    Object.assign(window, { testConnection: connection });
  });
}
