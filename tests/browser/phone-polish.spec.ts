// What a new user sees on a phone (and on a desktop, in the other project): dialogs whose text is
// whole, rows that read like a messaging app's, touch targets of at least 44×44 px, plain words,
// and actions whose failure is shown where the user is looking.
import { expect, test, type BrowserContext, type Locator, type Page } from '@playwright/test';
import { E2E_TOKENS } from '../../playwright.config';
import { accessibilityViolations, api, base, conversationMenuAction, conversationRow, expectAllSynced, openConversation, rowMenuAction, signIn, unique, userFor } from './helpers';

// Only so that axe can be injected (the app's CSP refuses inline scripts, as it should).
test.use({ bypassCSP: true });

/** An action's failure message (Next's route announcer is an empty role=alert too). */
const failureAlert = (page: Page) => page.getByRole('alert').filter({ hasText: /Couldn’t/ });


/** Every paragraph of the open dialog shows all its text: nothing cut off sideways, all inside the viewport. */
async function expectDialogTextWhole(page: Page, dialog: Locator) {
  await expect(dialog).toBeVisible();
  const paragraphs = await dialog.locator('p').evaluateAll((ps) => ps.map((p) => ({ text: p.textContent, scroll: p.scrollWidth, client: p.clientWidth, right: p.getBoundingClientRect().right })));
  expect(paragraphs.length).toBeGreaterThan(0);
  const viewport = page.viewportSize()!;
  for (const p of paragraphs) {
    expect(p.scroll, `cut off: ${p.text}`).toBeLessThanOrEqual(p.client);
    expect(p.right, `beyond the viewport: ${p.text}`).toBeLessThanOrEqual(viewport.width);
  }
  const box = (await dialog.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
}

/** Every visible control on the page (outside dialogs) is at least 44×44 px. */
async function expectTouchTargets(page: Page) {
  const small = await page.evaluate(() => {
    const out: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>('a[href], button, select, input:not([type=hidden]):not([type=file]):not([type=radio]), label.button')) {
      if (el.closest('dialog')) continue;
      // A checkbox inside its label: the label, which toggles it too, is the target.
      const target = el instanceof HTMLInputElement && el.type === 'checkbox' ? (el.closest('label') ?? el) : el;
      const r = target.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue; // not rendered (hidden, or a virtual row off screen)
      if (r.width < 44 || r.height < 44) out.push(`${el.tagName.toLowerCase()} "${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40)}" ${Math.round(r.width)}×${Math.round(r.height)}`);
    }
    return out;
  });
  expect(small).toEqual([]);
}

/** Holds back every request to the server (the sync worker's too) until released. */
async function holdNetwork(context: BrowserContext) {
  await context.setOffline(true);
  await context.route(`${base}/v1/**`, (route) => route.abort('internetdisconnected'));
}
async function releaseNetwork(context: BrowserContext) {
  await context.unroute(`${base}/v1/**`);
  await context.setOffline(false);
}

test('delete confirmations show all their text, in the list and in Files', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('dialog');
  const conversation = await server.createConversation(contact);
  await server.upload(conversation.id, 'discharge-letter-for-the-general-practitioner.pdf', '%PDF-1.4 letter');
  await signIn(page, info);

  // Delete is never on a row: it is in the row's menu, and asks first.
  await rowMenuAction(page, contact, 'Delete…');
  const deleteConversation = page.getByRole('dialog', { name: `Delete “${contact}”?` });
  await expect(deleteConversation.getByText('Deleting is permanent', { exact: false })).toBeVisible();
  await expectDialogTextWhole(page, deleteConversation);
  expect(await accessibilityViolations(page)).toEqual([]);
  await deleteConversation.getByRole('button', { name: 'Cancel' }).click();
  await expect(deleteConversation).toBeHidden();

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click();
  await page.getByRole('button', { name: 'Delete discharge-letter-for-the-general-practitioner.pdf' }).click();
  const deleteFile = page.getByRole('dialog', { name: /Delete “discharge-letter/ });
  await expectDialogTextWhole(page, deleteFile);
  await deleteFile.getByRole('button', { name: 'Cancel' }).click();
});

