// Pairing a phone and "Your devices" (issue 29, items 2 and 3), end to end with two devices in two
// browser contexts: A (signed in with a stored token) shows a code under Device → Add a phone; B
// types it on the sign-in screen; A is asked "Allow Chrome on Android to sign in as <user>?" and
// allows; B ends signed in as the same user with its own device token and syncs. Then A lists both
// devices and signs B out with erase: B is told device_wiped at its next request and erases
// everything (the server's 10 s token cache: within ~10 s, polled, no sleeps).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { devices, expect, test } from '@playwright/test';
import { E2E_DATA_ROOT } from '../../playwright.config';
import { askUntilWiped, base, expectAllSynced, unique } from './helpers';

const DATA_DIR = path.join(E2E_DATA_ROOT, 'app');

function tokenCli(args: string[]): { code: number | null; out: string; err: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR };
  delete env.DATABASE_URL;
  delete env.UPSTREAM_BASE_URL;
  const r = spawnSync(process.execPath, ['scripts/token.mjs', ...args], { env, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('pair a phone with a code, then sign it out and erase it from "Your devices"', async ({ browser, request }, info) => {
  const user = unique('paired');
  const created = tokenCli(['create', '--user', user, '--label', 'ward laptop']);
  expect(created.code, created.err).toBe(0);
  const token = created.out.trim();
  const contact = unique('patient');
  expect((await request.post(`${base}/v1/conversations`, { headers: { authorization: `Bearer ${token}` }, data: { contact_id: contact } })).status()).toBe(201);

  const contextA = await browser.newContext({ ...info.project.use });
  // B is a phone in both projects (its label comes from its User-Agent: "Chrome on Android").
  const contextB = await browser.newContext({ ...info.project.use, userAgent: devices['Pixel 7'].userAgent });
  try {
    // Device A: signed in, Device screen → Add a phone: a QR code and a code to type.
    const a = await contextA.newPage();
    await a.goto('/');
    await a.getByLabel('Access token').fill(token);
    await a.getByRole('button', { name: 'Sign in' }).click();
    await expect(a.getByText(contact)).toBeVisible();
    await a.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Device' }).click();
    await a.getByRole('button', { name: 'Add a phone' }).click();
    const shown = a.getByTestId('pair-code');
    await expect(shown).toHaveText(/^[2-9A-Z]{4}-[2-9A-Z]{4}$/);
    const code = (await shown.textContent())!;
    await expect(a.locator('.pair-qr svg')).toBeVisible();

    // Device B: the sign-in screen, "Have a code from another device?", types it.
    const b = await contextB.newPage();
    await b.goto('/');
    await b.getByRole('button', { name: 'Have a code from another device?' }).click();
    await b.getByLabel('Code from your other device').fill(code.toLowerCase());
    await b.getByRole('button', { name: 'Continue' }).click();
    await expect(b.getByTestId('pair-waiting')).toBeVisible();

    // Device A is asked, and allows.
    await expect(a.getByTestId('pair-question')).toContainText(`Allow Chrome on Android to sign in as ${user}?`);
    await a.getByRole('button', { name: 'Allow' }).click();

    // Device B is signed in as the same user and syncs: the conversation is there.
    await expect(b.getByText(contact)).toBeVisible({ timeout: 20_000 });
    await expectAllSynced(b);
    const bToken = await b.evaluate(() => localStorage.getItem('parley:token'));
    expect(bToken).toBeTruthy();
    expect(bToken).not.toBe(token);
    await expect(a.getByTestId('pair-done')).toContainText(`Chrome on Android is signed in as ${user}`);
    await a.getByRole('button', { name: 'Close' }).click();

    // Your devices: both listed, A marked as this one.
    await a.getByRole('button', { name: 'Your devices' }).click();
    const rows = a.getByTestId('device-row');
    await expect(rows).toHaveCount(2);
    await expect(rows.filter({ hasText: 'This device' })).toContainText('ward laptop');
    const phone = rows.filter({ hasText: 'Chrome on Android' });
    await expect(phone).not.toContainText('This device');

    // Sign out and erase B.
    await phone.getByRole('button', { name: 'Sign out and erase' }).click();
    await a.getByRole('dialog').getByRole('button', { name: 'Sign out and erase' }).click();
    await expect(rows).toHaveCount(1);

    // B hears device_wiped at its next request (within the server's 10 s token cache) and erases.
    await askUntilWiped(b);
    const databases = () => b.evaluate(async () => (await indexedDB.databases()).map((d) => d.name!).filter((n) => n.startsWith('parley')));
    await expect.poll(databases).toEqual([]);
    await expect(b.getByText(contact)).toHaveCount(0);
    // A is unaffected.
    await a.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Conversations' }).click();
    await expect(a.getByText(contact)).toBeVisible();
  } finally {
    await contextA.close();
    await contextB.close();
  }
});

test('opened from the QR code (/?pair=<code>): redeemed at once, the code leaves the address bar', async ({ browser, request }, info) => {
  const user = unique('qr');
  const created = tokenCli(['create', '--user', user, '--label', 'desk']);
  expect(created.code, created.err).toBe(0);
  const token = created.out.trim();
  const pairing = await request.post(`${base}/v1/me/pairings`, { headers: { authorization: `Bearer ${token}` } });
  expect(pairing.status()).toBe(201);
  const { id, code } = (await pairing.json()) as { id: string; code: string };

  const context = await browser.newContext({ ...info.project.use });
  try {
    const page = await context.newPage();
    await page.goto(`/?pair=${code}`);
    await expect(page.getByTestId('pair-waiting')).toBeVisible();
    expect(new URL(page.url()).search).toBe('');
    // The first device (here, its API) sees who asks and denies: the phone is told.
    await expect
      .poll(async () => ((await (await request.get(`${base}/v1/me/pairings/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { status: string }).status)
      .toBe('redeemed');
    expect((await request.post(`${base}/v1/me/pairings/${id}/deny`, { headers: { authorization: `Bearer ${token}` } })).status()).toBe(200);
    await expect(page.locator('#pair-error')).toHaveText(/did not allow this one/);
  } finally {
    await context.close();
  }
});
