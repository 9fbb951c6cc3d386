// The in-app file viewer (issue 20) at 390×844: each kind of file opens in a screen of the app
// (its own URL, a back button, no new tab) and reads as a clinician reads it — an Observation's
// test, value and unit; an HL7 lab message's results (cards on a phone, a table on a wide screen); a PDF's page drawn by pdf.js (under
// the app's real CSP); a CSV as a table; an image; a malformed FHIR file's plain message. A queued
// upload opens from its bytes, a file opened once opens with no network, and axe finds nothing.
import { pngOf, textPdf as tinyPdf, whiteRows } from '../../scripts/fixture-files.mjs';
import { expect, test, type APIRequestContext, type BrowserContext, type Page, type TestInfo } from '@playwright/test';
import { accessibilityViolations, api, appOrigin, dataSaverOn, honouringRetryAfter, lockOn, openConversation, screenshot, signIn, unique, unlockIfLocked, userFor, waitForServiceWorker } from './helpers';

const OBSERVATION = JSON.stringify({
  resourceType: 'Observation',
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code: '2823-3', display: 'Potassium [Moles/volume] in Serum or Plasma' }], text: 'Potassium' },
  subject: { display: 'Anna Smith' },
  effectiveDateTime: '2024-03-05',
  valueQuantity: { value: 5.9, unit: 'mmol/L' },
  interpretation: [{ coding: [{ code: 'H', display: 'High' }] }],
  referenceRange: [{ low: { value: 3.5, unit: 'mmol/L' }, high: { value: 5.1, unit: 'mmol/L' } }],
});

const ORU = [
  'MSH|^~\\&|LABSYS|ST MARY HOSPITAL|EHR|NORTH CLINIC|20240305143000||ORU^R01|MSG00042|P|2.5.1',
  'PID|1||555123^^^STMARY^MR||DOE^JANE||19750412|F',
  'OBR|1|ORD123|FIL456|CBC^Complete blood count^L',
  'OBX|1|NM|718-7^Hemoglobin^LN||10.2|g/dL|12.0-15.5|L|||F',
  'OBX|2|NM|6690-2^WBC^LN||11.8|10*3/uL|4.5-11.0|H|||F',
  'OBX|3|ST|NOTE^Comment^L||Lipaemic A\\F\\B|||N|||F',
].join('\r');

/** A PNG (40×30 unless asked), a red square on white (scripts/fixture-files.mjs). */
function tinyPng(width = 40, height = 30): Buffer {
  const rows = whiteRows(width, height);
  for (let y = height / 6; y < (height * 5) / 6; y++) for (let x = width / 4; x < (width * 3) / 4; x++) rows.set([0xd0, 0x20, 0x20], y * (width * 3 + 1) + 1 + x * 3);
  return pngOf(width, height, rows);
}

async function upload(request: APIRequestContext, info: TestInfo, conversationId: string, name: string, mimeType: string, buffer: Buffer) {
  const r = await honouringRetryAfter(() =>
    request.post(`${appOrigin()}/v1/files`, { headers: userFor(info).auth, multipart: { conversation_id: conversationId, file: { name, mimeType, buffer } } }),
  );
  expect(r.status()).toBe(201);
  return (await r.json()) as { id: string; file_url: string; filename: string };
}

async function seed(request: APIRequestContext, info: TestInfo) {
  const contact = unique('viewer');
  const conversation = await (await api(request, info)).createConversation(contact);
  const add = (name: string, type: string, body: Buffer | string) => upload(request, info, conversation.id, name, type, Buffer.from(body));
  await add('potassium.json', 'application/fhir+json', OBSERVATION);
  await add('cbc.hl7', 'text/plain', ORU);
  await add('letter.pdf', 'application/pdf', tinyPdf('Discharge letter'));
  await add('wound.png', 'image/png', tinyPng());
  await add('sodium.csv', 'text/csv', 'test,value,unit\r\n"Sodium, serum",140,mmol/L\r\n');
  await add('broken.json', 'application/json', '{\n  "resourceType": "Observation",\n  "code": { "text": "Glucose" },\n  "valueQuantity": {');
  await add('damaged.pdf', 'application/pdf', '%PDF-1.4 not really');
  return { contact, conversation };
}

