// What two-pane.spec (a wide screen) and one-pane.spec (a phone) share: the seeded conversations
// and the ways to find the list, its rows and the open conversation.
import { expect, type Page } from '@playwright/test';
import { api, conversationRow, signIn, unique } from './helpers';

export const list = (page: Page) => page.getByRole('region', { name: 'Conversations' });
export const table = (page: Page) => page.getByRole('table', { name: 'Conversations' });
export const rowLink = (page: Page, name: string) => conversationRow(page, name).getByRole('link');
export const openHeading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });
export const search = (page: Page) => page.getByRole('searchbox', { name: 'Search' });

/** Rows wholly inside the list's scroller and the viewport: what the user sees of the list. */
export function rowsInView(page: Page): Promise<number> {
  return page.evaluate(() => {
    const body = document.querySelector('.vtable-body')!.getBoundingClientRect();
    const bottom = Math.min(body.bottom, window.innerHeight);
    return [...document.querySelectorAll('.vtable-body [role=row][data-index]')].filter((row) => {
      const r = row.getBoundingClientRect();
      return r.height > 0 && r.top >= body.top - 0.5 && r.bottom <= bottom + 0.5;
    }).length;
  });
}

export async function seed(page: Page, request: Parameters<typeof api>[0], info: Parameters<typeof api>[1]) {
  const server = await api(request, info);
  const prefix = unique('pane');
  // Twenty quiet ones (nothing sent: created is their only time), then two with a file each.
  let lastQuiet = { created_at: 0 };
  for (let i = 0; i < 20; i++) lastQuiet = await server.createConversation(`${prefix}-quiet-${String(i).padStart(2, '0')}`);
  // Times are whole seconds, and rows of the same second fall in no set order: the two with a file
  // are made once the clock has left the last quiet one's second, so they come first in the list
  // (a phone renders ~18 of the 22 rows: one of them was at times not among those).
  await expect.poll(() => Math.floor(Date.now() / 1000)).toBeGreaterThan(lastQuiet.created_at);
  const [a, b] = [`${prefix}-alpha`, `${prefix}-bravo`];
  const alpha = await server.createConversation(a);
  const bravo = await server.createConversation(b);
  await server.upload(alpha.id, 'alpha-note.txt', 'alpha');
  await server.upload(bravo.id, 'bravo-note.txt', 'bravo');
  await signIn(page, info);
  await search(page).fill(prefix);
  await expect(rowLink(page, a)).toBeVisible();
  // The first of the quiet ones in the list's order.
  const quiet = table(page).getByRole('row').filter({ hasText: `${prefix}-quiet-` }).first();
  return { prefix, a, b, alpha, bravo, quiet };
}

