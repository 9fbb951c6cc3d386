// Patient data on a copied disk (issue 28): a clinician signs in on a browser whose profile is a
// folder on disk, syncs, opens a FHIR result, keeps a conversation offline, then (offline) renames
// a file, starts a conversation and queues an upload, and closes the browser. Then every file of
// the profile folder is read for the seeded names and contents. With the device lock (the default
// policy) none is found; with LOCK_AFTER_MINUTES=0 (no lock, no encryption) they are, so the scan
// itself is shown to see what it looks for.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, expect, test, type APIRequestContext, type BrowserContext, type Page } from '@playwright/test';
import { E2E_TOKENS } from '../../playwright.config';
import { appEnv, CHECKOUT, startApp, tempDir, type AppProcess } from './app-process';
import { askUntilWiped, backToConversationsLink } from './helpers';

const SERVER = '.next/parley/server.mjs';
const PIN = '482915';

/** Random words nothing else on the disk holds (no common prefix, so compression cannot split them). */
const word = () => `${Math.random().toString(36).slice(2, 8)}${Math.random().toString(36).slice(2, 8)}`.replace(/^\d+/, 'q');

interface Secrets {
  patient: string;
  fileName: string;
  result: string;
  renamed: string;
  queuedPatient: string;
  queuedName: string;
  queuedBytes: string;
}

function secrets(): Secrets {
  return {
    patient: `pt${word()}`,
    fileName: `ecg${word()}.json`,
    result: `Kx${word()}`,
    renamed: `rn${word()}.json`,
    queuedPatient: `qp${word()}`,
    queuedName: `up${word()}.txt`,
    queuedBytes: `QB${word()}QB`,
  };
}

async function seed(request: APIRequestContext, app: AppProcess, s: Secrets) {
  const auth = { authorization: `Bearer ${E2E_TOKENS.alice}` };
  const created = await request.post(`${app.url}/v1/conversations`, { headers: auth, data: { contact_id: s.patient } });
  expect(created.status()).toBe(201);
  const observation = JSON.stringify({ resourceType: 'Observation', status: 'final', code: { text: s.result }, valueQuantity: { value: 5.9, unit: 'mmol/L' } });
  const uploaded = await request.post(`${app.url}/v1/files`, {
    headers: auth,
    multipart: { conversation_id: (await created.json()).id, file: { name: s.fileName, mimeType: 'application/fhir+json', buffer: Buffer.from(observation) } },
  });
  expect(uploaded.status()).toBe(201);
}

async function launch(profile: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox'], viewport: { width: 1280, height: 800 } });
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}

/** A clinician's session on the profile, then the browser closed. */
async function workDay(app: AppProcess, profile: string, s: Secrets, lock: boolean, before?: (context: BrowserContext) => Promise<void>) {
  const { context, page } = await launch(profile);
  await before?.(context);
  // A query the seal cannot answer is a page error (it was: the new-conversation form's suggestions).
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(app.url);
    await page.getByLabel('Access token').fill(E2E_TOKENS.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    if (lock) {
      await page.getByLabel(/PIN \(at least 6 digits\)/).fill(PIN);
      await page.getByLabel('The same PIN again').fill(PIN);
      await page.getByRole('button', { name: 'Set PIN' }).click();
    }
    // Synced, searched for, opened.
    await page.getByRole('searchbox').first().fill(s.patient.slice(0, 6));
    await page.getByRole('link', { name: new RegExp(s.patient) }).first().click();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(s.patient) })).toBeVisible();
    await page.getByRole('link', { name: s.fileName, exact: true }).click();
    await expect(page.getByText(s.result).first()).toBeVisible();
    await page.getByRole('link', { name: 'Back' }).click();
    await page.getByRole('button', { name: 'Keep offline' }).click();

    // Offline: the network refused outright (Chromium's emulation leaks from workers).
    await context.route('**/v1/**', (route) => route.abort('internetdisconnected'));
    await context.setOffline(true);
    await page.getByRole('button', { name: `Rename ${s.fileName}` }).click();
    await page.getByLabel('New name').fill(s.renamed);
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByLabel('Upload files').setInputFiles({ name: s.queuedName, mimeType: 'text/plain', buffer: Buffer.from(`${s.queuedBytes}\n`.repeat(4)) });
    await expect(page.getByRole('link', { name: s.queuedName, exact: true })).toBeVisible();
    await backToConversationsLink(page).click();
    await page.getByRole('button', { name: /New/ }).click();
    await page.getByLabel('Contact id').fill(s.queuedPatient);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect(page.getByRole('heading', { level: 1, name: new RegExp(s.queuedPatient) })).toBeVisible();
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
}