/** Opens a file of the conversation on screen in the viewer: an in-app screen with its URL. */
async function openFile(page: Page, name: string) {
  await page.getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
  expect(new URL(page.url()).searchParams.get('file')).toBeTruthy();
}

/** The open file's screen: on a wide screen the conversations list (a table too) is beside it. */
const viewerPane = (page: Page) => page.locator('section.viewer');

/** Whether any of the app's caches, or the database's table of files held on the device, has a copy of a file (by its id). */
async function copiesOnDevice(page: Page, ids: string[]) {
  return page.evaluate(async (ids) => {
    const found: string[] = [];
    for (const name of await caches.keys()) {
      for (const r of await (await caches.open(name)).keys()) {
        const url = new URL(r.url);
        if (url.pathname.startsWith('/files/') && ids.includes(url.searchParams.get('id') ?? '')) found.push(`${name}: ${url.pathname}`);
      }
    }
    const ask = <T,>(r: IDBRequest<T>) => new Promise<T>((resolve, reject) => ((r.onsuccess = () => resolve(r.result)), (r.onerror = () => reject(r.error))));
    for (const { name } of await indexedDB.databases()) {
      if (!name?.startsWith('parley-sync-')) continue;
      const open = indexedDB.open(name);
      const db = await ask(open);
      // Only these files' rows: the user's pinned conversations are kept offline (by default),
      // and earlier tests left some with files that the device downloads here too.
      for (const store of ['offlineFiles', 'downloadChunks']) {
        if (!db.objectStoreNames.contains(store)) continue;
        for (const id of ids) {
          const objects = db.transaction(store).objectStore(store);
          const rows = await ask(store === 'offlineFiles' ? objects.count(id) : objects.index('fileId').count(id));
          if (rows > 0) found.push(`${name}.${store}: ${rows} rows of ${id}`);
        }
      }
      db.close();
    }
    return found;
  }, ids);
}

async function back(page: Page, contact: string) {
  await page.getByRole('link', { name: 'Back' }).click();
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
}

