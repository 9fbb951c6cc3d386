// The lists a clinician uses all day (issue 21), at 390×844 (phone) and 1280×800 (desktop): the
// header folding away on a phone, names shown whole, quick filter chips and named orders, pull to
// refresh, "N of M files", a failed badge the size of its word; axe clean throughout.
import { expect, test, type Page } from '@playwright/test';
import { accessibilityViolations, api, appOrigin, expectAllSynced, openConversation, screenshot, signIn, unique, userFor } from './helpers';
import { rowsInView } from './panes';

// Only so that axe can be injected (the app's CSP refuses inline scripts, as it should).
test.use({ bypassCSP: true });

const rows = (page: Page) => page.getByRole('table', { name: 'Conversations' }).locator('.vtable-body [role=row][data-index]');

/** The names of the rows on screen, in order. */
async function namesInOrder(page: Page): Promise<string[]> {
  return rows(page).locator('.name').allTextContents();
}

async function search(page: Page, text: string) {
  await page.getByLabel('Search').fill(text);
}

async function createGroup(page: Page, info: Parameters<typeof userFor>[0], group_id: string) {
  const r = await page.request.post(`${appOrigin()}/v1/conversations`, { headers: userFor(info).auth, data: { group_id } });
  expect(r.status()).toBe(201);
  return r.json();
}

test('the header folds away while scrolling down on a phone (≥ 12 rows in view) and comes back scrolling up; never on a desktop', async ({ page, request }, info) => {
  const server = await api(request, info);
  const prefix = unique('fold');
  for (let i = 0; i < 30; i++) await server.createConversation(`${prefix}-${String(i).padStart(2, '0')}`);
  await signIn(page, info);
  await search(page, prefix);
  await expect(rows(page)).not.toHaveCount(0);
  const searchBox = page.getByLabel('Search');
  const body = page.locator('.vtable-body');
  const before = await rowsInView(page);

  await body.evaluate((el) => el.scrollBy(0, 200));
  if (info.project.name === 'phone') {
    await expect(searchBox).toBeHidden();
    await expect(page.getByRole('heading', { name: 'Conversations' })).toBeHidden();
    await expect.poll(() => rowsInView(page)).toBeGreaterThanOrEqual(12);
    expect(await rowsInView(page)).toBeGreaterThan(before);
    // The status and the navigation stay.
    await expect(page.getByTestId('sync-status')).toBeInViewport();
    await screenshot(page, info, 'list-folded');
    // Back up a little: the header returns.
    await body.evaluate((el) => el.scrollBy(0, -80));
    await expect(searchBox).toBeVisible();
    await expect(searchBox).toHaveValue(prefix);
  } else {
    // A wide screen has room: the header never folds.
    await expect(body).toHaveJSProperty('scrollTop', 200);
    await expect(searchBox).toBeVisible();
  }
  expect(await accessibilityViolations(page)).toEqual([]);
});

