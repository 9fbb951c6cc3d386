// Row actions on the conversations list (issue 21): a row's menu ("More actions", or a long press)
// with delete only there and always confirmed; swipes by touch (left archives, right pins); and an
// Undo in the snackbar that sends the inverse change through the outbox like any other.
import { expect, test, type Locator, type Page } from '@playwright/test';
import { accessibilityViolations, api, conversationRow, expectAllSynced, rowMenuAction, signIn, unique } from './helpers';

// Only so that axe can be injected (the app's CSP refuses inline scripts, as it should).
test.use({ bypassCSP: true });

/** The snackbar with its Undo (Next's route announcer and the sync pill are other live regions). */
const snackbar = (page: Page) => page.getByRole('status').filter({ has: page.getByRole('button', { name: 'Undo' }) });
const pinnedMark = (row: Locator) => row.getByTitle('Pinned', { exact: true });
const mutedMark = (row: Locator) => row.getByTitle('Muted', { exact: true });

async function listOf(page: Page, search: string) {
  await page.getByLabel('Search').fill(search);
}

/** Every button of the open dialog is at least 44 px tall (and as wide). */
async function expectTallButtons(dialog: Locator) {
  const boxes = await dialog.getByRole('button').evaluateAll((buttons) => buttons.map((b) => ({ name: b.textContent, ...b.getBoundingClientRect().toJSON() })));
  expect(boxes.length).toBeGreaterThan(0);
  for (const box of boxes) expect(box.height >= 44 && box.width >= 44, `${box.name}: ${box.width}×${box.height}`).toBe(true);
}

/**
 * A finger on a row's content, through the DevTools protocol: real touch input, which Chromium turns
 * into pointer events (pointerType 'touch') subject to the element's touch-action.
 */
async function touchOn(page: Page, row: Locator, { from }: { from: 'left' | 'right' }) {
  const box = (await row.getByRole('link').boundingBox())!;
  const start = { x: from === 'left' ? box.x + 16 : box.x + box.width - 16, y: box.y + box.height / 2 };
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [start] });
  let at = start;
  return {
    /** Moves by `dx`, `dy` in small steps, as a finger does. */
    async move(dx: number, dy = 0) {
      const steps = 8;
      const from = at;
      for (let i = 1; i <= steps; i++) {
        at = { x: from.x + (dx * i) / steps, y: from.y + (dy * i) / steps };
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [at] });
      }
    },
    async lift() {
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
      await cdp.detach();
    },
  };
}

async function swipe(page: Page, row: Locator, dx: number) {
  const finger = await touchOn(page, row, { from: dx < 0 ? 'right' : 'left' });
  await finger.move(dx);
  await finger.lift();
}

