// A change the server refuses: the error is shown with the server's message, and Discard puts the
// mirror back to the server's state.
import { expect, test } from '@playwright/test';
import { api, expectAllSynced, openConversation, screenshot, signIn, unique } from './helpers';

test('a refused change shows the server message; Discard restores the server state', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('refused');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'report.txt', 'report');

  await signIn(page, info);
  await openConversation(page, contact);
  await expect(page.getByText('report.txt')).toBeVisible();

  // Offline, the user renames the file while someone else deletes it on the server.
  await context.setOffline(true);
  await page.getByRole('button', { name: 'Rename report.txt' }).click();
  await page.getByLabel('New name').fill('final report.txt');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await expect(page.getByText('final report.txt')).toBeVisible();
  expect(await server.del(`/v1/files/${file.id}`)).toBe(204);
  await context.setOffline(false);

  await page.getByRole('button', { name: /1 failed/ }).click({ timeout: 45_000 });
  const dialog = page.getByRole('dialog', { name: 'Changes the server refused' });
  // In plain words: the thing (by the name the server knew it by) and the cause.
  const change = dialog.getByRole('listitem');
  await expect(change.getByText('Rename', { exact: true })).toBeVisible();
  await expect(change).toContainText('‘report.txt’ was deleted on another device — your rename to ‘final report.txt’ cannot be applied.');
  // Retry cannot succeed: Discard comes first, as the main action.
  await expect(change.getByRole('button')).toHaveText(['Discard', 'Retry']);
  await expect(change.getByRole('button', { name: 'Discard' })).toHaveClass(/\bprimary\b/);
  await expect(change.getByRole('button', { name: 'Retry' })).not.toHaveClass(/\bprimary\b/);
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
