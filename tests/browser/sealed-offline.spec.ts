// Documents kept offline on a device with a lock (issue 28): the service worker holds no keys and
// keeps nothing, so "Keep offline" downloads run in the sync worker and the bytes live sealed in
// the user's database (lib/offline/sealed-downloads.ts, file-bytes.ts); a file opened online is kept
// there too (lib/view/viewer/bytes.ts). On an app of its own with the default lock (a PIN set at
// sign-in): keep a conversation offline, open a file of another one online, then with /files and
// /v1 refused (context.route: Chromium's offline emulation does not hold for every worker) and the
// browser offline, each opens from the device — and Cache Storage never held any of them.
import path from 'node:path';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { E2E_TOKENS } from '../../playwright.config';
import { appEnv, CHECKOUT, startApp, tempDir, type AppProcess } from './app-process';
import { unique } from './helpers';

const SERVER = '.next/parley/server.mjs';
const PIN = '482915';
const GATE = /\/(files|v1)\//;
let app: AppProcess;
let scratch: ReturnType<typeof tempDir>;

test.beforeAll(async () => {
  scratch = tempDir('parley-sealed-offline-');
  app = await startApp([SERVER], CHECKOUT, appEnv(path.join(scratch.dir, 'data'), { LOCK_AFTER_MINUTES: '5' }));
});
test.afterAll(async () => {
  await app?.stop();
  scratch?.remove();
});

const auth = { authorization: `Bearer ${E2E_TOKENS.alice}` };

async function conversationWithFiles(request: APIRequestContext, contact: string, names: string[]) {
  const created = await request.post(`${app.url}/v1/conversations`, { headers: auth, data: { contact_id: contact } });
  expect(created.status()).toBe(201);
  const id = (await created.json()).id as string;
  const files: Array<{ filename: string; file_url: string; body: string }> = [];
  for (const name of names) {
    // Over one 256 KiB chunk, so a file is several sealed rows.
    const body = `${name}:`.padEnd(300 * 1024, name.slice(0, 1));
    const r = await request.post(`${app.url}/v1/files`, { headers: auth, multipart: { conversation_id: id, file: { name, mimeType: 'text/plain', buffer: Buffer.from(body) } } });
    expect(r.status()).toBe(201);
    files.push({ ...(await r.json()), body });
  }
  return files;
}

async function signInWithPin(page: Page) {
  await page.goto(app.url);
  await page.getByLabel('Access token').fill(E2E_TOKENS.alice);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel(/PIN \(at least 6 digits\)/).fill(PIN);
  await page.getByLabel('The same PIN again').fill(PIN);
  await page.getByRole('button', { name: 'Set PIN' }).click();
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
}

async function openConversation(page: Page, contact: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Conversations' }).click();
  await page.getByRole('link', { name: new RegExp(contact) }).first().click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
}

async function openFile(page: Page, file: { filename: string; body: string }) {
  await page.getByRole('link', { name: file.filename, exact: true }).click();
  await expect(page.getByLabel(`Contents of ${file.filename}`)).toHaveText(file.body);
  await page.getByRole('link', { name: 'Back' }).click();
}

const onDeviceMark = (page: Page, name: string) => page.getByRole('listitem').filter({ has: page.getByRole('link', { name, exact: true }) }).getByText('On this device');

const cacheStorageFiles = (page: Page) =>
  page.evaluate(async () => ((await caches.has('parley-files')) ? (await (await caches.open('parley-files')).keys()).map((r) => r.url) : []));

test('with the lock, kept and opened files open offline from the sealed database, never from Cache Storage', async ({ browser, request }) => {
  test.setTimeout(120_000);
  const keptContact = unique('sealed-kept');
  const openedContact = unique('sealed-opened');
  const kept = await conversationWithFiles(request, keptContact, ['referral.txt', 'labs.txt', 'discharge.txt']);
  const [opened] = await conversationWithFiles(request, openedContact, ['old-letter.txt']);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await signInWithPin(page);

  // "Keep offline": downloaded without being opened, by the sync worker.
  await openConversation(page, keptContact);
  for (const f of kept) await expect(page.getByRole('link', { name: f.filename, exact: true })).toBeVisible();
  await page.getByRole('button', { name: 'Keep offline' }).click();
  await expect(page.getByTestId('keep-offline-state')).toHaveText('3 of 3 files on this device', { timeout: 30_000 });
  // Each row says its file is on the device (issue 32): sealed chunks count as much as Cache Storage.
  for (const f of kept) await expect(onDeviceMark(page, f.filename)).toBeVisible();

  // A file of a conversation not kept, opened online: kept on the device once opened.
  await openConversation(page, openedContact);
  await expect(onDeviceMark(page, opened!.filename)).toHaveCount(0);
  await openFile(page, opened!);
  await expect(onDeviceMark(page, opened!.filename)).toBeVisible();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Device' }).click();
  await expect(page.getByTestId('offline-other')).toHaveText(/^1 file, /);
  await expect(page.getByTestId('offline-kept')).toHaveText(/^1 conversation: 3 files, /);
  expect(await cacheStorageFiles(page)).toEqual([]);

  // ---- no network from here ----
  const blocked: string[] = [];
  await context.route(GATE, (route) => {
    blocked.push(route.request().url());
    return route.abort('internetdisconnected');
  });
  await context.setOffline(true);
  await openConversation(page, keptContact);
  for (const f of kept) await openFile(page, f);
  await openConversation(page, openedContact);
  await openFile(page, opened!);
  expect(blocked.filter((u) => /\/files\//.test(u))).toEqual([]);
  expect(await cacheStorageFiles(page)).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
});