test('the row menu: pin and mute from it, delete only from it and only once confirmed', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('menu');
  const conversation = await server.createConversation(contact);
  await signIn(page, info);
  await listOf(page, contact);
  const row = conversationRow(page, contact);
  await expect(row).toBeVisible();

  // No delete on any row; on a phone the row's one button is "More actions", on a desktop pin,
  // mute and archive stay at hand beside it.
  const table = page.getByRole('table', { name: 'Conversations' });
  await expect(table.getByRole('button', { name: /delete/i })).toHaveCount(0);
  const buttons = await row.getByRole('button').evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-label')));
  expect(buttons).toEqual(info.project.name === 'phone' ? [`More actions for ${contact}`] : [`Pin ${contact}`, `Mute ${contact}`, `Archive ${contact}`, `More actions for ${contact}`]);
  const more = row.getByRole('button', { name: `More actions for ${contact}` });
  const moreBox = (await more.boundingBox())!;
  expect(moreBox.width).toBeGreaterThanOrEqual(44);
  expect(moreBox.height).toBeGreaterThanOrEqual(44);

  // The menu: titled with the conversation's name, every choice 44 px tall, axe clean.
  await more.click();
  const menu = page.getByRole('dialog', { name: contact });
  await expect(menu.getByRole('button')).toHaveText(['Pin', 'Mute', 'Archive', 'Delete…', 'Cancel']);
  await expectTallButtons(menu);
  expect(await accessibilityViolations(page)).toEqual([]);
  await menu.getByRole('button', { name: 'Cancel' }).click();
  await expect(menu).toBeHidden();

  await rowMenuAction(page, contact, 'Pin');
  await expect(pinnedMark(row)).toBeVisible();
  await expect(snackbar(page)).toContainText(`Pinned ‘${contact}’`);
  // The menu key's contextmenu (and Chromium's for a long press) opens the same menu, which now offers Unpin.
  await row.getByRole('link').dispatchEvent('contextmenu');
  await expect(menu.getByRole('button')).toHaveText(['Unpin', 'Mute', 'Archive', 'Delete…', 'Cancel']);
  await menu.getByRole('button', { name: 'Mute', exact: true }).click();
  await expect(mutedMark(row)).toBeVisible();
  // One snackbar: the new action's replaces the last.
  await expect(snackbar(page)).toHaveCount(1);
  await expect(snackbar(page)).toContainText(`Muted ‘${contact}’`);
  await expect(snackbar(page)).toBeInViewport();
  expect(await accessibilityViolations(page)).toEqual([]);
  await expectAllSynced(page);
  expect((await server.get(`/v1/conversations/${conversation.id}`)).body).toMatchObject({ is_pinned: true, is_muted: true });

  // Delete…: asks first; Cancel keeps it.
  await rowMenuAction(page, contact, 'Delete…');
  const confirm = page.getByRole('dialog', { name: `Delete “${contact}”?` });
  await expect(confirm).toContainText('Deleting is permanent');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(confirm).toBeHidden();
  await expect(row).toBeVisible();
  await expectAllSynced(page);
  expect((await server.get(`/v1/conversations/${conversation.id}`)).status).toBe(200);
  // …and only once confirmed is it gone.
  await rowMenuAction(page, contact, 'Delete…');
  await confirm.getByRole('button', { name: 'Delete permanently' }).click();
  await expect(row).toHaveCount(0);
  await expectAllSynced(page);
  expect((await server.get(`/v1/conversations/${conversation.id}`)).status).toBe(404);
});

test('Undo after a pin from the row (its button on a desktop, its menu on a phone) sends the values before', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('undo-pin');
  const conversation = await server.createConversation(contact);
  await signIn(page, info);
  await listOf(page, contact);
  const row = conversationRow(page, contact);
  if (info.project.name === 'phone') await rowMenuAction(page, contact, 'Pin');
  else await row.getByRole('button', { name: `Pin ${contact}` }).click();
  await expect(pinnedMark(row)).toBeVisible();
  await expect(snackbar(page)).toContainText(`Pinned ‘${contact}’`);
  const undo = snackbar(page).getByRole('button', { name: 'Undo' });
  expect((await undo.boundingBox())!.height).toBeGreaterThanOrEqual(44);
  await undo.click();
  await expect(snackbar(page)).toHaveCount(0);
  await expect(pinnedMark(row)).toHaveCount(0);
  if (info.project.name !== 'phone') await expect(row.getByRole('button', { name: `Pin ${contact}` })).toHaveAttribute('aria-pressed', 'false');
  await expectAllSynced(page);
  expect((await server.get(`/v1/conversations/${conversation.id}`)).body.is_pinned).toBe(false);
});

test('the snackbar goes after about 6 s, but not while it is pointed at', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('undo-time');
  await server.createConversation(contact);
  await page.clock.install();
  await signIn(page, info);
  await listOf(page, contact);
  const act = (label: 'Mute' | 'Unmute') =>
    info.project.name === 'phone' ? rowMenuAction(page, contact, label) : conversationRow(page, contact).getByRole('button', { name: `${label} ${contact}` }).click();
  await act('Mute');
  await expect(snackbar(page)).toContainText(`Muted ‘${contact}’`);
  await page.clock.runFor(4_000);
  await expect(snackbar(page)).toHaveCount(1);
  await page.clock.runFor(2_500);
  await expect(snackbar(page)).toHaveCount(0);
  // Pointed at, it stays (time to reach it); let go, its 6 s start again.
  await act('Unmute');
  await expect(snackbar(page)).toContainText(`Unmuted ‘${contact}’`);
  await snackbar(page).hover();
  await page.clock.runFor(10_000);
  await expect(snackbar(page)).toHaveCount(1);
  await page.mouse.move(0, 0);
  await page.clock.runFor(6_500);
  await expect(snackbar(page)).toHaveCount(0);
  await expectAllSynced(page);
});

