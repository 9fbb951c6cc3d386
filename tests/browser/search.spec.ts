// The search that forgives (issue 21), at both viewports: case, accents, separators, word order
// and word prefixes over contact and group ids; a search with no match offers to start a
// conversation with what was typed, or to clear the filters.
import { expect, test } from '@playwright/test';
import { accessibilityViolations, api, appOrigin, signIn, userFor } from './helpers';

// The accessibility scan injects axe-core: the page's CSP is bypassed for that alone (as in screens.spec.ts).
test.use({ bypassCSP: true });

test('search finds ids however they are typed; no match offers a new conversation or clearing the filters', async ({ page, request }, info) => {
  const server = await api(request, info);
  // A tag of this run's own (letters only: one word), so the searches below match only these rows.
  const tag = `q${Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('')}`;
  const amelia = `amelia-hughes-${tag}`;
  const smith = `amelia_smith_${tag}`;
  await server.createConversation(amelia);
  await server.createConversation(smith);
  const group = `Cardiology_Ward7-${tag}`;
  const created = await request.post(`${appOrigin()}/v1/conversations`, { headers: userFor(info).auth, data: { group_id: group } });
  expect(created.status()).toBe(201);

  await signIn(page, info);
  const search = page.getByRole('searchbox', { name: 'Search' });
  // A field for ids, not prose: no autocorrect, no capitals, no spell check; the keyboard says "search".
  await expect(search).toHaveAttribute('autocapitalize', 'off');
  await expect(search).toHaveAttribute('autocorrect', 'off');
  await expect(search).toHaveAttribute('spellcheck', 'false');
  await expect(search).toHaveAttribute('enterkeyhint', 'search');

  const list = page.getByRole('table', { name: 'Conversations' });
  const shown = async (text: string, ids: string[]) => {
    await search.fill(text);
    for (const id of ids) await expect(list.getByRole('link', { name: id }), `${text} → ${id}`).toBeVisible();
    await expect(list.getByRole('link'), text).toHaveCount(ids.length);
  };
  await shown(`amelia hughes ${tag}`, [amelia]); // spaces for hyphens
  await shown(`Hughes Amelia ${tag}`, [amelia]); // word order, case
  await shown(`${tag} AMÉLIA`, [amelia, smith]); // accents, and both Amelias
  await shown(`${tag} am hu`, [amelia]); // the start of each word
  await shown(`ameliahu ${tag}`, [amelia]); // the words run together
  await shown(`smith_amelia-${tag}`, [smith]); // underscores and hyphens alike
  await shown(`ward.7 cardio ${tag}`, [group]); // dots, digits, a group
  await shown(`lia ${tag}`, []); // inside a word is not a match (and under 4 letters no typo is forgiven: typo.spec.ts)

  // No match: not a dead end.
  const empty = list.getByRole('cell').filter({ hasText: 'No conversation matches' });
  await search.fill(`Zoë Martin ${tag}`);
  await expect(empty).toContainText(`No conversation matches ‘Zoë Martin ${tag}’.`);
  expect(await accessibilityViolations(page)).toEqual([]);
  // Clear filters: the search and the filters go back to their defaults, the rows come back.
  await empty.getByRole('button', { name: 'Clear filters' }).click();
  await expect(search).toHaveValue('');
  await expect(list.getByRole('link', { name: amelia })).toBeVisible();

  // Start a conversation with what was typed: the new-conversation dialog opens with it as the id.
  await search.fill(`zoe martin ${tag}`);
  await empty.getByRole('button', { name: `Start a conversation with ‘zoe-martin-${tag}’` }).click();
  const dialog = page.getByRole('dialog', { name: 'New conversation' });
  await expect(dialog.getByLabel('Contact id')).toHaveValue(`zoe-martin-${tag}`);
  await expect(dialog.getByRole('radio', { name: 'a contact' })).toBeChecked();
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { level: 1, name: `zoe-martin-${tag}` })).toBeVisible();
  await page.goBack();
  await search.fill(`martin zoe ${tag}`);
  await expect(list.getByRole('link', { name: `zoe-martin-${tag}` })).toBeVisible();
});
