// The README's screenshots of the lists, made again from the built app: `npm run screenshots`.
// Starts the app on a free port with a temporary data directory, fills it with a ward's worth of
// conversations and files through /v1, photographs the conversations list on a phone (at the top,
// scrolled with the header folded away, a row's actions), a conversation's files shown by their
// thumbnails, and on a desktop (two panes: the list beside an open conversation), and writes them to
// docs/screenshots/. Debian's Chromium, as the browser tests. Without the device lock (its set-up
// would come first after signing in; the lock screen is not what these pictures show).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, devices } from '@playwright/test';
import { pdfOf, pngOf, whiteRows } from './fixture-files.mjs';

/** A PNG of an ECG strip: the pink grid of the paper and a lead II trace (zlib and CRC-32 from Node). */
function ecgStripPng(width = 480, height = 160) {
  const row = width * 3 + 1;
  const raw = whiteRows(width, height);
  const set = (x, y, rgb) => {
    if (x >= 0 && x < width && y >= 0 && y < height) raw.set(rgb, y * row + 1 + x * 3);
  };
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) if (x % 8 === 0 || y % 8 === 0) set(x, y, x % 40 === 0 || y % 40 === 0 ? [0xe8, 0x9a, 0xa8] : [0xf6, 0xd0, 0xd6]);
  // One beat every 96 px: P wave, QRS, T wave around a baseline.
  const beat = (t) => 6 * Math.exp(-(((t - 18) / 5) ** 2)) - 8 * Math.exp(-(((t - 34) / 1.5) ** 2)) + 55 * Math.exp(-(((t - 38) / 1.6) ** 2)) - 14 * Math.exp(-(((t - 42) / 1.6) ** 2)) + 12 * Math.exp(-(((t - 64) / 7) ** 2));
  let last = null;
  for (let x = 0; x < width; x++) {
    const y = Math.round(height * 0.62 - beat(x % 96));
    const [from, to] = last === null ? [y, y] : [Math.min(last, y), Math.max(last, y)];
    for (let v = from; v <= to; v++) for (const dx of [0, 1]) set(x + dx, v, [0x20, 0x20, 0x28]);
    last = y;
  }
  return pngOf(width, height, raw);
}

/** A one-page PDF letter: a heading and a few lines of text. */
function letterPdf(lines) {
  const content = ['BT /F1 16 Tf 40 760 Td', ...lines.map((line, i) => `${i === 1 ? '/F1 11 Tf ' : ''}(${line}) Tj 0 -${i === 0 ? 28 : 16} Td`), 'ET'].join('\n');
  return pdfOf(content, 595, 842);
}

