// One honest connection state (issue 32 item 4), at 390×844 and on the desktop: the pill and the
// line under it follow what the transfer does, through a link the test controls (cutting-proxy.ts).
// A resumable upload shows what the server has confirmed, never the bytes in flight; a transfer
// that stops moving reads "Stalled" with its retry counted down; a server that drops every request
// while the browser is online reads "Server unreachable", never "Offline"; then all goes. And failed
// changes keep the header as it was: Sign out stays on its line.
import { expect, test, type Page } from '@playwright/test';
import { api, appOrigin, appPort, expectAllSynced, openConversation, signIn, unique } from './helpers';
import { pattern } from '../helpers/bytes';
import { CuttingProxy, openThrough, serverBytes, signInThrough } from './cutting-proxy';

const MiB = 1024 * 1024;

interface Shown {
  label: string;
  detail: string;
}

/** Every state the pill and its line show, recorded as it changes (not sampled). */
async function recordStates(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __states: { label: string; detail: string }[] };
    w.__states = [];
    new MutationObserver(() => {
      const label = document.querySelector('[data-testid="sync-status"]')?.firstChild?.textContent ?? '';
      const detail = document.querySelector('[data-testid="sync-detail"]')?.textContent ?? '';
      const last = w.__states.at(-1);
      if (label && (last?.label !== label || last.detail !== detail)) w.__states.push({ label, detail });
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
}

const statesOf = (page: Page) => page.evaluate(() => (window as unknown as { __states: Shown[] }).__states);

test.describe('the status follows the transfer', () => {
  let proxy: CuttingProxy;
  test.beforeEach(async () => {
    proxy = new CuttingProxy(appPort());
    await proxy.start();
  });
  test.afterEach(async () => proxy.stop());

  test('sending what the server holds, stalled, server unreachable, then all synced', async ({ page, request }, info) => {
    test.setTimeout(150_000);
    const server = await api(request, info);
    const contact = unique('honest-link');
    const conversation = await server.createConversation(contact);
    await recordStates(page);
    await signInThrough(page, info, proxy.origin);
    await openThrough(page, contact);
    const pill = page.getByTestId('sync-status');
    const detail = page.getByTestId('sync-detail');

    // 6 MiB in 4 MiB PATCHes: the first is answered (the server confirms 4 MiB), the second is held
    // 1 MiB in — bytes in flight the server has not confirmed.
    const size = 6 * MiB;
    const bytes = Buffer.from(pattern(size, 7));
    proxy.holdAt = 5 * MiB;
    await page.getByLabel('Upload files').setInputFiles({ name: 'monitor.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await proxy.held;

    // Nothing moves: "Stalled", its retry (when the transfer is abandoned and resumed) counted down.
    await expect(pill).toContainText('Stalled', { timeout: 20_000 });
    await expect(detail).toHaveText(/^Nothing moving — retrying in \d+ s$/);
    const secondsLeft = async () => Number((await detail.textContent())?.match(/(\d+) s$/)?.[1] ?? Number.NaN);
    const first = await secondsLeft();
    await expect.poll(secondsLeft).toBeLessThan(first);
    // Before that, while the bytes moved: what the server had confirmed, never the bytes in flight.
    const beforeCut = await statesOf(page);
    expect(beforeCut.map((s) => s.label)).toContain('Sending');
    const onServer = beforeCut.map((s) => s.detail.match(/^(\d+(?:\.\d)?) of 6\.0 MB on the server$/)).filter((m) => m !== null);
    expect(onServer.length).toBeGreaterThan(0);
    expect(Math.max(...onServer.map((m) => Number(m[1])))).toBeLessThanOrEqual(4);

    // The server drops every request while the browser's network is up: not "Offline".
    proxy.refuse = true;
    proxy.cutAll();
    await expect(pill).toContainText('Server unreachable', { timeout: 60_000 });
    await expect(detail).toHaveText(/^(Retrying in \d+ s|Trying again…)$/);

    // Back: the upload resumes from the server's offset and completes; one file, byte for byte.
    proxy.refuse = false;
    await expect(pill).toHaveText('All synced', { timeout: 90_000 });
    const files = (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data;
    expect(files).toHaveLength(1);
    expect((await serverBytes(request, info, files[0].file_url, appOrigin())).equals(bytes)).toBe(true);

    const labels = (await statesOf(page)).map((s) => s.label);
    expect(labels).not.toContain('Offline');
    // In that order: sending, stalled, unreachable, all synced.
    const at = (label: string, from = 0) => labels.indexOf(label, from);
    expect(at('Stalled')).toBeGreaterThan(at('Sending'));
    expect(at('Server unreachable', at('Stalled'))).toBeGreaterThan(at('Stalled'));
    expect(at('All synced', at('Server unreachable', at('Stalled')))).toBeGreaterThan(0);
  });
});

test('failed changes keep the header as it was: Sign out stays on its line', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('failed-header');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'obs.txt', 'observations');
  await signIn(page, info);
  await openConversation(page, contact);
  await expectAllSynced(page);
  const boxes = async () => ({
    header: await page.locator('header.topbar').boundingBox(),
    status: await page.locator('header.topbar .status-text').boundingBox(),
    signOut: await page.getByRole('button', { name: 'Sign out' }).boundingBox(),
  });
  const before = await boxes();

  // Renamed offline, deleted on the server meanwhile: the rename fails.
  await context.setOffline(true);
  await page.getByRole('button', { name: 'Rename obs.txt' }).click();
  await page.getByLabel('New name').fill('obs-bed-3.txt');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  expect(await server.del(`/v1/files/${file.id}`)).toBe(204);
  await context.setOffline(false);
  const failed = page.getByRole('button', { name: /1 failed/ });
  await expect(failed).toBeVisible({ timeout: 45_000 });
  await expect(page.getByTestId('sync-status')).toHaveText('Needs attention');

  const after = await boxes();
  expect(after).toEqual(before);
  // Sign out on the status's line, not below it.
  const middle = after.signOut!.y + after.signOut!.height / 2;
  expect(middle).toBeGreaterThan(after.status!.y);
  expect(middle).toBeLessThan(after.status!.y + after.status!.height);
  // The pill and its line are the button: a 44 px target.
  expect((await failed.boundingBox())!.height).toBeGreaterThanOrEqual(44);
  await failed.click();
  await expect(page.getByRole('dialog', { name: 'Changes the server refused' })).toBeVisible();
});