test('a long name shows whole, on as many lines as it needs, and rows never overlap', async ({ page, request }, info) => {
  const server = await api(request, info);
  const stamp = unique('whole');
  const longName = `${stamp}-discharge-planning-cardiology-7`;
  const long = await server.createConversation(longName);
  const short = await server.createConversation(`${stamp}-short`);
  await signIn(page, info);
  await search(page, stamp);
  await expect(rows(page)).toHaveCount(2);
  const name = rows(page).locator('.name', { hasText: longName });
  await expect(name).toHaveText(longName);
  const fit = await name.evaluate((el) => {
    const row = el.closest('[role=row]')!.getBoundingClientRect();
    const box = el.getBoundingClientRect();
    return { cutSideways: el.scrollWidth > el.clientWidth, cutDown: el.scrollHeight > el.clientHeight, inRow: box.top >= row.top && box.bottom <= row.bottom, lines: Math.round(box.height / parseFloat(getComputedStyle(el).lineHeight)) };
  });
  expect(fit.cutSideways).toBe(false);
  expect(fit.cutDown).toBe(false);
  expect(fit.inRow).toBe(true);
  // Too long for one line at 390 px; one line on a desktop.
  if (info.project.name === 'phone') expect(fit.lines).toBeGreaterThanOrEqual(2);
  // Each row is measured once laid out (ResizeObserver), then placed: the next row starts below it.
  const gap = () => rows(page).evaluateAll((els) => {
    const boxes = els.map((e) => e.getBoundingClientRect()).sort((a, b) => a.top - b.top);
    return boxes[1]!.top - boxes[0]!.bottom;
  });
  await expect.poll(gap).toBeGreaterThanOrEqual(-0.5);
  // The two swap places, and back (the second is pinned elsewhere, so it comes first; then
  // unpinned): each row keeps its own height, so neither ever overlaps the other.
  const [first, second] = await namesInOrder(page);
  const moved = second === longName ? long : short;
  for (const [is_pinned, top] of [[true, second], [false, first]] as const) {
    expect((await page.request.put(`${appOrigin()}/v1/conversations/${moved.id}`, { headers: userFor(info).auth, data: { is_pinned } })).status()).toBe(200);
    await expect.poll(async () => (await namesInOrder(page))[0]).toBe(top);
    await expect.poll(gap).toBeGreaterThanOrEqual(-0.5);
  }
  expect(await accessibilityViolations(page)).toEqual([]);
});

test('quick filter chips and named orders', async ({ page, request }, info) => {
  const server = await api(request, info);
  const stamp = unique('chips');
  const [alpha, bravo, charlie] = [`${stamp}-alpha`, `${stamp}-bravo`, `${stamp}-charlie`];
  const a = await server.createConversation(alpha);
  await server.createConversation(bravo);
  const c = await server.createConversation(charlie);
  await createGroup(page, info, `${stamp}-ward`);
  const { auth } = userFor(info);
  expect((await page.request.put(`${appOrigin()}/v1/conversations/${a.id}`, { headers: auth, data: { is_pinned: true } })).status()).toBe(200);
  expect((await page.request.put(`${appOrigin()}/v1/conversations/${c.id}`, { headers: auth, data: { is_muted: true, archived_at: Math.floor(Date.now() / 1000) } })).status()).toBe(200);
  await signIn(page, info);
  await search(page, stamp);
  // Archived ones are hidden by default; pinned first, then the most recently active (the other
  // two were made in the same second, or not: their order is not asserted).
  await expect.poll(() => namesInOrder(page).then(([first, ...rest]) => [first, rest.sort()])).toEqual([alpha, [bravo, `${stamp}-ward`]]);

  const chip = (name: string) => page.getByRole('group', { name: 'Show only' }).getByRole('button', { name });
  await expect(chip('Pinned')).toHaveAttribute('aria-pressed', 'false');
  await chip('Pinned').click();
  await expect(chip('Pinned')).toHaveAttribute('aria-pressed', 'true');
  await expect.poll(() => namesInOrder(page)).toEqual([alpha]);
  await chip('Pinned').click();
  await chip('Groups').click();
  await expect.poll(() => namesInOrder(page)).toEqual([`${stamp}-ward`]);
  // Groups and Contacts exclude each other.
  await chip('Contacts').click();
  await expect(chip('Groups')).toHaveAttribute('aria-pressed', 'false');
  await expect.poll(() => namesInOrder(page)).toEqual([alpha, bravo]);
  await chip('Contacts').click();
  await chip('Archived').click();
  await expect.poll(() => namesInOrder(page)).toEqual([charlie]);
  await chip('Muted').click();
  await expect.poll(() => namesInOrder(page)).toEqual([charlie]);
  expect(await accessibilityViolations(page)).toEqual([]);
  await chip('Archived').click();
  await expect(page.getByText(/No conversation matches/)).toBeVisible();
  await chip('Muted').click();

  // By name; then by what was opened last.
  const order = page.getByLabel('Sort by');
  await expect(order).toHaveValue('activity');
  await order.selectOption({ label: 'Name' });
  await expect.poll(() => namesInOrder(page)).toEqual([alpha, bravo, `${stamp}-ward`]);
  await openConversation(page, bravo);
  await page.goBack();
  await search(page, stamp);
  await order.selectOption({ label: 'Recently opened' });
  await expect.poll(() => namesInOrder(page).then((n) => n[0])).toBe(bravo);
  if (info.project.name === 'desktop') {
    // Beside a conversation (two panes at 1280 px) the list has no column header: the Sort select
    // orders it. Where the list has the screen's width to itself, the column headers set the same
    // order; a column's order is named as such.
    await expect(page.getByRole('columnheader')).toHaveCount(0);
    await page.setViewportSize({ width: 900, height: 800 });
    await expect(page.getByRole('columnheader')).toHaveText([/Contact or group/, /Last active/, /Last opened/, /Created/, 'Actions']);
    await page.getByRole('button', { name: 'Created' }).click();
    await expect(order).toHaveValue('column');
  }
  await screenshot(page, info, 'list-chips');
});