test('each kind of file opens in the app and reads as a clinician reads it', async ({ page, context, request }, info) => {
  const { contact } = await seed(request, info);
  let tabs = 0;
  context.on('page', () => tabs++);
  // No thumbnails fetched meanwhile: pdf.js for the list's PDFs would load beside the viewer's.
  await dataSaverOn(page);
  await signIn(page, info);
  await openConversation(page, contact);

  // FHIR Observation: the test, its value and unit, the reference range; raw JSON one tap away.
  await openFile(page, 'potassium.json');
  await expect(page.locator('.viewer > .viewer-meta')).toHaveText(/^FHIR Observation · /);
  const summary = page.getByRole('region', { name: /Observation: Potassium/ });
  await expect(summary.getByRole('heading', { name: /Potassium/ })).toBeVisible();
  await expect(summary.getByRole('definition').filter({ hasText: '5.9 mmol/L' })).toBeVisible();
  await expect(summary).toContainText('Reference range3.5 - 5.1 mmol/L');
  await expect(summary.getByRole('definition').filter({ hasText: '5.9 mmol/L' })).toHaveText('5.9 mmol/L ↑ High');
  await screenshot(page, info, 'viewer-fhir');
  await page.getByRole('button', { name: 'Raw JSON' }).click();
  await expect(page.getByLabel('Contents of potassium.json')).toContainText('"valueQuantity"');
  await back(page, contact);

  // HL7 v2: header, patient, and the results (clinical-results.spec.ts reads them closely).
  await openFile(page, 'cbc.hl7');
  await expect(page.getByRole('heading', { name: /ORU\^R01 from ST MARY HOSPITAL/ })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Patient' })).toContainText('JANE DOE');
  // Uploaded as text/plain: the header names what the content is.
  await expect(page.locator('.viewer > .viewer-meta')).toHaveText(/^HL7 v2 message · /);
  if (info.project.name === 'phone') {
    const cards = page.getByRole('list', { name: 'Results' }).getByRole('listitem');
    await expect(cards.locator('.result-test')).toHaveText(['Hemoglobin (718-7)', 'WBC (6690-2)', 'Comment (NOTE)']);
    await expect(cards.locator('.result-value')).toHaveText(['10.2 g/dL ↓ Low', '11.8 10*3/uL ↑ High', 'Lipaemic A|B Normal']);
  } else {
    const results = page.getByRole('table', { name: 'Results' });
    await expect(results.getByRole('columnheader')).toHaveText(['Test', 'Value', 'Unit', 'Flag', 'Reference range', 'Status']);
    await expect(results.getByRole('row').nth(1).getByRole('cell')).toHaveText(['Hemoglobin (718-7)', '10.2', 'g/dL', '↓ Low', '12.0-15.5', 'Final']);
    await expect(results.getByRole('row').nth(2).getByRole('cell')).toHaveText(['WBC (6690-2)', '11.8', '10*3/uL', '↑ High', '4.5-11.0', 'Final']);
    await expect(results.getByRole('row').nth(3).getByRole('cell').nth(1)).toHaveText('Lipaemic A|B');
  }
  await screenshot(page, info, 'viewer-hl7');
  await back(page, contact);

  // PDF: drawn by pdf.js in its worker, under the app's CSP: a page count, pixels, selectable text.
  await openFile(page, 'letter.pdf');
  // pdf.js loads with the first PDF opened (a worker and a large module): a busy machine takes its time.
  await expect(page.getByText('1 page', { exact: true })).toBeVisible({ timeout: 30_000 });
  const pdfPage = page.getByRole('group', { name: 'Page 1' });
  await expect(pdfPage.locator('.textLayer')).toContainText('Discharge letter');
  const inked = await pdfPage.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
    const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
    let dark = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i]! < 128 && data[i + 3]! > 0) dark++;
    return dark;
  });
  expect(inked).toBeGreaterThan(50);
  await page.getByRole('button', { name: 'Zoom in' }).click();
  await expect(page.getByRole('status', { name: 'Zoom level' }).or(page.getByLabel('Zoom level'))).toHaveText('125%');
  await screenshot(page, info, 'viewer-pdf');
  await back(page, contact);

  // A damaged PDF: a plain message, never a blank screen.
  await openFile(page, 'damaged.pdf');
  await expect(page.getByText(/This PDF could not be read/)).toBeVisible();
  await expect(page.getByRole('link', { name: 'Download' })).toBeVisible();
  await back(page, contact);

  // An image, fitted; double-tap zooms in.
  await openFile(page, 'wound.png');
  const image = page.getByRole('img', { name: 'wound.png' });
  await expect(image).toBeVisible();
  expect(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(40);
  await page.getByRole('button', { name: 'Zoom in' }).click();
  await expect(page.getByLabel('Zoom level')).toHaveText('150%');
  await back(page, contact);

  // CSV as a table.
  await openFile(page, 'sodium.csv');
  await expect(viewerPane(page).getByRole('table').getByRole('row').nth(1).getByRole('cell')).toHaveText(['Sodium, serum', '140', 'mmol/L']);
  await back(page, contact);

  // Malformed FHIR: where it breaks, in words, and the text that could be read.
  await openFile(page, 'broken.json');
  await expect(page.getByText(/This file is not valid JSON \(.+\), so the FHIR Observation in it cannot be shown as a summary/)).toBeVisible();
  await expect(page.getByLabel('Contents of broken.json')).toContainText('"Glucose"');
  await screenshot(page, info, 'viewer-malformed');
  await back(page, contact);

  expect(tabs).toBe(0);
});

