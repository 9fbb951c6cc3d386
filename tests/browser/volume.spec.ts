// Volume: 10,000 conversations through the real sync, in a virtualised list (phone viewport only).
import { expect, test } from '@playwright/test';
import { E2E_TOKENS } from '../../playwright.config';
import { base, expectAllSynced } from './helpers';

test('10,000 conversations: virtualised rows, smooth to the end', async ({ page, request }) => {
  test.setTimeout(180_000);
  const auth = { authorization: `Bearer ${E2E_TOKENS.carol}` };
  const existing = (await (await request.get(`${base}/v1/conversations?limit=1`, { headers: auth })).json()).data.length;
  if (existing === 0) {
    // 10,000 creates, 32 at a time, over the real API.
    for (let start = 0; start < 10_000; start += 32) {
      await Promise.all(
        Array.from({ length: Math.min(32, 10_000 - start) }, (_, i) =>
          request.post(`${base}/v1/conversations`, { headers: auth, data: { contact_id: `bulk-${String(start + i).padStart(5, '0')}` } }),
        ),
      );
    }
  }
  await page.goto('/');
  await page.getByLabel('Access token').fill(E2E_TOKENS.carol);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expectAllSynced(page, 120_000);
  const table = page.getByRole('table', { name: 'Conversations' });
  await expect(table).toHaveAttribute('aria-rowcount', '10001');
  const rendered = await table.getByRole('row').count();
  expect(rendered).toBeLessThan(60); // only what is on screen (plus overscan)
  // Scroll to the end in steps and time the frames.
  const longest = await page.evaluate(async () => {
    const body = document.querySelector('.vtable-body')!;
    let worst = 0;
    let last = performance.now();
    for (let i = 0; i < 40; i++) {
      body.scrollTop += body.scrollHeight / 40;
      await new Promise(requestAnimationFrame);
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }
    return worst;
  });
  await expect(table.locator('[aria-rowindex="10001"]')).toBeVisible(); // the last row, reached
  console.log(`[10k] longest frame while scrolling: ${longest.toFixed(1)} ms; rows in the DOM: ${rendered}`);
  expect(longest).toBeLessThan(1000); // a sanity bound, not a speed target (see npm run bench)
});
