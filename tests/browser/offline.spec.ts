// The offline promise, end to end in Chromium: first visit online, then edits with no network,
// a reload with no network, and back online the server holds exactly the user's changes.
import { expect, test } from '@playwright/test';
import { CutLink } from './cut-link';
import { api, appPort, backToConversationsLink, expectAllSynced, openConversation, screenshot, signIn, unique, unlockIfLocked, waitForServiceWorker } from './helpers';

const links: CutLink[] = [];
test.afterEach(async () => {
  for (const link of links.splice(0)) await link.stop();
});

test('offline edits, an offline reload, and replay when back online', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const seedContact = unique('seed');
  const seed = await server.createConversation(seedContact);
  const keep = await server.upload(seed.id, 'keep.txt', 'keep me');
  const gone = await server.upload(seed.id, 'gone.txt', 'delete me');

  // The browser reaches the app through a link the test cuts (see cut-link.ts for why).
  const link = new CutLink(appPort());
  const origin = await link.start();
  links.push(link);
  await signIn(page, info, origin);
  await waitForServiceWorker(page);
  await openConversation(page, seedContact);
  await expect(page.getByText('keep.txt')).toBeVisible();
  await expect(page.getByText('gone.txt')).toBeVisible();
  await backToConversationsLink(page).click();

  // ---- no network from here ----
  // The link is cut for every realm; setOffline tells the page it is offline (navigator.onLine).
  link.cut();
  await context.setOffline(true);
  const newContact = unique('offline');
  await page.getByRole('button', { name: /New/ }).click();
  await page.getByLabel('Contact id').fill(newContact);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(newContact) })).toBeVisible();
  await page.getByRole('button', { name: 'Pin', exact: true }).click();
  await page.getByRole('button', { name: 'Mute', exact: true }).click();
  await page.getByLabel('Upload files').setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 offline scan') });
  await expect(page.getByText('scan.pdf')).toBeVisible();
  await page.getByRole('button', { name: 'Archive', exact: true }).click();
  await expect(page.getByRole('button', { name: 'Restore', exact: true })).toBeVisible();
  await expect(page.getByTestId('sync-status')).toContainText('Offline');

  await backToConversationsLink(page).click();
  await openConversation(page, seedContact);
  await page.getByRole('button', { name: 'Rename keep.txt' }).click();
  await page.getByLabel('New name').fill('kept.txt');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await page.getByRole('button', { name: 'Delete gone.txt' }).click();
  await page.getByRole('button', { name: 'Delete file' }).click();
  await expect(page.getByText('kept.txt')).toBeVisible();
  await expect(page.getByText('gone.txt')).toHaveCount(0);
  await expect(page.getByTestId('pending-count')).toBeVisible();

  // Reload with no network: the service worker serves the app, IndexedDB the data and the outbox.
  await page.reload();
  await unlockIfLocked(page);
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(seedContact) })).toBeVisible();
  await expect(page.getByText('kept.txt')).toBeVisible();
  await expect(page.getByTestId('pending-count')).toBeVisible();
  await screenshot(page, info, 'offline-conversation');

  // The server has seen none of it yet.
  expect((await server.allConversations()).some((c) => c.contact_id === newContact)).toBe(false);
  expect((await server.get(`/v1/files/${keep.id}`)).body.filename).toBe('keep.txt');

  // ---- back online ----
  link.restore();
  await context.setOffline(false);
  await expectAllSynced(page, 45_000);
  await expect(page.getByTestId('pending-count')).toHaveCount(0);

  const created = (await server.allConversations()).filter((c) => c.contact_id === newContact);
  expect(created).toHaveLength(1);
  expect(created[0]).toMatchObject({ is_pinned: true, is_muted: true });
  expect(created[0].archived_at).not.toBeNull();
  const uploaded = (await server.get(`/v1/files?conversation_id=${created[0].id}`)).body.data;
  expect(uploaded.map((f: any) => [f.filename, f.file_size, f.file_type])).toEqual([['scan.pdf', 21, 'application/pdf']]);
  expect((await server.get(`/v1/files/${keep.id}`)).body.filename).toBe('kept.txt');
  expect((await server.get(`/v1/files/${gone.id}`)).status).toBe(404);
  const seedFiles = (await server.get(`/v1/files?conversation_id=${seed.id}`)).body.data;
  expect(seedFiles.map((f: any) => f.filename)).toEqual(['kept.txt']);
});
