// Issue 27, item 2: an uploaded SVG's script never runs in the app's origin. The SVG below, run as
// a document, reads the user's token from localStorage, writes a marker there and calls the API
// with the token. The viewer shows it (as pixels: it must still display), and then every blob: or
// data: URL the app made — recorded as it made them, and read from the page's src/href
// attributes — is opened as a page in the same browser context, as "Open image in new
// tab" or a tap on Download would: the marker must stay absent, and no request may carry it.
// Run for a file viewed from the server, the same file opened again with no network (the
// device's copy), and an upload still waiting to be sent (its queued bytes).
import { expect, test, type APIRequestContext, type BrowserContext, type Page, type TestInfo } from '@playwright/test';
import { api, base, honouringRetryAfter, openConversation, signIn, unique, userFor, waitForServiceWorker } from './helpers';

const MARKER = 'svg-script-ran';

/** A red 60×40 picture with a script that, if it runs in the app's origin, takes the token and uses it. */
const EVIL_SVG = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40" viewBox="0 0 60 40">
  <rect width="60" height="40" fill="#d02020"/>
  <script>
    document.documentElement.setAttribute('data-ran', self.origin);
    try { localStorage.setItem('${MARKER}', String(localStorage.getItem('parley:token'))); } catch (e) {}
    try { fetch(self.origin + '/v1/conversations?${MARKER}=1', { headers: { authorization: 'Bearer ' + localStorage.getItem('parley:token') } }); } catch (e) {}
  </script>