test('an upload still waiting to be sent opens from its queued bytes', async ({ page, context, request }, info) => {
  const { contact } = await seed(request, info);
  await signIn(page, info);
  await openConversation(page, contact);
  // Writes cannot reach the server: the upload stays queued, its bytes on the device.
  await context.route(/\/v1\//, (route) => (route.request().method() === 'GET' ? route.continue() : route.abort('internetdisconnected')));
  await page.getByLabel('Upload files').setInputFiles({ name: 'ward-round.csv', mimeType: 'text/csv', buffer: Buffer.from('bed,patient\n4,Jones\n') });
  await openFile(page, 'ward-round.csv');
  await expect(page.getByText('waiting to upload')).toBeVisible();
  await expect(viewerPane(page).getByRole('table').getByRole('row').nth(1).getByRole('cell')).toHaveText(['4', 'Jones']);
  await back(page, contact);
});

async function cutNetwork(context: BrowserContext) {
  // As keep-offline.spec.ts: routes hold for the workers too, where offline emulation does not.
  await context.route(/\/(files|v1)\//, (route) => route.abort('internetdisconnected'));
}

test('a file opened once opens again in the viewer with no network', async ({ page, context, request }, info) => {
  const { contact } = await seed(request, info);
  await signIn(page, info);
  await waitForServiceWorker(page);
  await openConversation(page, contact);
  await openFile(page, 'cbc.hl7');
  await expect(page.getByLabel('Results', { exact: true })).toContainText('Hemoglobin');
  await back(page, contact);
  // Kept for offline use (the service worker's cache, or sealed in the database on a locked device): marked.
  await expect(page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'cbc.hl7', exact: true }) }).getByText('On this device')).toBeVisible();

  await cutNetwork(context);
  await openFile(page, 'cbc.hl7');
  await expect(page.getByLabel('Results', { exact: true })).toContainText('Hemoglobin');
  // Reloaded offline, straight onto the viewer's URL.
  await page.reload();
  await unlockIfLocked(page);
  await expect(page.getByLabel('Results', { exact: true })).toContainText('Hemoglobin');
  await back(page, contact);
  // One never opened says why it cannot be shown.
  await openFile(page, 'sodium.csv');
  await expect(page.getByText('Not on this device — available when you’re back online.')).toBeVisible();
  await expect(page.getByRole('link', { name: /server’s copy/ })).toHaveCount(0);
});

test('the viewer passes axe: FHIR, HL7, PDF and raw views', async ({ browser, request }, info) => {
  const { contact } = await seed(request, info);
  const context = await browser.newContext({ ...info.project.use, bypassCSP: true });
  const page = await context.newPage();
  await signIn(page, info);
  await openConversation(page, contact);
  for (const name of ['potassium.json', 'cbc.hl7', 'letter.pdf', 'wound.png', 'broken.json']) {
    await openFile(page, name);
    await expect(page.getByText('Opening…')).toHaveCount(0);
    await expect(page.locator('.viewer-body')).toBeVisible();
    expect(await accessibilityViolations(page), name).toEqual([]);
    await back(page, contact);
  }
  await openFile(page, 'cbc.hl7');
  await page.getByRole('button', { name: 'Raw message' }).click();
  await expect(page.getByLabel('Contents of cbc.hl7')).toContainText('OBX|1|NM');
  expect(await accessibilityViolations(page)).toEqual([]);
  await context.close();
});

