// Weight of the service worker (issue 30): its script, gzipped, and what it precaches on the first
// visit — the app shell, not the viewer's code, which is cached when first used and then works
// with no network. Sizes are the build's, deterministic: no clock involved.
import { gzipSync } from 'node:zlib';
import { textPdf as tinyPdf } from '../../scripts/fixture-files.mjs';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { api, base, dataSaverOn, openConversation, signIn, unique, userFor, waitForServiceWorker } from './helpers';

/**
 * Ceiling on public/sw.js, gzipped: the script a start of the worker evaluates before it answers
 * anything (issue 30's target: 40 KiB). Before issue 30: 159 KiB, zod's classic API and every one
 * of its locales among it, through the schemas of the background flush. Now Workbox, the routes
 * and the precache manifest (~18 KiB); the flush and the downloader, with Dexie, are its IndexedDB
 * half, evaluated on first need.
 */
const SW_BUDGET_KIB = 40;
/**
 * Ceiling on that half (/sw-background.js), gzipped (~65 KiB: Dexie 32, the sync engine, the
 * downloader; the objects it validates are zod/mini's, lib/objects.ts — zod's classic API would
 * add ~90 KiB).
 */
const BACKGROUND_BUDGET_KIB = 70;
/**
 * Ceiling on the precache, raw bytes (3,015 KiB in 55 files before issue 30, pdf.js among them;
 * 1,316 KiB once the shell alone was precached). The same session's other work, on screens the
 * shell reaches, took it to 1,397 KiB: the sealed databases' cipher, the unlock settings, the typo
 * search's matching, the results' flags and cards, the sealed downloads. The two panes, the honest
 * status and the pacer took it to 1,453 KiB (CI, stop 36). The file lists' background thumbnails
 * (issue 32 item 13: the fetch queue and the connection rule, in the conversation screen's chunk)
 * measured 1,462 KiB on branch h6-thumbs. Sealing large byte fields with WebCrypto before their
 * transaction (issue 28's replay: seal.ts sealBytes/openBytes, the chunk owners' sealing and
 * opening, the downloads' wait for the outbox) measured 1,470 KiB (CI rehearsal ci48). The
 * sign-out dialog in a chunk of its own (the first screen's JavaScript 121 B gzipped lighter) and
 * the first rows shown before the sync worker has started (issue 30) measured 1,472.5 KiB; the page's
 * input checks moved into the sync worker (no zod in the page's chunks) 1,468.9 KiB, and loaded
 * there after its start (a chunk of its own, sharing less: the worker's start no longer waits for
 * zod's classic build) 1,477.2 KiB. The sign-in form in a chunk of its own (issue 30: the signed-in
 * first screen 0.7 KiB gzipped lighter; the page's HTML shows the sign-in head meanwhile) 1,478.1 KiB.
 * The replay's claims and recordings beside its requests, a batch's answers written in bulk and an
 * upload's creation key noted by its claim (issue 30: the replay 1.6× → ~1.1-1.2× its floor; the
 * sync worker's code, precached) 1,480.3 KiB. The answered uploads' bytes dropped apart from the
 * recording of answers, at the replay's end (issue 30: the next uploads' reads no longer wait for
 * each recording) 1,481.5 KiB.
 */
const PRECACHE_BUDGET_KIB = 1_482.5;
/** What pdf.js's code contains wherever the bundler put it (scripts/precache-shell.mjs). */
const PDF_JS = /\bGlobalWorkerOptions\b|\bWorkerMessageHandler\b/;

/** The build files in workbox's precache, and the shell's own entries. */
async function precached(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const names = (await caches.keys()).filter((n) => n.startsWith('workbox-precache'));
    const urls: string[] = [];
    for (const name of names) for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
    return urls;
  });
}

async function bodyOf(request: APIRequestContext, path: string): Promise<Buffer> {
  const response = await request.get(`${base}${path}`);
  expect(response.status(), path).toBe(200);
  return Buffer.from(await response.body());
}

