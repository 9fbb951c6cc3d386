import { expect, test } from '@playwright/test';
import { api, backToConversationsLink, expectAllSynced, openConversation, rowMenuAction, signIn, unique, waitForServiceWorker } from './helpers';

test('opening a conversation records last_opened_at on the server', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('opened');
  const conversation = await server.createConversation(contact);
  expect(conversation.last_opened_at).toBeNull();
  await signIn(page, info);
  await openConversation(page, contact);
  await expectAllSynced(page);
  await expect.poll(async () => (await server.get(`/v1/conversations/${conversation.id}`)).body.last_opened_at).not.toBeNull();
});

test('a file opened once opens again with no network', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('cached');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'lab-results.txt', 'potassium 4.1 mmol/L');
  await signIn(page, info);
  await waitForServiceWorker(page);
  await openConversation(page, contact);
  // Opened in the app's viewer (issue 20): its request goes through the service worker, which keeps it.
  await page.getByRole('link', { name: 'lab-results.txt' }).click();
  await expect(page.getByLabel('Contents of lab-results.txt')).toContainText('potassium 4.1');

  await context.setOffline(true);
  const offlineTab = await context.newPage();
  await offlineTab.goto(file.file_url);
  await expect(offlineTab.locator('body')).toContainText('potassium 4.1');
  // one never opened is not there
  const other = await server.upload(conversation.id, 'never-opened.txt', 'x');
  const missing = await offlineTab.goto(other.file_url).catch((e: Error) => e);
  expect(missing instanceof Error || (missing && missing.status() >= 400)).toBe(true);
});

test('sign-out names unsynced changes, then clears the local data', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('signout');
  await server.createConversation(contact);
  await signIn(page, info);
  await expect(page.getByRole('link', { name: new RegExp(contact) })).toBeVisible();

  await context.setOffline(true);
  await rowMenuAction(page, contact, 'Pin');
  await page.getByRole('button', { name: 'Sign out' }).click();
  const dialog = page.getByRole('dialog', { name: 'Sign out?' });
  await expect(dialog).toContainText('1 change has not reached the server');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await context.setOffline(false);
  await expectAllSynced(page);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(dialog).toContainText('Everything is synced');
  await dialog.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page.getByLabel('Access token')).toBeVisible();
  const databases = await page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
  expect(databases.filter((name) => name?.startsWith('parley'))).toEqual([]);
  expect(await page.evaluate(() => localStorage.getItem('parley:token'))).toBeNull();
});

test('keyboard only: open the new-conversation dialog, create, and go back', async ({ page }, info) => {
  await signIn(page, info);
  const contact = unique('keys');
  await page.getByRole('button', { name: /New/ }).focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'New conversation' });
  await expect(dialog).toBeVisible();
  expect(await page.evaluate(() => document.activeElement?.closest('dialog') !== null)).toBe(true);
  await page.keyboard.press('Tab'); // from the "contact" radio to the id field
  await expect(page.getByLabel('Contact id')).toBeFocused();
  await page.keyboard.type(contact);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  await backToConversationsLink(page).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toHaveCount(0);
  // Escape closes a dialog
  await page.getByRole('button', { name: /New/ }).focus();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});