</svg>`;

const INERT = /^(image\/(png|jpeg|gif|webp|avif|bmp|x-icon|vnd\.microsoft\.icon)|application\/octet-stream)$/;

type Made = { url: string; type: string; origin: string };

/** Records every object URL made in any frame of the context (before any app code runs). */
async function recordObjectUrls(context: BrowserContext): Promise<Made[]> {
  const made: Made[] = [];
  await context.exposeBinding('__parleyTestObjectUrl', (_source, url: string, type: string, origin: string) => {
    made.push({ url, type, origin });
  });
  await context.addInitScript(() => {
    const create = URL.createObjectURL.bind(URL);
    URL.createObjectURL = (object: Blob | MediaSource) => {
      const url = create(object);
      const w = window as unknown as { __parleyTestObjectUrl?: (url: string, type: string, origin: string) => void };
      w.__parleyTestObjectUrl?.(url, object instanceof Blob ? object.type : 'MediaSource', self.origin);
      return url;
    };
  });
  return made;
}

function svgRequests(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on('request', (request) => {
    if (request.url().includes(MARKER)) seen.push(request.url());
  });
  return seen;
}

async function openFile(page: Page, name: string) {
  await page.getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

/** The SVG is on screen as a picture of its size (60×40, drawn red), whatever element shows it. */
async function expectShown(page: Page, name: string) {
  const image = page.locator('.viewer-body').getByRole('img', { name });
  await expect(image).toBeVisible();
  const drawn = await image.evaluate(async (element: HTMLImageElement | HTMLCanvasElement) => {
    if (element instanceof HTMLImageElement) await element.decode();
    const width = element instanceof HTMLImageElement ? element.naturalWidth : element.width;
    const height = element instanceof HTMLImageElement ? element.naturalHeight : element.height;
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(element, 0, 0);
    const [r, g, b, a] = ctx.getImageData(Math.floor(width / 2), Math.floor(height / 2), 1, 1).data;
    const box = element.getBoundingClientRect();
    return { width, height, ratio: width / height, shownWidth: box.width, shownHeight: box.height, centre: [r, g, b, a] };
  });
  expect(drawn.width).toBeGreaterThan(0);
  expect(drawn.height).toBeGreaterThan(0);
  expect(drawn.ratio).toBeCloseTo(1.5, 1);
  expect(drawn.shownWidth).toBeGreaterThan(0);
  expect(drawn.shownHeight).toBeGreaterThan(0);
  expect(drawn.centre).toEqual([0xd0, 0x20, 0x20, 255]);
}

/** Every blob:/data: URL of the page: the ones recorded as made, and those in src/href attributes now. */
async function urlsOf(page: Page, made: Made[]): Promise<string[]> {
  const inPage = await page.evaluate(() =>
    [...document.querySelectorAll('[src], [href]')].flatMap((el) => [el.getAttribute('src'), el.getAttribute('href')]).filter((u): u is string => !!u && /^(blob|data):/i.test(u)),
  );
  return [...new Set([...made.map((m) => m.url), ...inPage])];
}

/**
 * Opens each URL as a top-level page in the same context (its own origin's storage, the user's
 * token in it) and checks that nothing ran: no marker in the app's localStorage, no marked request.
 */
async function openEachAsPage(context: BrowserContext, page: Page, urls: string[], requests: string[]) {
  expect(urls.length).toBeGreaterThan(0);
  const ran: string[] = [];
  for (const url of urls) {
    const tab = await context.newPage();
    // A download (octet-stream), a revoked URL or a refused data: navigation throws: nothing was shown.
    if (await tab.goto(url).then(() => true, () => false)) {
      // The script marks its own document first: read in the page itself, no storage to wait for.
      const origin = await tab.evaluate(() => document.documentElement?.getAttribute('data-ran') ?? null).catch(() => null);
      if (origin !== null) ran.push(`${url} ran as ${origin}`);
    }
    await tab.close();
  }
  expect(ran, 'a script of the SVG ran').toEqual([]);
  expect(await page.evaluate((key) => localStorage.getItem(key), MARKER), 'a script of the SVG ran in the app origin').toBeNull();
  expect(requests, 'a script of the SVG called the API').toEqual([]);
}

/**
 * Object URLs made in the app's origin carry an inert type (a raster image's, or octet-stream). The
 * only other kind is the SVG renderer's own blob, made inside its sandboxed frame, whose origin is
 * opaque ("null": no storage, no token, no API) — recorded when the binding reaches that frame.
 */
function expectInertTypes(made: Made[]) {
  const own = made.filter((m) => m.origin === base);
  expect(own.length).toBeGreaterThan(0);
  for (const m of own) expect(m.type, m.url).toMatch(INERT);
  for (const m of made.filter((m) => !INERT.test(m.type))) expect(m.origin, `${m.url} (${m.type})`).toBe('null');
}

async function seedSvg(request: APIRequestContext, info: TestInfo) {
  const contact = unique('svg');
  const conversation = await (await api(request, info)).createConversation(contact);
  const r = await honouringRetryAfter(() =>
    request.post(`${base}/v1/files`, {
      headers: userFor(info).auth,
      multipart: { conversation_id: conversation.id, file: { name: 'chart.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(EVIL_SVG) } },
    }),
  );
  expect(r.status()).toBe(201);
  return { contact };
}

test('the probe works: this SVG opened as a page of the app origin does run its script', async ({ page, context }, info) => {
  // Without this, a marker that never appears would prove nothing.
  const requests = svgRequests(context);
  await signIn(page, info);
  const url = await page.evaluate((svg) => URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' })), EVIL_SVG);
  const tab = await context.newPage();
  await tab.goto(url);
  expect(await tab.evaluate(() => document.documentElement.getAttribute('data-ran'))).toBe(base);
  await tab.close();
  await expect.poll(() => page.evaluate((key) => localStorage.getItem(key), MARKER)).toBe(userFor(info).token);
  await expect.poll(() => requests.length).toBeGreaterThan(0);
});

test('an SVG from the server, then its offline copy: shown as a picture, and no URL the app made runs its script', async ({ page, context, request }, info) => {
  const { contact } = await seedSvg(request, info);
  const made = await recordObjectUrls(context);
  const requests = svgRequests(context);
  await signIn(page, info);
  await waitForServiceWorker(page);
  await openConversation(page, contact);

  await openFile(page, 'chart.svg');
  await expectShown(page, 'chart.svg');
  await expect(page.getByRole('link', { name: 'Download' })).toHaveAttribute('href', /^blob:/);
  await openEachAsPage(context, page, await urlsOf(page, made), requests);
  expectInertTypes(made);

  // Opened once: the device's copy, with no network.
  await page.getByRole('link', { name: 'Back' }).click();
  await expect.poll(() => page.evaluate(async () => (await (await caches.open('parley-files')).keys()).some((r) => r.url.includes('chart.svg')))).toBe(true);
  await context.route(/\/(files|v1)\//, (route) => route.abort('internetdisconnected'));
  made.length = 0;
  await openFile(page, 'chart.svg');
  await expectShown(page, 'chart.svg');
  await openEachAsPage(context, page, await urlsOf(page, made), requests);
  expectInertTypes(made);
});

test('an SVG waiting to upload: shown from its queued bytes as a picture, and no URL the app made runs its script', async ({ page, context, request }, info) => {
  const contact = unique('svg-queued');
  await (await api(request, info)).createConversation(contact);
  const made = await recordObjectUrls(context);
  const requests = svgRequests(context);
  await signIn(page, info);
  await openConversation(page, contact);
  // Writes cannot reach the server: the upload stays queued, its bytes on the device.
  await context.route(/\/v1\//, (route) => (route.request().method() === 'GET' ? route.continue() : route.abort('internetdisconnected')));
  await page.getByLabel('Upload files').setInputFiles({ name: 'sketch.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(EVIL_SVG) });
  await openFile(page, 'sketch.svg');
  await expect(page.getByText('waiting to upload')).toBeVisible();
  await expectShown(page, 'sketch.svg');
  await expect(page.getByRole('link', { name: 'Download' })).toHaveAttribute('href', /^blob:/);
  await openEachAsPage(context, page, await urlsOf(page, made), requests);
  expectInertTypes(made);
});
