// A change the server refuses (issues 21, 32): the failed change says what it was, Retry is offered
// only where it can succeed, Discard puts the mirror back to the server's state, and a file the
// server lost that the device still has can be uploaded again — one file on the server after.
import { expect, test, type Page } from '@playwright/test';
import { accessibilityViolations, api, expectAllSynced, openConversation, screenshot, signIn, unique, waitForServiceWorker } from './helpers';

test.use({ bypassCSP: true }); // axe is injected as a script

async function renameOffline(page: Page, from: string, to: string) {
  await page.getByRole('button', { name: `Rename ${from}` }).click();
  await page.getByLabel('New name').fill(to);
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await expect(page.getByText(to)).toBeVisible();
}

test('a refused change says what it was; no Retry where it cannot succeed; Discard restores the server state', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('refused');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'report.txt', 'report');

  await signIn(page, info);
  await openConversation(page, contact);
  await expect(page.getByText('report.txt')).toBeVisible();

  // Offline, the user renames the file (never opened: the device has no copy) while someone else deletes it on the server.
  await context.setOffline(true);
  await renameOffline(page, 'report.txt', 'final report.txt');
  expect(await server.del(`/v1/files/${file.id}`)).toBe(204);
  await context.setOffline(false);

  await page.getByRole('button', { name: /1 failed/ }).click({ timeout: 45_000 });
  const dialog = page.getByRole('dialog', { name: 'Changes the server refused' });
  // In plain words: what the change was, the thing (by the name the server knew it by) and the cause.
  const change = dialog.getByRole('listitem');
  await expect(change.getByText('Rename report.txt → final report.txt', { exact: true })).toBeVisible();
  await expect(change).toContainText('‘report.txt’ was deleted on another device — your rename to ‘final report.txt’ cannot be applied.');
  // Retry cannot succeed and there is no copy to upload: Discard alone, as the main action.
  await expect(change.getByRole('button')).toHaveText(['Discard']);
  await expect(change.getByRole('button', { name: 'Discard' })).toHaveClass(/\bprimary\b/);
  await screenshot(page, info, 'failed');
  await change.getByRole('button', { name: 'Discard' }).click();
  // Nothing left to show: the dialog closes by itself.
  await expect(dialog).toHaveCount(0);

  // The mirror equals the server again: the file is gone, nothing is pending or failed.
  await expect(page.getByText('final report.txt')).toHaveCount(0);
  await expect(page.getByText('report.txt')).toHaveCount(0);
  await expectAllSynced(page);
  await expect(page.getByRole('button', { name: /failed/ })).toHaveCount(0);
});

test('a file renamed offline and deleted on the server, opened before: "Upload my copy again" leaves one file on the server', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('lost-file');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'ecg-lead-II-strip.txt', 'ECG lead II: sinus rhythm');

  await signIn(page, info);
  await waitForServiceWorker(page);
  await openConversation(page, contact);
  // Opened once: the device keeps its copy (the service worker's opened-files cache).
  await page.getByRole('link', { name: 'ecg-lead-II-strip.txt' }).click();
  await expect(page.getByLabel('Contents of ecg-lead-II-strip.txt')).toContainText('sinus rhythm');
  await page.getByRole('link', { name: 'Back' }).click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  await expect.poll(() => page.evaluate(async () => (await (await caches.open('parley-files')).keys()).some((r) => r.url.includes('ecg-lead-II-strip')))).toBe(true);

  await context.setOffline(true);
  await renameOffline(page, 'ecg-lead-II-strip.txt', 'ecg-bed-3.txt');
  expect(await server.del(`/v1/files/${file.id}`)).toBe(204);
  await context.setOffline(false);

  await page.getByRole('button', { name: /1 failed/ }).click({ timeout: 45_000 });
  const dialog = page.getByRole('dialog', { name: 'Changes the server refused' });
  const change = dialog.getByRole('listitem');
  await expect(change.getByText('Rename ecg-lead-II-strip.txt → ecg-bed-3.txt', { exact: true })).toBeVisible();
  await expect(change).toContainText('This device still has a copy');
  // The copy first, then Discard; no Retry (the server has no file to rename).
  await expect(change.getByRole('button')).toHaveText(['Upload my copy again', 'Discard']);
  await expect(change.getByRole('button', { name: 'Upload my copy again' })).toHaveClass(/\bprimary\b/);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, info, 'failed-copy-on-device');
  await change.getByRole('button', { name: 'Upload my copy again' }).click();
  await expect(dialog).toHaveCount(0);

  // One file, with the name the user gave it, in the same conversation, with the device's bytes.
  await expectAllSynced(page);
  const listed = (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data as Array<{ id: string; filename: string; file_url: string }>;
  expect(listed.map((f) => f.filename)).toEqual(['ecg-bed-3.txt']);
  expect(listed[0]!.id).not.toBe(file.id);
  expect(await (await request.get(listed[0]!.file_url)).text()).toBe('ECG lead II: sinus rhythm');
  await expect(page.getByRole('link', { name: 'ecg-bed-3.txt' })).toBeVisible();
  await expect(page.getByText('ecg-lead-II-strip.txt')).toHaveCount(0);
  await expect(page.getByRole('button', { name: /failed/ })).toHaveCount(0);
});