test('file lists show each kind with its own icon and a long name whole', async ({ page, request }, info) => {
  const { contact, conversation } = await seed(request, info);
  const longName = 'discharge-letter-for-the-general-practitioner-with-the-medication-list.pdf';
  await upload(request, info, conversation.id, longName, 'application/pdf', tinyPdf('Letter'));
  // No thumbnails fetched: the image and the PDF keep the icons this test looks at.
  await dataSaverOn(page);
  await signIn(page, info);
  // Each kind with its icon, in the conversation's list of files.
  await openConversation(page, contact);
  const files = page.getByRole('list', { name: 'Files' });
  const kinds: Record<string, string> = { 'potassium.json': 'fhir', 'cbc.hl7': 'hl7', 'letter.pdf': 'pdf', 'wound.png': 'image', 'sodium.csv': 'csv' };
  for (const [name, kind] of Object.entries(kinds)) {
    await expect(files.getByRole('link', { name, exact: true }).locator(`svg.kind-${kind}`)).toBeVisible();
  }
  // The Files screen of this conversation (other tests of this user upload the same long name).
  await page.goto(`/?view=files&in=${conversation.id}`);
  await unlockIfLocked(page);
  await expect(page.getByRole('heading', { level: 1, name: 'Files' })).toBeVisible();
  await page.getByRole('searchbox', { name: 'Name' }).fill('medication-list');
  const table = page.getByRole('table', { name: 'Files' });
  // The long name: whole, wrapping (as a conversation's name in its list), its end on screen.
  const link = table.getByRole('link', { name: longName });
  await expect(link).toHaveAttribute('title', longName);
  const name = link.locator('.name');
  await expect(name).toHaveText(longName);
  const box = (await name.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(page.viewportSize()!.width);
  expect(await name.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  await screenshot(page, info, 'files-kinds');
  // And it opens in the viewer from here too (the page's first PDF: pdf.js loads, which a busy
  // machine takes its time over).
  await link.click();
  await expect(page.getByRole('group', { name: 'Page 1' }).locator('.textLayer')).toContainText('Letter', { timeout: 30_000 });
});

test('images get a thumbnail made on the device: a photo waiting to upload, a server image once opened; gone at sign-out', async ({ page, context, request }, info) => {
  const { contact } = await seed(request, info);
  // Nothing fetched for a thumbnail (the next test's): here, only bytes the device has.
  await dataSaverOn(page);
  await signIn(page, info);
  await openConversation(page, contact);
  const files = page.getByRole('list', { name: 'Files' });
  // On the server and never opened, with Data Saver on: not fetched, so the icon of its kind.
  const wound = files.getByRole('link', { name: 'wound.png', exact: true });
  await expect(wound.locator('svg.kind-image')).toBeVisible();
  // Opened once: the viewer had the bytes, the list has its thumbnail.
  await openFile(page, 'wound.png');
  await expect(page.getByRole('img', { name: 'wound.png' })).toBeVisible();
  await back(page, contact);
  const thumb = wound.locator('img.thumb');
  await expect(thumb).toBeVisible();
  // Smaller than a thumbnail: kept at its size, never enlarged.
  expect(await thumb.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])).toEqual([40, 30]);

  // A photo taken with no way to send it: its thumbnail comes from the queued bytes.
  await context.route(/\/v1\//, (route) => (route.request().method() === 'GET' ? route.continue() : route.abort('internetdisconnected')));
  await page.getByLabel('Take photo').setInputFiles({ name: 'rash.png', mimeType: 'image/png', buffer: tinyPng(800, 600) });
  const rash = files.getByRole('link', { name: 'rash.png', exact: true }).locator('img.thumb');
  await expect(rash).toBeVisible();
  // Scaled down to fit 96 px (what is stored), shown at 32 px.
  expect(await rash.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight, img.width])).toEqual([96, 72, 32]);
  await screenshot(page, info, 'files-thumbnails');

  // Sign-out removes them with the rest of the user's data.
  expect(await page.evaluate(async () => (await indexedDB.databases()).some((d) => d.name?.startsWith('parley-thumbnails-')))).toBe(true);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('dialog', { name: 'Sign out?' }).getByRole('button', { name: /^Sign out/ }).click();
  await expect(page.getByLabel('Access token')).toBeVisible();
  await expect.poll(() => page.evaluate(async () => (await indexedDB.databases()).filter((d) => d.name?.startsWith('parley-thumbnails-')).length)).toBe(0);
});

