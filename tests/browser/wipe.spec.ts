// Remote wipe (issue 28, item 5), end to end: a phone signed in with a stored token holds a
// conversation, a change queued offline and an opened document; the operator runs `npm run token
// -- revoke <id> --wipe`; at its next request the app is answered 401 device_wiped and erases
// everything of the user on the device at once, without asking, and says why on the sign-in screen.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { E2E_DATA_ROOT } from '../../playwright.config';
import { askUntilWiped, base, expectAllSynced, unique } from './helpers';

const DATA_DIR = path.join(E2E_DATA_ROOT, 'app');

function tokenCli(args: string[]): { code: number | null; out: string; err: string } {
  // The app server's own data; none of the runner's database or proxy settings.
  const env = { ...process.env, DATA_DIR, DATABASE_URL: '', UPSTREAM_BASE_URL: '' };
  const r = spawnSync(process.execPath, ['scripts/token.mjs', ...args], { env, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('revoke with wipe: the app erases the device at its next request and says the organisation did it', async ({ page, request }) => {
  const user = unique('wiped');
  const created = tokenCli(['create', '--user', user, '--label', 'ward phone']);
  expect(created.code, created.err).toBe(0);
  const token = created.out.trim();
  const tokenId = /created token (\w+)/.exec(created.err)![1]!;
  const contact = unique('patient');
  const headers = { authorization: `Bearer ${token}` };
  expect((await request.post(`${base}/v1/conversations`, { headers, data: { contact_id: contact } })).status()).toBe(201);

  await page.goto('/');
  await page.getByLabel('Access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText(contact)).toBeVisible();
  await expectAllSynced(page);
  const databases = () => page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name!).filter((n) => n.startsWith('parley')));
  expect((await databases()).length).toBeGreaterThan(0);

  const wiped = tokenCli(['revoke', tokenId, '--wipe']);
  expect(wiped.code, wiped.err).toBe(0);
  expect(wiped.err).toMatch(/not yet synced are lost/);

  // The server keeps an accepted token in its cache for up to 10 s: the app asks until it is told.
  await askUntilWiped(page);
  // Nothing of the user is left: no database, no session, the name of the patient nowhere.
  await expect.poll(databases).toEqual([]);
  expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k === 'parley:token' || k === 'parley:database'))).toEqual([]);
  await expect(page.getByText(contact)).toHaveCount(0);
  // A reload starts signed out.
  await page.reload();
  await expect(page.getByLabel('Access token')).toBeVisible();
});