test('Files says how many files it shows of how many', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('counted');
  const conversation = await server.createConversation(contact);
  const marker = unique('scan');
  await server.upload(conversation.id, `${marker}-a.txt`, 'a');
  await server.upload(conversation.id, `${marker}-b.txt`, 'b');
  await server.upload(conversation.id, 'other.txt', 'c');
  await signIn(page, info);
  await page.getByRole('link', { name: 'Files', exact: true }).click();
  const count = page.getByTestId('file-count');
  await expect(count).toHaveText(/^[\d,]+ files$/);
  const all = Number((await count.textContent())!.replace(/\D/g, ''));
  expect(all).toBeGreaterThanOrEqual(3);
  await page.getByRole('searchbox', { name: 'Name' }).fill(marker);
  await expect(count).toHaveText(`2 of ${all.toLocaleString('en-US')} files`);
});

test('a failed change: its row keeps its columns, its badge is as wide as its word', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('badge');
  const conversation = await server.createConversation(contact);
  const file = await server.upload(conversation.id, 'badge-report.txt', 'report');
  await signIn(page, info);
  await openConversation(page, contact);
  await context.setOffline(true);
  await page.getByRole('button', { name: 'Rename badge-report.txt' }).click();
  await page.getByLabel('New name').fill('badge-final.txt');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  expect(await server.del(`/v1/files/${file.id}`)).toBe(204);
  await context.setOffline(false);
  await expect(page.getByRole('button', { name: /1 failed/ })).toBeVisible({ timeout: 45_000 });
  await page.getByRole('link', { name: 'Files', exact: true }).click();
  await page.getByRole('searchbox', { name: 'Name' }).fill('badge-final');
  const badge = page.locator('.vtable-body .mark.failed');
  await expect(badge).toHaveText('failed');
  const widths = await badge.evaluate((el) => ({ badge: el.getBoundingClientRect().width, cell: el.closest('[role=cell]')!.getBoundingClientRect().width, font: parseFloat(getComputedStyle(el).fontSize) }));
  // "failed" at 0.75rem is ~4 em wide with its padding; never stretched across the cell.
  expect(widths.badge).toBeLessThan(widths.font * 6);
  expect(widths.badge).toBeLessThan(widths.cell / 2);
  // The row marked failed keeps its columns side by side (a .failed style once made it a column).
  const cells = await page.locator('.vtable-body [role=row].failed [role=cell]').evaluateAll((els) => els.map((c) => c.getBoundingClientRect()).map((r) => ({ left: r.left, right: r.right })));
  expect(cells.length).toBeGreaterThan(1);
  for (let i = 1; i < cells.length; i++) expect(cells[i]!.left).toBeGreaterThanOrEqual(cells[i - 1]!.right);
  await screenshot(page, info, 'failed-badge');
  // Discarded, so the user's later tests start from a clean outbox.
  await page.getByRole('button', { name: /1 failed/ }).click();
  await page.getByRole('dialog', { name: 'Changes the server refused' }).getByRole('button', { name: 'Discard' }).click();
  await expectAllSynced(page);
});