test('photos and scans on the server get a thumbnail without being opened, fetched in the background and not kept', async ({ page, context, request }, info) => {
  const contact = unique('thumbs');
  const conversation = await (await api(request, info)).createConversation(contact);
  const photo = await upload(request, info, conversation.id, 'pressure-sore.png', 'image/png', tinyPng(400, 300));
  const scan = await upload(request, info, conversation.id, 'referral-scan.pdf', 'application/pdf', tinyPdf('Referral to cardiology'));
  const ids = [photo.id, scan.id];
  // Requests for these files, by the page (and the service worker passing them on).
  const asked: string[] = [];
  context.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/files/') && ids.includes(url.searchParams.get('id') ?? '')) asked.push(url.searchParams.get('id')!);
  });
  await signIn(page, info);
  // The service worker in charge: it sees the fetches (and keeps a copy of every file opened).
  await waitForServiceWorker(page);
  await openConversation(page, contact);
  const files = page.getByRole('list', { name: 'Files' });
  // Neither opened: each shows its picture, not its icon.
  const photoThumb = files.getByRole('link', { name: 'pressure-sore.png', exact: true }).locator('img.thumb');
  const scanThumb = files.getByRole('link', { name: 'referral-scan.pdf', exact: true }).locator('img.thumb');
  // The PDF's needs pdf.js, which loads only now (a busy machine takes its time).
  await expect(photoThumb).toBeVisible({ timeout: 20_000 });
  await expect(scanThumb).toBeVisible({ timeout: 30_000 });
  await expect(files.locator('svg.kind-image, svg.kind-pdf')).toHaveCount(0);
  expect(new URL(page.url()).searchParams.get('file')).toBeNull();
  expect(await photoThumb.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])).toEqual([96, 72]);
  expect(await scanThumb.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])).toEqual([96, 64]);
  expect(asked.filter((id) => id === photo.id).length).toBeGreaterThan(0);
  expect(asked.filter((id) => id === scan.id).length).toBeGreaterThan(0);
  // Only the thumbnails are kept: no copy of either file in Cache Storage or in the database.
  expect(await copiesOnDevice(page, ids)).toEqual([]);
  if (!lockOn()) {
    // Small: at most 16 KB each (with a lock they are sealed, and unreadable here).
    const sizes = await page.evaluate(async () => {
      const name = (await indexedDB.databases()).map((d) => d.name ?? '').find((n) => n.startsWith('parley-thumbnails-'))!;
      const db = await new Promise<IDBDatabase>((resolve) => (indexedDB.open(name).onsuccess = (e) => resolve((e.target as IDBOpenDBRequest).result)));
      const rows = await new Promise<Array<{ bytes: ArrayBuffer }>>((resolve) => (db.transaction('thumbnails').objectStore('thumbnails').getAll().onsuccess = (e) => resolve((e.target as IDBRequest).result)));
      db.close();
      return rows.map((r) => r.bytes.byteLength);
    });
    expect(sizes).toHaveLength(2);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(16 * 1024);
  }
  // Opened again later: drawn from the thumbnails kept, nothing fetched again.
  const before = asked.length;
  await page.reload();
  await unlockIfLocked(page);
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(contact) })).toBeVisible();
  await expect(photoThumb).toBeVisible();
  await expect(scanThumb).toBeVisible();
  expect(asked.length).toBe(before);
  await screenshot(page, info, 'files-fetched-thumbnails');
});

test('with Data Saver on, nothing is fetched for a thumbnail; once it is off, the thumbnails come', async ({ page, context, request }, info) => {
  const contact = unique('saver');
  const conversation = await (await api(request, info)).createConversation(contact);
  const photo = await upload(request, info, conversation.id, 'wound-day-3.png', 'image/png', tinyPng());
  const scan = await upload(request, info, conversation.id, 'discharge.pdf', 'application/pdf', tinyPdf('Discharge'));
  const ids = [photo.id, scan.id];
  const asked: string[] = [];
  context.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/files/') && ids.includes(url.searchParams.get('id') ?? '')) asked.push(url.pathname);
  });
  await dataSaverOn(page);
  await signIn(page, info);
  await openConversation(page, contact);
  const files = page.getByRole('list', { name: 'Files' });
  const photoLink = files.getByRole('link', { name: 'wound-day-3.png', exact: true });
  const scanLink = files.getByRole('link', { name: 'discharge.pdf', exact: true });
  // Each was looked at and left waiting for the connection: nothing was asked for it.
  await expect(photoLink.locator('svg.kind-image[data-thumbnail="waiting"]')).toBeVisible();
  await expect(scanLink.locator('svg.kind-pdf[data-thumbnail="waiting"]')).toBeVisible();
  expect(asked).toEqual([]);
  await expect(files.locator('img.thumb')).toHaveCount(0);
  // Data Saver off (the browser says the connection changed): they come without a reload.
  await page.evaluate(() => {
    const connection = (window as unknown as { testConnection: EventTarget & { saveData: boolean } }).testConnection;
    connection.saveData = false;
    connection.dispatchEvent(new Event('change'));
  });
  await expect(photoLink.locator('img.thumb')).toBeVisible({ timeout: 20_000 });
  await expect(scanLink.locator('img.thumb')).toBeVisible({ timeout: 30_000 });
  expect(await copiesOnDevice(page, ids)).toEqual([]);
});

