// The rename dialog validates with the same rule as the server (lib/schemas.ts filenameProblem) and
// says so in plain words; a name that would display as something else never leaves the device.
import { expect, test } from '@playwright/test';
import { api, expectAllSynced, openConversation, signIn, unique } from './helpers';

test('renaming to a name with an invisible bidi override is refused in the dialog, in plain words', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('rename-rule');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'invoice.pdf', '%PDF-1.4');

  await signIn(page, info);
  await openConversation(page, contact);
  await page.getByRole('button', { name: 'Rename invoice.pdf' }).click();
  await page.getByLabel('New name').fill('invoice\u202Efdp.exe');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await expect(page.getByRole('dialog', { name: 'Rename file' }).getByRole('alert')).toHaveText('A file name can’t contain / or \\, nor hidden characters that change how the name looks.');

  // Nothing was queued: the dialog is still open, and the server still has the old name.
  await expect(page.getByLabel('New name')).toBeVisible();
  await expectAllSynced(page);
  expect((await server.get(`/v1/files/${file.id}`)).body.filename).toBe('invoice.pdf');

  // A name that needs a joiner (Persian, with ZWNJ) is fine.
  await page.getByLabel('New name').fill('فاکتور\u200Cها.pdf');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await expect(page.getByLabel('New name')).toHaveCount(0);
  await expect(page.getByText('فاکتور\u200Cها.pdf')).toBeVisible();
  // The row and the status pill are two live queries: for a moment after the rename is queued the
  // pill can still read "All synced", so wait for the server first, then for the pill.
  await expect.poll(async () => (await server.get(`/v1/files/${file.id}`)).body.filename).toBe('فاکتور\u200Cها.pdf');
  await expectAllSynced(page);
});
