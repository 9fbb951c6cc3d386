// A typo must not misfile a patient's data (issue 32 item 1), at both viewports: a search with a
// typo ("amelia hugjes", "amelai", "hughs") finds the id it meant, offers it first as "Did you
// mean …?" and marks the rows found that way; starting a conversation with what was typed is the
// secondary action; New conversation warns of an id one or two characters from a known one.
import { expect, test } from '@playwright/test';
import { accessibilityViolations, api, signIn } from './helpers';

// The accessibility scan injects axe-core: the page's CSP is bypassed for that alone.
test.use({ bypassCSP: true });

test('a typo finds the id it meant, offered before starting a new conversation, which warns of the near id', async ({ page, request }, info) => {
  const server = await api(request, info);
  // A tag of this run's own (letters only: one word), so the searches below match only these rows.
  const tag = `q${Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('')}`;
  const amelia = `amelia-hughes-${tag}`;
  await server.createConversation(amelia);
  await server.createConversation(`oliver-smith-${tag}`);

  await signIn(page, info);
  const search = page.getByRole('searchbox', { name: 'Search' });
  const list = page.getByRole('table', { name: 'Conversations' });
  const offer = page.locator('.did-you-mean');

  for (const typo of [`amelia hugjes ${tag}`, `amelai ${tag}`, `hughs ${tag}`]) {
    await search.fill(typo);
    await expect(offer.getByRole('status'), typo).toHaveText(`No conversation matches ‘${typo}’. Did you mean…`);
    // The id it meant is the first, and primary, action; starting one with the typo is secondary.
    const meant = offer.getByRole('button').first();
    await expect(meant).toHaveText(amelia);
    await expect(meant).toHaveClass(/primary/);
    const start = offer.getByRole('button', { name: /^Start a conversation with/ });
    await expect(start).toBeVisible();
    await expect(start).not.toHaveClass(/primary/);
    // The row found with the typo is listed, marked as a close match.
    const row = list.getByRole('row').filter({ has: page.getByRole('link', { name: amelia }) });
    await expect(row).toContainText('close match');
    await expect(list.getByRole('link')).toHaveCount(1);
  }
  expect(await accessibilityViolations(page)).toEqual([]);

  // "Did you mean" searches for the id: the row is then an exact match, unmarked.
  await search.fill(`amelia hugjes ${tag}`);
  await offer.getByRole('button', { name: amelia, exact: true }).click();
  await expect(search).toHaveValue(amelia);
  await expect(list.getByRole('link', { name: amelia })).toBeVisible();
  await expect(list).not.toContainText('close match');
  await expect(offer).toHaveCount(0);

  // Starting one from the failed search: the dialog warns of the id one character away.
  await search.fill(`amelia hugjes ${tag}`);
  await offer.getByRole('button', { name: `Start a conversation with ‘amelia-hugjes-${tag}’` }).click();
  const dialog = page.getByRole('dialog', { name: 'New conversation' });
  await expect(dialog.getByLabel('Contact id')).toHaveValue(`amelia-hugjes-${tag}`);
  await expect(dialog.getByRole('status')).toContainText('Is it the same patient?');
  await expect(dialog.getByRole('listitem')).toHaveText(`Open ‘${amelia}’ (one character different)`);
  await expect(dialog.getByRole('button', { name: 'Create anyway' })).toBeVisible();
  expect(await accessibilityViolations(page)).toEqual([]);
  await dialog.getByRole('button', { name: `Open ‘${amelia}’` }).click();
  await expect(page.getByRole('heading', { level: 1, name: amelia })).toBeVisible();
  await page.goBack();

  // Typed and submitted at once (before the check as you type): warned first, created only on "Create anyway".
  await page.getByRole('button', { name: 'New conversation' }).click();
  await dialog.getByLabel('Contact id').fill(`amelia-hughs-${tag}`);
  await dialog.getByLabel('Contact id').press('Enter');
  await expect(dialog.getByRole('listitem')).toHaveText(`Open ‘${amelia}’ (one character different)`);
  await dialog.getByRole('button', { name: 'Create anyway' }).click();
  await expect(page.getByRole('heading', { level: 1, name: `amelia-hughs-${tag}` })).toBeVisible();

  // Nothing near at all: no "Did you mean", and starting one is still not the primary action.
  await page.goBack();
  await search.fill(`zoe martin ${tag}`);
  const empty = list.getByRole('cell').filter({ hasText: 'No conversation matches' });
  await expect(empty).toContainText(`No conversation matches ‘zoe martin ${tag}’.`);
  await expect(empty.getByRole('button', { name: `Start a conversation with ‘zoe-martin-${tag}’` })).not.toHaveClass(/primary/);
  await expect(offer).toHaveCount(0);
  expect(await accessibilityViolations(page)).toEqual([]);
});