test('a PDF waiting to upload gets its first page as a thumbnail, made on the device; a damaged one keeps its icon', async ({ page, context, request }, info) => {
  const { contact } = await seed(request, info);
  // Only the queued files' thumbnails here (the server's PDFs are not fetched for theirs).
  await dataSaverOn(page);
  await signIn(page, info);
  await openConversation(page, contact);
  const files = page.getByRole('list', { name: 'Files' });
  // No way to send them: the thumbnails come from the queued bytes.
  await context.route(/\/v1\//, (route) => (route.request().method() === 'GET' ? route.continue() : route.abort('internetdisconnected')));
  // One at a time, in order: the damaged PDF is tried before the good one.
  await page.getByLabel('Upload files').setInputFiles([
    { name: 'torn.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 not really') },
  ]);
  await expect(files.getByRole('link', { name: 'torn.pdf', exact: true })).toBeVisible();
  await page.getByLabel('Upload files').setInputFiles([{ name: 'referral.pdf', mimeType: 'application/pdf', buffer: tinyPdf('Referral to cardiology') }]);
  const thumb = files.getByRole('link', { name: 'referral.pdf', exact: true }).locator('img.thumb');
  // Made by pdf.js in a worker, which loads with the first PDF drawn (a busy machine takes its time).
  await expect(thumb).toBeVisible({ timeout: 20_000 });
  // The 300×200 pt page scaled to fit 96 px, shown at 32 px.
  expect(await thumb.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight, img.width])).toEqual([96, 64, 32]);
  // Drawn, not blank: a white page with dark text on it.
  const shades = await thumb.evaluate((img: HTMLImageElement) => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    let light = 0;
    let dark = 0;
    for (let i = 0; i < data.length; i += 4) {
      const level = (data[i]! + data[i + 1]! + data[i + 2]!) / 3;
      if (data[i + 3]! > 200 && level > 230) light++;
      if (data[i + 3]! > 200 && level < 160) dark++;
    }
    return { light, dark };
  });
  expect(shades.light).toBeGreaterThan(96 * 64 * 0.5);
  expect(shades.dark).toBeGreaterThan(10);
  // The damaged one (tried first) could not be read: the icon of its kind stays.
  const torn = files.getByRole('link', { name: 'torn.pdf', exact: true });
  await expect(torn.locator('svg.kind-pdf')).toBeVisible();
  await expect(torn.locator('img.thumb')).toHaveCount(0);
  await screenshot(page, info, 'files-pdf-thumbnail');
});

test.describe('by touch', () => {
  // The phone has a touch screen; so, here, does the desktop (a touch-screen laptop).
  test.use({ hasTouch: true });

  test('pinching a PDF zooms the document, not the app', async ({ page, request }, info) => {
    const contact = unique('pinch');
    const conversation = await (await api(request, info)).createConversation(contact);
    await upload(request, info, conversation.id, 'letter.pdf', 'application/pdf', tinyPdf('Discharge letter'));
    await signIn(page, info);
    await openConversation(page, contact);
    await openFile(page, 'letter.pdf');
    const firstPage = page.getByRole('group', { name: 'Page 1' });
    // pdf.js loads with the first PDF opened (a worker and a large module): a busy machine takes its time.
    await expect(firstPage.locator('.textLayer')).toContainText('Discharge letter', { timeout: 30_000 });
    const level = page.getByLabel('Zoom level');
    await expect(level).toHaveText('100%');
    const before = (await firstPage.boundingBox())!;

    // Two fingers on the page, moving apart from 40 to 300 px: real touch input through the
    // DevTools protocol, which the browser takes as a pinch-zoom of the whole page (to 5× without
    // the viewer's own: the toolbar too, its label still at 100%).
    const cdp = await page.context().newCDPSession(page);
    const at = { x: before.x + before.width / 2, y: before.y + Math.min(before.height / 2, 150) };
    const fingers = (half: number) => [
      { x: at.x - half, y: at.y, id: 0 },
      { x: at.x + half, y: at.y, id: 1 },
    ];
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: fingers(20) });
    for (let half = 25; half <= 150; half += 5) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: fingers(half) });
    // The viewer's zoom follows the fingers, up to its most (4×)…
    await expect(level).toHaveText('400%');
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    await cdp.detach();
    await expect(level).toHaveText('400%');
    // …the page is drawn again four times as wide, and the app itself is not zoomed.
    await expect.poll(async () => Math.round((await firstPage.boundingBox())!.width)).toBe(Math.round(before.width * 4));
    expect(await page.evaluate(() => window.visualViewport!.scale)).toBe(1);
    await expect(firstPage.locator('.textLayer')).toContainText('Discharge letter');
  });
});
