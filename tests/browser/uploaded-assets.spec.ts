// An uploaded file must never run as script or apply as a style sheet on the app's origin. The
// app's own CSP allows scripts from 'self', and file_url is on 'self': so this test does what an
// attacker would — uploads JavaScript (every JavaScript MIME type) and CSS through the API, then
// references them from a page of the app with <script src>, <script type=module src> and
// <link rel=stylesheet> — and checks that nothing ran and nothing applied. Through both servers:
// npm start's (node:http fast path, with the app's CSP) and plain `next start`'s route handlers.
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { APP_PORT, ROUTE_HANDLER_PORT } from '../../playwright.config';
import { unique, userFor } from './helpers';

const JAVASCRIPT_TYPES = [
  'text/javascript',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/x-ecmascript',
  'text/ecmascript',
  'text/jscript',
  'text/livescript',
  'text/javascript1.0',
  'text/javascript1.5',
  'text/x-javascript',
  'text/x-ecmascript',
];

const SERVERS = [
  { name: "npm start's server", base: `http://127.0.0.1:${APP_PORT}` },
  { name: 'the route handlers (next start)', base: `http://127.0.0.1:${ROUTE_HANDLER_PORT}` },
];

async function uploadAll(request: APIRequestContext, base: string, auth: Record<string, string>) {
  const created = await request.post(`${base}/v1/conversations`, { headers: auth, data: { contact_id: unique('assets') } });
  expect(created.status()).toBe(201);
  const conversation = (await created.json()).id as string;
  const upload = async (name: string, mimeType: string, body: string) => {
    const r = await request.post(`${base}/v1/files`, {
      headers: auth,
      multipart: { conversation_id: conversation, file: { name, mimeType, buffer: Buffer.from(body) } },
    });
    expect(r.status(), `${mimeType}: ${await r.text()}`).toBe(201);
    const file = await r.json();
    expect(file.file_type).toBe(mimeType); // what was declared is still what the API reports
    expect(new URL(file.file_url).origin).toBe(base); // the same origin as the page below
    return file.file_url as string;
  };
  const scripts: Array<{ type: string; url: string }> = [];
  for (const type of JAVASCRIPT_TYPES) {
    // Were it to run, it would leave its type behind in the page.
    scripts.push({ type, url: await upload('payload.js', type, `(window.__uploadedRan ||= []).push(${JSON.stringify(type)});`) });
  }
  const style = await upload('payload.css', 'text/css', 'html { --uploaded-style: applied; } body { outline: 7px solid rgb(1, 2, 3) !important; }');
  return { scripts, style };
}

/** Adds an element to the page and waits for its load or error event: no guessing how long a load takes. */
function inject(page: Page, tag: 'script' | 'module' | 'link', url: string): Promise<string> {
  return page.evaluate(
    ({ tag, url }) =>
      new Promise<string>((resolve) => {
        const element =
          tag === 'link'
            ? Object.assign(document.createElement('link'), { rel: 'stylesheet', href: url })
            : Object.assign(document.createElement('script'), { src: url, type: tag === 'module' ? 'module' : 'text/javascript' });
        element.addEventListener('load', () => resolve('load'));
        element.addEventListener('error', () => resolve('error'));
        document.head.append(element);
      }),
    { tag, url },
  );
}

for (const server of SERVERS) {
  test(`uploaded JavaScript and CSS never run or apply on the app's origin: ${server.name}`, async ({ page, request }, info) => {
    const { auth } = userFor(info);
    const { scripts, style } = await uploadAll(request, server.base, auth);

    await page.goto(`${server.base}/`);
    for (const { type, url } of scripts) {
      expect(await inject(page, 'script', url), `<script src> of ${type}`).toBe('error');
      expect(await inject(page, 'module', url), `<script type=module src> of ${type}`).toBe('error');
    }
    expect(await page.evaluate(() => (window as { __uploadedRan?: string[] }).__uploadedRan ?? [])).toEqual([]);

    expect(await inject(page, 'link', style), '<link rel=stylesheet>').toBe('error');
    const applied = await page.evaluate(() => ({
      property: getComputedStyle(document.documentElement).getPropertyValue('--uploaded-style'),
      outline: getComputedStyle(document.body).outlineWidth,
    }));
    expect(applied.property).toBe('');
    expect(applied.outline).not.toBe('7px');
  });
}