test.describe('by touch', () => {
  // The phone has a touch screen; so, here, does the desktop (a touch-screen laptop swipes too).
  test.use({ hasTouch: true });

  test('swipe left archives (Undo brings it back), swipe right pins, a short swipe does nothing', async ({ page, request }, info) => {
    const server = await api(request, info);
    const stamp = unique('swipe');
    const [archived, pinned] = [`${stamp}-a`, `${stamp}-b`];
    const toArchive = await server.createConversation(archived);
    const toPin = await server.createConversation(pinned);
    await signIn(page, info);
    await listOf(page, stamp);
    const listUrl = page.url();
    const archivedRow = conversationRow(page, archived);
    const pinnedRow = conversationRow(page, pinned);
    await expect(archivedRow).toBeVisible();
    await expect(pinnedRow).toBeVisible();

    // The content follows the finger over the action it would take.
    const finger = await touchOn(page, archivedRow, { from: 'right' });
    await finger.move(-60);
    await expect(archivedRow.getByText('Archive', { exact: true })).toBeVisible();
    expect(await archivedRow.getByRole('link').evaluate((a) => new DOMMatrix(getComputedStyle(a).transform).m41)).toBeLessThan(-40);
    await finger.move(-100);
    await finger.lift();
    // Released past the threshold: archived, so it leaves the list (which leaves archived ones out).
    await expect(archivedRow).toHaveCount(0);
    await expect(snackbar(page)).toContainText(`Archived ‘${archived}’`);
    expect(page.url()).toBe(listUrl); // the link under the finger did not open
    expect(await accessibilityViolations(page)).toEqual([]);
    await snackbar(page).getByRole('button', { name: 'Undo' }).click();
    await expect(archivedRow).toBeVisible();
    await expect(archivedRow.getByRole('link')).toHaveCSS('transform', 'none'); // sprung back
    await expectAllSynced(page);
    expect((await server.get(`/v1/conversations/${toArchive.id}`)).body.archived_at).toBeNull();

    // Right: pinned.
    await swipe(page, pinnedRow, 160);
    await expect(pinnedMark(pinnedRow)).toBeVisible();
    await expect(snackbar(page)).toContainText(`Pinned ‘${pinned}’`);

    // Short of the threshold: nothing, and the conversation does not open. (The swipe after it
    // shows that its events were all handled: had the short one done anything, it came first.)
    await swipe(page, pinnedRow, -50);
    await swipe(page, archivedRow, 160);
    await expect(pinnedMark(archivedRow)).toBeVisible();
    expect(page.url()).toBe(listUrl);
    await expect(page.getByRole('heading', { level: 1, name: 'Conversations' })).toBeVisible();
    await expect(pinnedRow).toBeVisible();
    await expect(pinnedRow.getByText('archived', { exact: true })).toHaveCount(0);
    await expectAllSynced(page);
    expect((await server.get(`/v1/conversations/${toPin.id}`)).body).toMatchObject({ is_pinned: true, archived_at: null });

    // A vertical move is the list's scroll, not a swipe: the browser takes it (pointercancel) and the row stays put.
    const scroll = await touchOn(page, pinnedRow, { from: 'left' });
    await scroll.move(4, -80);
    await scroll.lift();
    await expect(pinnedRow.getByRole('link')).toHaveCSS('transform', 'none');
    await expect(pinnedRow.getByText('archived', { exact: true })).toHaveCount(0);
  });

  /** iOS Safari fires no contextmenu on a link: here none reaches the app either (stopped first, on the window). */
  const withoutContextMenu = (page: Page) => page.addInitScript(() => window.addEventListener('contextmenu', (e) => e.stopImmediatePropagation(), { capture: true }));

  test('a long press opens the row menu, not the conversation, with no contextmenu event', async ({ page, request }, info) => {
    await withoutContextMenu(page);
    const server = await api(request, info);
    const contact = unique('hold');
    const conversation = await server.createConversation(contact);
    await signIn(page, info);
    await listOf(page, contact);
    const listUrl = page.url();
    const row = conversationRow(page, contact);
    await expect(row).toBeVisible();
    // As in the next test: the first sync over (its progress line gone) before the finger lands, or
    // the row may move between reading where it is and the touch (ci60 found no menu after the hold).
    await expectAllSynced(page);
    const menu = page.getByRole('dialog', { name: contact });

    // A finger held still on the row, until the menu shows (a long press is a time: the hold lasts
    // as long as the app takes to open the menu), then lifted.
    const finger = await touchOn(page, row, { from: 'left' });
    await expect(menu).toBeVisible();
    await finger.lift();
    await expect(menu.getByRole('button')).toHaveText(['Pin', 'Mute', 'Archive', 'Delete…', 'Cancel']);
    expect(page.url()).toBe(listUrl); // the link under the finger did not open
    await expectTallButtons(menu);
    expect(await accessibilityViolations(page)).toEqual([]);
    await menu.getByRole('button', { name: 'Mute', exact: true }).click();
    await expect(mutedMark(row)).toBeVisible();
    await expect(menu).toBeHidden();

    // Swipes still swipe, and a tap still opens the conversation.
    await swipe(page, row, 160);
    await expect(pinnedMark(row)).toBeVisible();
    await expectAllSynced(page);
    expect((await server.get(`/v1/conversations/${conversation.id}`)).body).toMatchObject({ is_pinned: true, is_muted: true });
    await row.getByRole('link').tap();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  });

  test('a long press is a finger held still: one that moves is not one, however long it stays (the page’s clock held)', async ({ page, request }, info) => {
    await withoutContextMenu(page);
    const server = await api(request, info);
    const contact = unique('hold-moved');
    await server.createConversation(contact);
    await page.clock.install();
    await signIn(page, info);
    await listOf(page, contact);
    const row = conversationRow(page, contact);
    await expect(row).toBeVisible();
    // The first sync over (its progress line gone) before the finger lands: nothing moves the row
    // from under a finger held still (ci50 once found no menu after the hold, on a loaded machine).
    await expectAllSynced(page);
    const menu = page.getByRole('dialog', { name: contact });
    // From here the page's time moves only when told (runFor): a hold lasts exactly that long.
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1_000);

    // Still, for longer than a long press: the menu; released at once (in real time, a tap to the
    // browser), its click does not open the conversation.
    const still = await touchOn(page, row, { from: 'left' });
    await page.clock.runFor(1_000);
    await expect(menu).toBeVisible();
    await still.lift();
    // ci63 once found the menu gone here (not reproduced in 110 runs since, under load): if it
    // happens again, the failure says where the page was (a conversation opened by the release's
    // click, or the list still there with its menu closed).
    await expect(menu).toBeVisible().catch(async (error: Error) => {
      const where = await page.evaluate(() => ({ url: location.href, h1: document.querySelector('h1')?.textContent, dialogs: [...document.querySelectorAll('dialog')].map((d) => `${d.open}:${d.textContent?.slice(0, 40)}`) }));
      throw new Error(`${error.message}\nthe page after the release: ${JSON.stringify(where)}`);
    });
    await expect(page.getByRole('heading', { level: 1, name: 'Conversations' })).toBeVisible();
    await menu.getByRole('button', { name: 'Cancel' }).click();
    await expect(menu).toBeHidden();

    // Moved past the slop (short of a swipe that acts), then held as long: no menu. The tap after
    // it opens the conversation, which an open menu (a modal) would have stood in the way of.
    const moved = await touchOn(page, row, { from: 'left' });
    await moved.move(24);
    await page.clock.runFor(2_000);
    await moved.lift();
    await expect(menu).toBeHidden();
    await page.clock.resume(); // the conversation's screen loads in the page's own time
    await row.getByRole('link').tap();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  });

  test('a tap still opens the conversation', async ({ page, request }, info) => {
    const server = await api(request, info);
    const contact = unique('tap');
    await server.createConversation(contact);
    await signIn(page, info);
    await listOf(page, contact);
    await conversationRow(page, contact).getByRole('link').tap();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  });
});