test('conversation rows: name, kind, last activity, pinned first and marked, muted and unsynced marked', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const { auth } = userFor(info);
  const stamp = unique('r');
  const longContact = `a-very-long-contact-id-for-a-patient-${stamp}`.slice(0, 64);
  const long = await server.createConversation(longContact);
  await server.upload(long.id, 'note.txt', 'note');
  const group = await request.post(`${base}/v1/conversations`, { headers: auth, data: { group_id: `ward-${stamp}` } }).then((r) => r.json());
  const pinnedContact = `pinned-${stamp}`;
  const pinned = await server.createConversation(pinnedContact);
  expect((await request.put(`${base}/v1/conversations/${pinned.id}`, { headers: auth, data: { is_pinned: true, is_muted: true } })).status()).toBe(200);

  await signIn(page, info);
  await page.getByLabel('Search').fill(stamp);
  const table = page.getByRole('table', { name: 'Conversations' });
  const rowOf = (name: string) => table.getByRole('row').filter({ has: page.getByRole('link', { name: new RegExp(name) }) });
  await expect(rowOf(pinnedContact)).toBeVisible();

  // Pinned first.
  const indexOf = async (name: string) => Number(await rowOf(name).getAttribute('aria-rowindex'));
  expect(await indexOf(pinnedContact)).toBeLessThan(await indexOf(longContact));
  expect(await indexOf(pinnedContact)).toBeLessThan(await indexOf(`ward-${stamp}`));

  // Kind and last activity, as words, at this width.
  await expect(rowOf(longContact).getByText('Contact', { exact: true })).toBeVisible();
  await expect(rowOf(`ward-${stamp}`).getByText('Group', { exact: true })).toBeVisible();
  await expect(rowOf(longContact).locator('time')).toHaveText(/^(just now|\d+ min ago)$/);
  // Pinned and muted are marked on the row itself (not only by the buttons' state).
  await expect(rowOf(pinnedContact).getByTitle('Pinned', { exact: true })).toBeVisible();
  await expect(rowOf(pinnedContact).getByTitle('Muted', { exact: true })).toBeVisible();
  await expect(rowOf(longContact).getByTitle('Pinned', { exact: true })).toHaveCount(0);
  // …and nothing in the row is cut off at its edge: every mark lies inside the name's cell.
  const cell = (await rowOf(pinnedContact).getByRole('cell').first().boundingBox())!;
  for (const mark of ['Pinned', 'Muted']) {
    const box = (await rowOf(pinnedContact).getByTitle(mark, { exact: true }).boundingBox())!;
    expect(box.x + box.width, `${mark} mark cut off`).toBeLessThanOrEqual(cell.x + cell.width);
  }

  // The long id is shown whole (wrapping, never cut), and in the link's title.
  const name = rowOf(longContact).locator('.name');
  expect(await name.evaluate((el) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight)).toBe(true);
  await expect(rowOf(longContact).getByRole('link')).toHaveAttribute('title', longContact);
  const nameBox = (await name.boundingBox())!;
  const rowBox = (await rowOf(longContact).boundingBox())!;
  expect(nameBox.x + nameBox.width).toBeLessThanOrEqual(rowBox.x + rowBox.width);

  // A change not yet sent: the row says so, and the badge is whole.
  await holdNetwork(context);
  await rowMenuAction(page, longContact, 'Mute');
  const badge = rowOf(longContact).getByText('unsynced', { exact: true });
  await expect(badge).toBeVisible();
  // Laid out as a box of its own (a flex item), and its text fits in it: never "unsy…".
  expect(await badge.evaluate((el) => el.clientWidth > 0 && el.scrollWidth <= el.clientWidth)).toBe(true);
  await expect(rowOf(longContact).getByTitle('Muted', { exact: true })).toBeVisible();
  expect(await accessibilityViolations(page)).toEqual([]);
  await releaseNetwork(context);
  await expectAllSynced(page, 45_000);
  expect((await server.get(`/v1/conversations/${long.id}`)).body.is_muted).toBe(true);
  expect(group.group_id).toBe(`ward-${stamp}`);
});