/** In the page: every value of every object store of every database of the origin, as text (bytes as Latin-1). */
async function readEveryRow(): Promise<string> {
  const text = (value: unknown): string =>
    value instanceof ArrayBuffer || ArrayBuffer.isView(value)
      ? String.fromCharCode(...new Uint8Array(value instanceof ArrayBuffer ? value : value.buffer))
      : value && typeof value === 'object'
        ? Object.entries(value).map(([k, v]) => `${k}:${text(v)}`).join(',')
        : String(value);
  const request = <T,>(r: IDBRequest<T>) => new Promise<T>((resolve, reject) => ((r.onsuccess = () => resolve(r.result)), (r.onerror = () => reject(r.error))));
  const parts: string[] = [];
  for (const { name } of await indexedDB.databases()) {
    const db = await request(indexedDB.open(name!));
    for (const store of Array.from(db.objectStoreNames)) {
      for (const value of await request(db.transaction(store).objectStore(store).getAll())) parts.push(text(value));
    }
    db.close();
  }
  return parts.join('\n');
}

/** Every file under `dir`, with which of the secrets it holds (as UTF-8/Latin-1 or UTF-16). */
function scan(dir: string, s: Secrets): Map<keyof Secrets, string[]> {
  const found = new Map<keyof Secrets, string[]>();
  const visit = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.isFile()) {
        const bytes = fs.readFileSync(full);
        for (const [name, value] of Object.entries(s) as Array<[keyof Secrets, string]>) {
          if (bytes.includes(Buffer.from(value, 'latin1')) || bytes.includes(Buffer.from(value, 'utf16le'))) {
            found.set(name, [...(found.get(name) ?? []), path.relative(dir, full)]);
          }
        }
      }
    }
  };
  visit(dir);
  return found;
}

for (const lock of [true, false]) {
  test(lock ? 'with the lock, the profile on disk holds none of the patient data' : 'without the lock, the same scan finds the patient data (the scan can fail)', async ({ request }) => {
    test.setTimeout(180_000);
    const scratch = tempDir('parley-disk-');
    const app = await startApp([SERVER], CHECKOUT, appEnv(path.join(scratch.dir, 'data'), { LOCK_AFTER_MINUTES: lock ? '5' : '0' }));
    try {
      const s = secrets();
      await seed(request, app, s);
      const profile = path.join(scratch.dir, 'profile');
      await workDay(app, profile, s, lock);
      const found = scan(profile, s);
      if (lock) {
        expect(Object.fromEntries(found)).toEqual({});
      } else {
        // In clear without a lock: the mirror's rows, the outbox, the queued bytes.
        for (const name of ['patient', 'fileName', 'renamed', 'queuedPatient', 'queuedBytes'] as const) expect(found.get(name), name).toBeDefined();
      }
    } finally {
      await app.stop();
      scratch.remove();
    }
  });
}

