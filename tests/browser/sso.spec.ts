// Single sign-on (issue 29, item 1) end to end: the built app with OIDC_* pointing at a real
// OpenID provider run here (oidc-provider 8, its development login form). The sign-in screen offers
// "Sign in with Test IdP"; the provider's login and consent; back in the app signed in as the
// e-mail claim's user, syncing; the address bar never held the token (only a spent handoff id, and
// not even that once the app has read it); then sign out. A refused sign-in is explained.
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { E2E_TOKENS } from '../../playwright.config';
import { appEnv, CHECKOUT, startApp, tempDir, type AppProcess } from './app-process';
import { expectAllSynced, unique } from './helpers';

const SERVER = '.next/parley/server.mjs';
const CLIENT_ID = 'parley-e2e';
let app: AppProcess;
let provider: http.Server;
let scratch: ReturnType<typeof tempDir>;

test.beforeAll(async () => {
  scratch = tempDir('parley-sso-');
  // The provider's address first (the app's environment names it), then the app (its address is
  // the client's redirect URI), then the provider itself: the app discovers it on first use.
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  provider = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  app = await startApp(
    [SERVER],
    CHECKOUT,
    appEnv(path.join(scratch.dir, 'data'), { LOCK_AFTER_MINUTES: '0', OIDC_ISSUER_URL: issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_DISPLAY_NAME: 'Test IdP' }),
  );
  const { default: Provider } = await import('oidc-provider');
  const oidc = new Provider(issuer, {
    clients: [{ client_id: CLIENT_ID, token_endpoint_auth_method: 'none', redirect_uris: [`${app.url}/auth/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'] }],
    cookies: { keys: ['parley-e2e-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id, email: `${id}@example.test`, email_verified: true }) }),
  });
  handler = oidc.callback();
});

test.afterAll(async () => {
  await app?.stop();
  provider?.closeAllConnections();
  await new Promise((resolve) => provider?.close(resolve));
  scratch?.remove();
});

test('Sign in with Test IdP: the provider’s login, back signed in as the e-mail claim’s user, synced; then sign out', async ({ page }) => {
  const login = unique('nurse').toLowerCase();
  const user = `${login}@example.test`;
  // Something of that user's to see once signed in (a static token of the app's, for another user,
  // cannot: the conversation is made with the user's own token below, after sign-in).
  const addresses: string[] = [];
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) addresses.push(frame.url());
  });

  await page.goto(app.url);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  // The provider's development form: any login, any password; then its consent.
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('anything');
  await page.locator('button[type=submit]').click();
  await page.locator('button[type=submit]').click(); // "Continue" (consent)

  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible({ timeout: 20_000 });
  await expectAllSynced(page);
  // The address bar: the handoff id taken out; no URL ever held a token.
  expect(new URL(page.url()).search).toBe('');
  const token = await page.evaluate(() => localStorage.getItem('parley:token'));
  expect(token).toMatch(/^pk_/);
  for (const address of addresses) expect(address).not.toContain(token!);

  // The token is that user's: a conversation made with it shows up in the app.
  const contact = unique('sso-patient');
  const me = await page.request.get(`${app.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  expect((await me.json()).id).toBe(user);
  expect((await page.request.post(`${app.url}/v1/conversations`, { headers: { authorization: `Bearer ${token}` }, data: { contact_id: contact } })).status()).toBe(201);
  await page.reload();
  await expect(page.getByText(contact)).toBeVisible({ timeout: 20_000 });
  await expectAllSynced(page);
  // Not alice's data: single sign-on made its own user.
  const alice = await page.request.get(`${app.url}/v1/me`, { headers: { authorization: `Bearer ${E2E_TOKENS.alice}` } });
  expect((await alice.json()).id).not.toBe(user);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('dialog', { name: 'Sign out?' }).getByRole('button', { name: /^Sign out/ }).click();
  await expect(page.getByLabel('Access token')).toBeVisible();
  await expect(page.getByRole('link', { name: 'Sign in with Test IdP' })).toBeVisible();
});

test('a refused sign-in is explained on the sign-in screen, and the token form stays', async ({ page }) => {
  await page.goto(`${app.url}/?signin_error=state_mismatch`);
  await expect(page.getByTestId('sso-error')).toContainText('did not match the one this browser started');
  expect(new URL(page.url()).search).toBe('');
  await expect(page.getByLabel('Access token')).toBeVisible();
  // A handoff id that is not (or no longer) this browser's.
  await page.goto(`${app.url}/?signin=${'x'.repeat(43)}`);
  await expect(page.getByTestId('sso-error')).toContainText('expired or was already used');
});
