// A conversation's page puts its files first (issue 32 item 8): its actions in one compact bar, the
// permanent delete in "More actions" away from Mute, a pinned message that takes you to its file,
// each file's type in words, and the first file row within the first third of the screen. At both
// sizes (on a desktop the conversation is the pane beside the list); element boxes against the viewport.
import { expect, test, type Locator } from '@playwright/test';
import { accessibilityViolations, api, base, honouringRetryAfter, openConversation, signIn, unique, userFor } from './helpers';

// Only so that axe can be injected (the app's CSP refuses inline scripts, as it should).
test.use({ bypassCSP: true });

type Box = { x: number; y: number; width: number; height: number };
const boxOf = async (locator: Locator): Promise<Box> => {
  const box = await locator.boundingBox();
  expect(box, 'rendered').not.toBeNull();
  return box ?? { x: 0, y: 0, width: 0, height: 0 };
};
/** The shortest distance between two boxes (0 when they touch or overlap). */
const gapBetween = (a: Box, b: Box) => Math.hypot(Math.max(0, b.x - (a.x + a.width), a.x - (b.x + b.width)), Math.max(0, b.y - (a.y + a.height), a.y - (b.y + b.height)));

test('a conversation shows its files first: one bar of actions, Delete away from Mute, a pinned message that shows its file, types in words', async ({ page, request }, info) => {
  const server = await api(request, info);
  const contact = unique('content-first');
  const conversation = await server.createConversation(contact);
  const add = async (name: string, mimeType: string, body: string) => {
    const r = await honouringRetryAfter(() =>
      request.post(`${base}/v1/files`, { headers: userFor(info).auth, multipart: { conversation_id: conversation.id, file: { name, mimeType, buffer: Buffer.from(body) } } }),
    );
    expect(r.status()).toBe(201);
  };
  await add('renal.hl7', 'x-application/hl7-v2+er7', 'MSH|^~\\&|LAB|ST MARY|||202401021200||ORU^R01|1|P|2.5\r');
  await add('potassium.json', 'application/fhir+json', '{"resourceType":"Observation","status":"final"}');
  await add('referral.pdf', 'application/pdf', '%PDF-1.4 referral');
  await add('wound.jpg', 'image/jpeg', 'not really a jpeg');
  for (let i = 1; i <= 12; i++) await server.upload(conversation.id, `ward-note-${i}.txt`, `note ${i}`);

  await signIn(page, info);
  await openConversation(page, contact);
  const rows = page.getByRole('list', { name: 'Files' }).getByRole('listitem');
  await expect(rows).toHaveCount(16);

  // Types in words, never the raw media type.
  const metaOf = (name: string) => rows.filter({ has: page.getByRole('link', { name, exact: true }) }).locator('.file-meta');
  await expect(metaOf('renal.hl7')).toHaveText(/^HL7 v2 message · /);
  await expect(metaOf('potassium.json')).toHaveText(/^FHIR resource · /);
  await expect(metaOf('referral.pdf')).toHaveText(/^PDF · /);
  await expect(metaOf('wound.jpg')).toHaveText(/^JPEG image · /);
  await expect(page.getByText('x-application')).toHaveCount(0);

  // Pin the message of the list's last file (from its row), then back to the top of the page (or
  // of the conversation's pane, which scrolls on its own beside the list).
  const last = rows.last();
  const lastName = (await last.locator('.file-link .name').textContent()) ?? '';
  await last.getByRole('button', { name: `Pin the message of ${lastName}` }).click();
  const pinned = page.getByRole('button', { name: `Pinned message: ${lastName}` });
  await expect(pinned).toBeVisible();
  await pinned.evaluate((el) => {
    for (let box: Element | null = el; box; box = box.parentElement) box.scrollTop = 0;
    window.scrollTo(0, 0);
  });
  await expect(last).not.toBeInViewport();

  // Content first, with every action present: one bar of buttons a finger can hit, and the first
  // file row starting within the first third of the screen (under the app's bar, with the pinned
  // message; 37 % on a 390×844 phone with a "Files" line above the rows, the buttons took ~60 %
  // before), whole on the first screen. The kind and what "Keep offline" has done are a line of
  // the head, under the name.
  const viewport = page.viewportSize() ?? { width: 0, height: 0 };
  const bar = page.getByRole('group', { name: 'Actions' });
  const actions = ['Upload files', 'Take photo', 'Pin', 'Mute', 'Archive', 'Keep offline'];
  for (const name of actions) await expect(name.includes(' files') || name === 'Take photo' ? bar.getByLabel(name) : bar.getByRole('button', { name, exact: true })).toHaveCount(1);
  const barButtons = bar.locator('button, label.button');
  await expect(barButtons).toHaveCount(actions.length);
  const barBoxes = await Promise.all((await barButtons.all()).map(boxOf));
  for (const b of barBoxes) {
    expect(b.width).toBeGreaterThanOrEqual(44);
    expect(b.height).toBeGreaterThanOrEqual(44);
    expect(b.y, 'one row').toBe(barBoxes[0]?.y);
    expect(b.x + b.width).toBeLessThanOrEqual(viewport.width);
  }
  const firstRow = await boxOf(rows.first());
  expect(firstRow.y).toBeGreaterThan((await boxOf(bar)).y);
  expect(firstRow.y, `the first file row starts at ${firstRow.y} of ${viewport.height} px`).toBeLessThanOrEqual(viewport.height / 3);
  const head = page.getByRole('heading', { level: 1, name: contact });
  expect((await boxOf(bar)).y).toBeGreaterThan((await boxOf(head)).y);
  await expect(page.locator('.head-line')).toHaveText('Contact');
  expect(firstRow.y + firstRow.height).toBeLessThanOrEqual(viewport.height);

  // Delete is not beside Mute: not in the bar at all, but in "More actions", at least a finger's
  // width away from Mute.
  await expect(bar.getByRole('button', { name: /delete/i })).toHaveCount(0);
  const more = page.getByRole('button', { name: 'More actions', exact: true });
  expect(gapBetween(await boxOf(more), await boxOf(bar.getByRole('button', { name: 'Mute', exact: true })))).toBeGreaterThanOrEqual(44);
  expect(await accessibilityViolations(page)).toEqual([]);
  await more.click();
  const sheet = page.getByRole('dialog', { name: contact });
  await expect(sheet.getByRole('button')).toHaveText(['Delete…', 'Cancel']);
  expect(await accessibilityViolations(page)).toEqual([]);
  // Deleting still asks first; Cancel keeps the conversation.
  await sheet.getByRole('button', { name: 'Delete…' }).click();
  const confirm = page.getByRole('dialog', { name: `Delete “${contact}”?` });
  await expect(confirm.getByRole('button', { name: 'Delete permanently' })).toBeVisible();
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(confirm).toHaveCount(0);
  expect((await server.get(`/v1/conversations/${conversation.id}`)).status).toBe(200);

  // The pinned message, by keyboard: its file's row comes into view, marked, its name focused; one
  // more Enter opens it.
  await pinned.focus();
  await page.keyboard.press('Enter');
  const link = last.getByRole('link', { name: lastName, exact: true });
  await expect(link).toBeFocused();
  await expect(last).toBeInViewport();
  await expect(last).toHaveClass(/\bshown\b/);
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: lastName })).toBeVisible();
});