const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const port = await new Promise((resolve) => {
  const server = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const token = 'readme-screenshots-token-0123456789';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-screenshots-'));
const app = spawn(process.execPath, ['scripts/start.mjs'], {
  env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, PARLEY_TOKENS: `ward:${token}`, NODE_ENV: 'production', LOCK_AFTER_MINUTES: '0' },
  stdio: 'ignore',
});
const origin = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${token}` };

try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${origin}/v1/openapi.json`).catch(() => null))?.ok) break;
    if (i > 120) throw new Error('the app did not start');
    await new Promise((r) => setTimeout(r, 250));
  }
  const send = async (method, url, body) => {
    const r = await fetch(`${origin}${url}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const parties = [
    ['group', 'cardiology-ward-7-night-team'],
    ['contact', 'amelia-hughes'],
    ['contact', 'dr-oliver-bennett'],
    ['group', 'discharge-planning-cardiology-ward-7-and-community-nursing'],
    ['contact', 'nurse-station-4b'],
    ['contact', 'pharmacy-on-call'],
    ['group', 'radiology-reporting'],
    ['contact', 'dr-priya-raman'],
    ['contact', 'mohammed-al-sayed'],
    ['group', 'wound-care-rounds'],
    ['contact', 'physio-team-lead'],
    ['contact', 'lab-haematology'],
    ['contact', 'sofia-lindqvist'],
    ['group', 'theatre-3-list'],
    ['contact', 'gp-practice-riverside'],
    ['contact', 'chloe-okafor'],
    ['contact', 'dr-tom-whitfield'],
    ['group', 'stroke-unit-handover'],
    ['contact', 'social-work-team'],
    ['contact', 'bed-manager'],
  ];
  const made = [];
  for (const [kind, id] of parties) made.push(await send('POST', '/v1/conversations', kind === 'group' ? { group_id: id } : { contact_id: id }));
  await send('PUT', `/v1/conversations/${made[0].id}`, { is_pinned: true });
  await send('PUT', `/v1/conversations/${made[1].id}`, { is_pinned: true });
  await send('PUT', `/v1/conversations/${made[6].id}`, { is_muted: true });
  const upload = async (conversation, name, type, body) => {
    const form = new FormData();
    form.set('conversation_id', conversation.id);
    form.set('file', new Blob([body], { type }), name);
    const r = await fetch(`${origin}/v1/files`, { method: 'POST', headers, body: form });
    if (!r.ok) throw new Error(`upload ${name}: ${r.status}`);
  };
  await upload(made[1], 'potassium-result.json', 'application/fhir+json', JSON.stringify({ resourceType: 'Observation', status: 'final', code: { text: 'Potassium' } }));
  const letter = ['Discharge summary', 'Ward 7, Cardiology', 'Diagnosis: NSTEMI, treated with PCI to the LAD.', 'Medication: aspirin, ticagrelor, atorvastatin, bisoprolol, ramipril.', 'Follow-up: cardiac rehabilitation; GP review of potassium in 1 week.', 'Community nursing: wound check of the radial access site on day 3.'];
  await upload(made[3], 'discharge-letter.pdf', 'application/pdf', letterPdf([...letter, ...letter.slice(2), ...letter.slice(2)]));
  await upload(made[3], 'ecg-lead-II-strip.png', 'image/png', ecgStripPng());
  await upload(made[3], 'medication-reconciliation.json', 'application/fhir+json', JSON.stringify({ resourceType: 'MedicationStatement', status: 'active', medicationCodeableConcept: { text: 'Ticagrelor 90 mg' } }));

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const out = (name) => path.join('docs', 'screenshots', name);
  const signIn = async (page) => {
    await page.goto(origin);
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('sync-status').getByText('All synced').waitFor({ timeout: 30_000 });
    await page.locator('.vtable-body [role=row][data-index]').first().waitFor();
  };
  // Settled: the fold's animation and the throttled list reads are done.
  const settle = (page) => page.waitForTimeout(600);

  const phone = await browser.newPage({ ...devices['Pixel 7'], viewport: { width: 390, height: 844 } });
  await signIn(phone);
  await settle(phone);
  await phone.screenshot({ path: out('phone-conversations.png') });
  await phone.locator('.vtable-body').evaluate((el) => el.scrollBy(0, 240));
  await settle(phone);
  await phone.screenshot({ path: out('phone-conversations-folded.png') });
  await phone.locator('.vtable-body').evaluate((el) => el.scrollTo(0, 0));
  const more = phone.getByRole('button', { name: /^More actions for / }).first();
  if (await more.count()) {
    await more.click();
    await settle(phone);
    await phone.screenshot({ path: out('phone-row-actions.png') });
  }

  // A conversation's files as pictures, none of them opened: fetched in the background for their
  // thumbnails (the PDF's first page, the ECG strip), the JSON with the icon of its kind.
  await phone.goto(`${origin}/?c=${made[3].id}`);
  await phone.locator('img.thumb').nth(1).waitFor({ timeout: 30_000 });
  await settle(phone);
  await phone.screenshot({ path: out('phone-conversation-thumbnails.png') });

  const desktop = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await signIn(desktop);
  await settle(desktop);
  // Two panes on a wide screen: the list beside the open conversation (the first row, pinned, with
  // a result sent in it).
  await desktop.locator('.vtable-body [role=row][data-index="0"]').getByRole('link').first().click();
  await desktop.locator('#conversation-title').waitFor();
  await settle(desktop);
  await desktop.screenshot({ path: out('desktop-conversations.png') });
  await browser.close();
  console.log(`[screenshots] written to docs/screenshots/ from ${origin}`);
} finally {
  app.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