test('the service worker script is within budget, and the first visit precaches the app shell only', async ({ page, request }, info) => {
  const script = await bodyOf(request, '/sw.js');
  const kib = gzipSync(script).length / 1024;
  console.log(`[weight] service worker script: ${(script.length / 1024).toFixed(0)} KiB raw, ${kib.toFixed(1)} KiB gzipped`);
  expect(kib, `sw.js ${kib.toFixed(1)} KiB gzipped`).toBeLessThanOrEqual(SW_BUDGET_KIB);
  const half = script.toString('utf8').match(/\/sw-background\.js\?v=\w+/)?.[0];
  expect(half, 'the IndexedDB half named by sw.js').toBeTruthy();
  const halfKib = gzipSync(await bodyOf(request, half!)).length / 1024;
  console.log(`[weight] its IndexedDB half: ${halfKib.toFixed(1)} KiB gzipped`);
  expect(halfKib, `sw-background.js ${halfKib.toFixed(1)} KiB gzipped`).toBeLessThanOrEqual(BACKGROUND_BUDGET_KIB);

  await signIn(page, info);
  await waitForServiceWorker(page);
  // A worker started again later evaluates its half from what its install stored: by then
  // importScripts() may fetch nothing new (a script it never imported is refused).
  const [worker] = page.context().serviceWorkers();
  await worker.evaluate(() => Object.assign(self, { startedBefore: true }));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Conversations' })).toBeVisible();
  expect(await worker.evaluate(() => 'startedBefore' in self), 'the worker was started again').toBe(false);
  const imports = await worker.evaluate((url) => {
    const scope = self as unknown as { importScripts(u: string): void; parleyBackground?: Record<string, unknown> };
    const attempt = (u: string) => {
      try {
        scope.importScripts(u);
        return 'imported';
      } catch (error) {
        return (error as Error).name;
      }
    };
    return { stored: attempt(url), flush: typeof scope.parleyBackground?.flushOutbox, unknown: attempt(`${url}-never-installed`) };
  }, half!);
  expect(imports).toEqual({ stored: 'imported', flush: 'function', unknown: 'NetworkError' });

  const urls = await precached(page);
  // The offline shell every navigation gets, and what the first screen ran.
  expect(urls).toEqual(expect.arrayContaining(['/', '/manifest.webmanifest']));
  const firstScreen: string[] = await page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => new URL(e.name))
      .filter((u) => u.origin === location.origin && u.pathname.startsWith('/_next/static/') && /\.(js|css)$/.test(u.pathname))
      .map((u) => u.pathname),
  );
  expect(firstScreen.length).toBeGreaterThan(0);
  expect(urls).toEqual(expect.arrayContaining(firstScreen));

  let bytes = 0;
  const withPdfJs: string[] = [];
  for (const url of urls.filter((u) => u.startsWith('/_next/static/'))) {
    const body = await bodyOf(request, url);
    bytes += body.length;
    if (PDF_JS.test(body.toString('latin1'))) withPdfJs.push(url);
  }
  console.log(`[weight] precache: ${urls.length} files, ${(bytes / 1024).toFixed(1)} KiB of build files`);
  expect(withPdfJs, 'precached files holding pdf.js').toEqual([]);
  expect(bytes / 1024, `precache ${(bytes / 1024).toFixed(0)} KiB`).toBeLessThanOrEqual(PRECACHE_BUDGET_KIB);
});

test('pdf.js is fetched when a PDF is first opened, then the viewer shows PDFs with no network at all', async ({ page, context, request }, info) => {
  const contact = unique('sw-pdf');
  const conversation = await (await api(request, info)).createConversation(contact);
  const sent = await request.post(`${base}/v1/files`, {
    headers: userFor(info).auth,
    multipart: { conversation_id: conversation.id, file: { name: 'letter.pdf', mimeType: 'application/pdf', buffer: tinyPdf('Discharge letter') } },
  });
  expect(sent.status()).toBe(201);

  // The conversation's list would otherwise fetch the PDF for its thumbnail in the background
  // (issue 32 item 13), loading pdf.js then: with Data Saver on, the first use is the opening.
  await dataSaverOn(page);
  await signIn(page, info);
  await waitForServiceWorker(page);
  const before = await precached(page);
  // Every build file asked for from here on, by the page, its workers or the service worker.
  const fetched = new Set<string>();
  context.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/_next/static/')) fetched.add(url.pathname);
  });

  await openConversation(page, contact);
  await page.getByRole('link', { name: 'letter.pdf', exact: true }).click();
  const pdfPage = page.getByRole('group', { name: 'Page 1' });
  // pdf.js loads with the first PDF opened (a worker and a large module): a busy machine takes its time.
  await expect(pdfPage.locator('.textLayer')).toContainText('Discharge letter', { timeout: 30_000 });
  // The viewer's code came now, none of it from the precache, and is kept for next time.
  const viewerCode = [...fetched].filter((u) => !before.includes(u));
  expect(viewerCode.length, 'build files fetched on opening the first PDF').toBeGreaterThan(0);
  const codeCache = async () =>
    page.evaluate(async () => {
      const urls: string[] = [];
      for (const name of (await caches.keys()).filter((n) => n.startsWith('parley-code-'))) {
        for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
      }
      return urls;
    });
  await expect.poll(codeCache).toEqual(expect.arrayContaining(viewerCode));

  // ---- no network at all from here: not the API, not the files, not the app's code ----
  await context.route(() => true, (route) => route.abort('internetdisconnected'));
  await context.setOffline(true);
  // Reloaded straight onto the viewer: a fresh page, a fresh pdf.js and its worker, from the device.
  await page.reload();
  // Cold: the app, the list beside the viewer on a wide screen, pdf.js and its worker all start
  // from the device at once; with the other project's browser busy on the same two cores this
  // took over 5 s (CI, stop 36; ~2 s alone). Nothing here is about speed: bench measures that.
  await expect(pdfPage.locator('.textLayer')).toContainText('Discharge letter', { timeout: 20_000 });
  await context.setOffline(false);
});
