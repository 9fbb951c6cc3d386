// Every screen at both viewports: screenshots as artifacts, an accessibility scan, the CSP, and
// names rendered as text.
import { expect, test } from '@playwright/test';
import { accessibilityViolations, api, base, conversationMenuAction, expectAllSynced, openConversation, screenshot, signIn, unique } from './helpers';


/** axe-core's WCAG 2.1 A/AA rules; the page is loaded with CSP bypassed only to inject axe itself. */

test('screens: screenshots, accessibility, names shown as text', async ({ browser, request }, info) => {
  const context = await browser.newContext({ ...info.project.use, bypassCSP: true });
  const page = await context.newPage();
  const server = await api(request, info);
  const contact = unique('screens');
  const conversation = await server.createConversation(contact);
  const hostile = '<img src=x onerror=window.__pwned=1>.txt';
  await server.upload(conversation.id, hostile, 'x');
  await server.upload(conversation.id, 'discharge-summary.pdf', '%PDF-1.4 summary');
  await server.createConversation(unique('ward')).then((c) => server.get(`/v1/conversations/${c.id}`));

  await page.goto('/');
  await screenshot(page, info, 'sign-in');
  expect(await accessibilityViolations(page)).toEqual([]);

  await signIn(page, info);
  if (info.project.name === 'phone') {
    // The narrowest phones: nothing may overflow sideways at 360 px.
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.setViewportSize({ width: 390, height: 844 });
  }
  await screenshot(page, info, 'conversations');
  expect(await accessibilityViolations(page)).toEqual([]);

  await page.getByRole('button', { name: /New/ }).click();
  await screenshot(page, info, 'new-conversation');
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.getByRole('button', { name: 'Cancel' }).click();

  await openConversation(page, contact);
  await expect(page.getByText(hostile)).toBeVisible(); // the name, as text
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  await screenshot(page, info, 'conversation');
  expect(await accessibilityViolations(page)).toEqual([]);

  await conversationMenuAction(page, 'Delete…');
  await expect(page.getByRole('button', { name: 'Delete permanently' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Archive instead' })).toBeVisible();
  await screenshot(page, info, 'delete-confirmation');
  await page.getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click();
  await expect(page.getByRole('heading', { name: 'Files' })).toBeVisible();
  await expect(page.getByText('discharge-summary.pdf')).toBeVisible();
  await screenshot(page, info, 'files');
  expect(await accessibilityViolations(page)).toEqual([]);
  await context.close();
});

test('the app is served with a strict CSP and runs under it', async ({ page }, info) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  const response = await page.goto('/');
  const csp = response!.headers()['content-security-policy'];
  expect(csp).toContain("default-src 'self'");
  // 'wasm-unsafe-eval': WebAssembly only (Argon2id for the device PIN), never JavaScript eval.
  expect(csp).toMatch(/script-src 'self' 'wasm-unsafe-eval'( 'sha256-[A-Za-z0-9+/=]+')+;/);
  expect(csp).not.toContain("'unsafe-inline' 'self'"); // scripts: no unsafe-inline
  expect(csp.split(';').find((d) => d.trim().startsWith('script-src'))).not.toContain('unsafe-inline');
  expect(response!.headers()['x-content-type-options']).toBe('nosniff');
  await signIn(page, info);
  await expectAllSynced(page);
  expect(violations).toEqual([]);
  // an injected inline script does not run
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.append(s);
  });
  expect(await page.evaluate(() => (window as any).__inline)).toBeUndefined();
});

test('manifest and service worker make it installable', async ({ request }) => {
  const manifest = await (await request.get(`${base}/manifest.webmanifest`)).json();
  expect(manifest).toMatchObject({ name: 'Parley', display: 'standalone', start_url: '/' });
  const sizes = manifest.icons.map((i: any) => `${i.sizes}:${i.purpose}`);
  expect(sizes).toEqual(expect.arrayContaining(['192x192:any', '512x512:any', '192x192:maskable', '512x512:maskable']));
  for (const icon of manifest.icons) expect((await request.get(`${base}${icon.src}`)).headers()['content-type']).toBe('image/png');
  const sw = await request.get(`${base}/sw.js`);
  expect(sw.status()).toBe(200);
  expect(sw.headers()['cache-control']).toBe('no-cache');
});