test('files: whole names (wrapping, never cut), their conversation shown, links that look like links', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('files-of');
  const conversation = await server.createConversation(contact);
  // A long name, and a camera's: a phone cut them to "discharge-…list.pdf" and "IMG_… bed3.jpg".
  const names = ['discharge-letter-for-the-general-practitioner-with-the-medication-list.pdf', `IMG_20250312_143015_${contact}_wound_left_heel_bed3.jpg`];
  for (const name of names) await server.upload(conversation.id, name, 'file of a medication-list test');
  await signIn(page, info);
  // The Files screen of this conversation (other tests of this user upload the same long name).
  await page.goto(`/?view=files&in=${conversation.id}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Files' })).toBeVisible();
  const table = page.getByRole('table', { name: 'Files' });

  for (const name of names) {
    const row = table.getByRole('row').filter({ has: page.getByRole('link', { name }) });
    const link = row.getByRole('link', { name });
    await expect(link).toBeVisible();
    // The whole name on screen: its element holds all of it and shows all of it (wrapped, not
    // ellipsised), inside the viewport.
    const shown = link.locator('.name');
    await expect(shown).toHaveText(name);
    const fit = await shown.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, overflow: getComputedStyle(el).textOverflow, right: el.getBoundingClientRect().right }));
    expect(fit.scroll, name).toBeLessThanOrEqual(fit.client);
    expect(fit.overflow).not.toBe('ellipsis');
    expect(fit.right).toBeLessThanOrEqual(page.viewportSize()!.width);
    const style = await link.evaluate((el) => ({ line: getComputedStyle(el).textDecorationLine, color: getComputedStyle(el).color, body: getComputedStyle(document.body).color }));
    expect(style.line).toContain('underline');
    expect(style.color).not.toBe(style.body);
    // Its conversation: a column on a wide screen, a line under the name on a phone.
    await expect(row.getByText(contact, { exact: true }).locator('visible=true')).toHaveCount(1);
  }
  expect(await accessibilityViolations(page)).toEqual([]);
});

test('touch targets are at least 44×44 px on every screen', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('touch');
  const conversation = await server.createConversation(contact);
  await server.upload(conversation.id, 'x.txt', 'x');
  await signIn(page, info);
  await expectTouchTargets(page);
  // The quick filters are chips a thumb can hit, on a phone as on a desktop.
  await expect(page.getByRole('group', { name: 'Show only' }).getByRole('button')).toHaveCount(5);
  await openConversation(page, contact);
  await expect(page.getByRole('link', { name: 'All files of this conversation' })).toBeVisible();
  await expectTouchTargets(page);
  await page.getByRole('link', { name: 'All files of this conversation' }).click();
  await expect(page.getByRole('heading', { name: 'Files' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Size' })).toBeVisible();
  await expectTouchTargets(page);
});

test('a new user: the empty state names the button, and the sign-in help speaks to them', async ({ page }) => {
  await page.goto('/');
  const help = page.locator('#token-help');
  await expect(help).toContainText('ask your administrator for a token');
  await expect(help).not.toContainText('npm');
  // dave is never given data: a new user's first screen.
  await page.getByLabel('Access token').fill(E2E_TOKENS.dave);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expectAllSynced(page);
  await expect(page.getByText('No conversations yet. Start one with “New conversation” above.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'New conversation', exact: true })).toBeVisible();
});

test('a refused action is shown where the user is looking', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('refused-action');
  const conversation = await server.createConversation(contact);
  await server.upload(conversation.id, 'lab.txt', 'lab');
  await signIn(page, info);

  // A device whose clock is far off (past the year 9999): the client refuses the archive time it
  // would send, as the server would. The refusal must reach the user, on the row they tapped.
  await page.clock.setFixedTime(new Date('+010000-01-01T00:00:00Z'));
  await rowMenuAction(page, contact, 'Archive');
  const toast = failureAlert(page);
  await expect(toast).toContainText(`Couldn’t archive “${contact}”:`);
  await expect(toast).toBeInViewport();
  // Not archived: still in the list (which leaves archived ones out), not marked.
  await expect(conversationRow(page, contact)).toBeVisible();
  await expect(conversationRow(page, contact).getByText('archived', { exact: true })).toHaveCount(0);
  expect(await accessibilityViolations(page)).toEqual([]);
  await toast.getByRole('button', { name: 'Dismiss' }).click();
  await expect(toast).toHaveCount(0);
  // The same from the conversation's page, and from the delete dialog's "Archive instead".
  await openConversation(page, contact);
  await page.getByRole('button', { name: 'Archive', exact: true }).click();
  await expect(failureAlert(page)).toContainText(`Couldn’t archive “${contact}”:`);
  await expect(failureAlert(page)).toBeInViewport();
  await conversationMenuAction(page, 'Delete…');
  await page.getByRole('button', { name: 'Archive instead' }).click();
  await expect(failureAlert(page)).toContainText(`Couldn’t archive “${contact}”:`);
  await expect(page.getByRole('button', { name: 'Archive', exact: true })).toBeVisible();

  // A rename to a name the server would refuse: said in the dialog, in plain words.
  await page.getByRole('button', { name: 'Rename lab.txt' }).click();
  await page.getByLabel('New name').fill('lab\u0000.txt');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  const alert = page.getByRole('dialog', { name: 'Rename file' }).getByRole('alert');
  await expect(alert).toHaveText('A file name can’t contain / or \\, nor hidden characters that change how the name looks.');
  await expect(alert).not.toContainText('NUL');
  await expectDialogTextWhole(page, page.getByRole('dialog', { name: 'Rename file' }));
});

test('pinning the message of a file still waiting to upload: it lands once the upload is sent', async ({ page, context, request }, info) => {
  const server = await api(request, info);
  const contact = unique('pin-queued');
  const conversation = await server.createConversation(contact);
  await signIn(page, info);
  await openConversation(page, contact);

  await holdNetwork(context);
  await page.getByLabel('Upload files').setInputFiles({ name: 'wound-photo.txt', mimeType: 'text/plain', buffer: Buffer.from('photo') });
  const pin = page.getByRole('button', { name: 'Pin the message of wound-photo.txt' });
  await pin.click();
  await expect(page.getByRole('button', { name: 'Unpin the message of wound-photo.txt' })).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByText('Pinned message: wound-photo.txt')).toBeVisible();
  await expect(failureAlert(page)).toHaveCount(0);
  expect((await server.get(`/v1/conversations/${conversation.id}`)).body.pinned_message_id).toBeNull();

  await releaseNetwork(context);
  await expectAllSynced(page, 45_000);
  const files = (await server.get(`/v1/files?conversation_id=${conversation.id}`)).body.data;
  expect(files).toHaveLength(1);
  expect((await server.get(`/v1/conversations/${conversation.id}`)).body.pinned_message_id).toBe(files[0].message_id);
  await expect(page.getByText('Pinned message: wound-photo.txt')).toBeVisible();
});

test('accessibility details: a chip is named by its label alone; the Device screen’s checkbox is one a finger can hit', async ({ page }, info) => {
  await signIn(page, info);
  const pinned = page.getByRole('group', { name: 'Show only' }).getByRole('button', { name: 'Pinned', exact: true });
  await expect(pinned).toHaveAttribute('aria-pressed', 'false');
  await pinned.click();
  // Selected: a check mark for the eye, while a screen reader hears "Pinned, pressed" (not "check mark Pinned").
  await expect(pinned).toHaveAttribute('aria-pressed', 'true');
  await expect(pinned).toHaveAccessibleName('Pinned');
  await expect(pinned).toContainText('✓');
  expect(await accessibilityViolations(page)).toEqual([]);
  await pinned.click();
  await expect(pinned).toHaveAttribute('aria-pressed', 'false');
  await expect(pinned).not.toContainText('✓');

  // The Device screen's checkbox: a 24 px box, and its label (which toggles it too) a 44 px target.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Device' }).click();
  const box = page.getByRole('checkbox', { name: /Keep pinned conversations offline/ });
  await expect(box).toBeChecked();
  const size = (await box.boundingBox())!;
  expect(size.width).toBeGreaterThanOrEqual(24);
  expect(size.height).toBeGreaterThanOrEqual(24);
  const label = page.locator('label').filter({ has: box });
  const target = (await label.boundingBox())!;
  expect(target.height).toBeGreaterThanOrEqual(44);
  // A tap on the label's words, beside the box, toggles it.
  await label.click({ position: { x: target.width - 8, y: target.height / 2 } });
  await expect(box).not.toBeChecked();
  await label.click({ position: { x: target.width - 8, y: target.height / 2 } });
  await expect(box).toBeChecked();
  expect(await accessibilityViolations(page)).toEqual([]);
});

test('a row’s name is underlined under a mouse, where there is one to hover', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('hovered');
  await server.createConversation(contact);
  await signIn(page, info);
  await page.getByLabel('Search').fill(contact);
  const link = conversationRow(page, contact).getByRole('link');
  await link.hover();
  // The phone has no hover (a touch screen): no hover style at all.
  await expect(link.locator('.name')).toHaveCSS('text-decoration-line', info.project.name === 'phone' ? 'none' : 'underline');
});

test.describe('by touch', () => {
  // The phone has a touch screen; so, here, does the desktop (a touch-screen laptop).
  test.use({ hasTouch: true });

  test('a tapped row keeps no hover underline where nothing hovers', async ({ page, request }, info) => {
    const server = await api(request, info);
    const contact = unique('tapped');
    await server.createConversation(contact);
    await signIn(page, info);
    await page.getByLabel('Search').fill(contact);
    const link = conversationRow(page, contact).getByRole('link');
    await expect(link).toBeVisible();
    // The tap's click is held back (first, in the capture phase), so the list stays on screen.
    await page.evaluate(() =>
      window.addEventListener(
        'click',
        (e) => {
          e.preventDefault();
          e.stopImmediatePropagation();
        },
        { capture: true, once: true },
      ),
    );
    await link.tap();
    // A phone's browser leaves :hover on what a finger touched; Chromium here does not after the
    // protocol's tap, so the DevTools protocol sets it, as they do.
    await link.evaluate((a) => a.setAttribute('data-touched', ''));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('DOM.enable');
    await cdp.send('CSS.enable');
    const { root } = await cdp.send('DOM.getDocument', { depth: 0 });
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '[data-touched]' });
    await cdp.send('CSS.forcePseudoState', { nodeId, forcedPseudoClasses: ['hover'] });
    expect(await link.evaluate((a) => a.matches(':hover'))).toBe(true);
    // Where the primary pointer cannot hover (the phone: a touch screen), no hover style applies;
    // a touch-screen laptop with a mouse is a device that hovers.
    const hovers = await page.evaluate(() => matchMedia('(hover: hover)').matches);
    if (info.project.name === 'phone') expect(hovers).toBe(false);
    await expect(link.locator('.name')).toHaveCSS('text-decoration-line', hovers ? 'underline' : 'none');
    await cdp.detach();
  });
});