test('a device that held data before the lock: once the lock is set up, what it held is sealed too', async ({ request }) => {
  test.setTimeout(180_000);
  const scratch = tempDir('parley-disk-');
  const app = await startApp([SERVER], CHECKOUT, appEnv(path.join(scratch.dir, 'data'), { LOCK_AFTER_MINUTES: '5' }));
  try {
    const s = secrets();
    await seed(request, app, s);
    const profile = path.join(scratch.dir, 'profile');
    // The deployment had the lock off when this device signed in (an earlier version behaves the same).
    await workDay(app, profile, s, false, async (context) => {
      await context.route('**/device-policy', (route) => route.fulfill({ json: { lock_after: 0, max_offline: 0, wrong_unlocks_before_wipe: 10 } }));
    });
    expect(scan(profile, s).get('patient')).toBeDefined();

    // Now it is on: the next open asks for a PIN, then seals what the device holds.
    const { context, page } = await launch(profile);
    try {
      await page.goto(app.url);
      await page.getByLabel(/PIN \(at least 6 digits\)/).fill(PIN);
      await page.getByLabel('The same PIN again').fill(PIN);
      await page.getByRole('button', { name: 'Set PIN' }).click();
      // The search reads keyed tokens now: the sealed rows are found by them.
      await page.getByRole('searchbox').first().fill(s.patient.slice(0, 6));
      await expect(page.getByRole('link', { name: new RegExp(s.patient) }).first()).toBeVisible();
      await page.getByRole('searchbox').first().fill(s.queuedPatient.slice(0, 6));
      await expect(page.getByRole('link', { name: new RegExp(s.queuedPatient) }).first()).toBeVisible();
      // The changes queued offline before the lock went out sealed, and reached the server.
      await expect(page.getByText('All synced')).toBeVisible({ timeout: 30_000 });
      // Every row IndexedDB serves, read past the app: none holds a secret.
      const served = await page.evaluate(readEveryRow);
      for (const [name, value] of Object.entries(s)) expect(served.includes(value), name).toBe(false);
      expect(served.length).toBeGreaterThan(1000);
    } finally {
      await context.close();
    }
    // The next day's start. The opened-files cache was emptied at the set-up (its files moved into
    // the sealed database), but Chromium removes a deleted cache's folder only once no realm holds
    // a handle to it — which a browser closed right after may never reach — and at its next start.
    {
      const { context, page } = await launch(profile);
      try {
        await page.goto(app.url);
        await page.getByLabel('PIN').fill(PIN);
        await page.getByRole('button', { name: 'Unlock' }).click();
        await expect(page.getByText('All synced')).toBeVisible({ timeout: 30_000 });
        expect(await page.evaluate(() => caches.keys())).not.toContain('parley-files');
      } finally {
        await context.close();
      }
    }
    // What remains is IndexedDB's own history: Chromium's LevelDB keeps the values a put replaced
    // in its write-ahead log and older tables until it compacts them, which a page cannot ask for
    // (docs/patient-data.md says so, and what to do). Every row it serves is sealed, and nothing
    // is anywhere else: not Cache Storage, the HTTP cache, autofill or localStorage.
    const found = scan(profile, s);
    for (const [name, files] of found) for (const file of files) expect(file, name).toMatch(/^Default\/IndexedDB\/[^/]+\.indexeddb\.leveldb\/\d+\.(log|ldb)$/);
  } finally {
    await app.stop();
    scratch.remove();
  }
});

test('a remote wipe leaves none of the patient data in the profile, not even in IndexedDB’s own files (without the lock, where nothing was sealed)', async ({ request }) => {
  test.setTimeout(240_000);
  const scratch = tempDir('parley-disk-');
  const dataDir = path.join(scratch.dir, 'data');
  const app = await startApp([SERVER], CHECKOUT, appEnv(dataDir, { LOCK_AFTER_MINUTES: '0' }));
  const tokenCli = (args: string[]) => spawnSync(process.execPath, ['.next/parley/token.mjs', ...args], { env: appEnv(dataDir), encoding: 'utf8' });
  try {
    const s = secrets();
    await seed(request, app, s);
    // Deleting the databases alone leaves their values in LevelDB's files (the second profile,
    // whose app cannot reach POST /device-policy/clear): the scan finds them; with the
    // Clear-Site-Data answer the browser removes the files.
    for (const clearSiteData of [true, false]) {
      const made = tokenCli(['create', '--user', 'alice', '--label', 'ward phone']);
      expect(made.status, made.stderr).toBe(0);
      const token = made.stdout.trim();
      const tokenId = /created token (\w+)/.exec(made.stderr)![1]!;
      const profile = path.join(scratch.dir, `profile-${clearSiteData}`);
      const { context, page } = await launch(profile);
      try {
        if (!clearSiteData) await context.route('**/device-policy/clear', (route) => route.abort('connectionrefused'));
        await page.goto(app.url);
        await page.getByLabel('Access token').fill(token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('searchbox').first().fill(s.patient.slice(0, 6));
        await page.getByRole('link', { name: new RegExp(s.patient) }).first().click();
        await page.getByRole('link', { name: s.fileName, exact: true }).click();
        await expect(page.getByText(s.result).first()).toBeVisible();
        await page.getByRole('link', { name: 'Back' }).click();
        const wiped = tokenCli(['revoke', tokenId, '--wipe']);
        expect(wiped.status, wiped.stderr).toBe(0);
        await askUntilWiped(page);
      } finally {
        await context.close();
      }
      const found = scan(profile, s);
      if (clearSiteData) expect(Object.fromEntries(found)).toEqual({});
      else expect([...found.values()].flat().some((file) => /\.indexeddb\.leveldb\//.test(file))).toBe(true);
    }
  } finally {
    await app.stop();
    scratch.remove();
  }
});
