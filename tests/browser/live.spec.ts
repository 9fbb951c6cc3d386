// Live updates across two browsers signed in as the same user: a change made in one appears in the
// other with nobody touching it — carried by the change feed's live stream, which the other's sync
// worker holds open (its periodic sync is a minute away, and then only a slow safety net).
import { expect, test } from '@playwright/test';
import { api, conversationRow, rowMenuAction, signIn, unique } from './helpers';

test('a change in one browser appears in another signed in as the same user, without any interaction', async ({ browser, request }, info) => {
  const server = await api(request, info);
  const contact = unique('live');
  await server.createConversation(contact);
  const contexts = await Promise.all([browser.newContext(info.project.use), browser.newContext(info.project.use)]);
  try {
    const [a, b] = await Promise.all(contexts.map((c) => c.newPage()));
    const streams: string[] = [];
    contexts[1]!.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/events/stream') streams.push(r.url());
    });
    await signIn(a!, info);
    await signIn(b!, info);
    await expect(conversationRow(b!, contact)).toBeVisible();
    await expect(conversationRow(b!, contact).getByTitle('Pinned', { exact: true })).toHaveCount(0);
    await expect.poll(() => streams.length).toBeGreaterThan(0); // B's worker holds the stream open

    await rowMenuAction(a!, contact, 'Pin');
    await expect(conversationRow(a!, contact).getByTitle('Pinned', { exact: true })).toBeVisible();
    // B: nobody touches it. The row changes (well before B's periodic sync could have run).
    await expect(conversationRow(b!, contact).getByTitle('Pinned', { exact: true })).toBeVisible({ timeout: 20_000 });

    // And the other way round, a new conversation this time.
    const other = unique('live-new');
    await b!.getByRole('button', { name: /New/ }).click();
    await b!.getByLabel('Contact id').fill(other);
    await b!.getByRole('dialog', { name: 'New conversation' }).getByRole('button', { name: 'Create' }).click();
    await expect(b!.getByRole('heading', { level: 1, name: new RegExp(other) })).toBeVisible();
    await expect(a!.getByRole('link', { name: new RegExp(other) })).toBeVisible({ timeout: 20_000 });
  } finally {
    await Promise.all(contexts.map((c) => c.close()));
  }
});
