// The viewer with S3_PRESIGNED_REDIRECT=true, in Chromium: /files/… answers with a redirect to a
// presigned URL at the object store (another origin), and the app's code must read the bytes
// there — its Content-Security-Policy names the store's origin (and only then), the bucket allows
// the app's origin (CORS, the operator's part: README). The built app (`.next/parley/server.mjs`)
// in front of a real S3-compatible server (s3rver), both on free ports, stopped and removed after.
import path from 'node:path';
import { PutBucketCorsCommand } from '@aws-sdk/client-s3';
import { expect, test } from '@playwright/test';
import { api, honouringRetryAfter, unique, userFor, waitForServiceWorker } from './helpers';
import { appEnv, CHECKOUT, startApp, tempDir, type AppProcess } from './app-process';
import { openThrough, signInThrough } from './cutting-proxy';
import { startS3Server, type S3TestServer } from '../helpers/s3';

const SERVER = '.next/parley/server.mjs';
const ORU = [
  'MSH|^~\\&|LAB|ST MARY HOSPITAL|EHR|WARD 3|202401021200||ORU^R01|MSG0001|P|2.5',
  'PID|1||123456^^^HOSP^MR||DOE^JANE||19800101|F',
  'OBX|1|NM|718-7^Hemoglobin^LN||10.2|g/dL|12.0-15.5|L|||F',
].join('\r');

test.describe('the viewer when files redirect to the object store', () => {
  let scratch: ReturnType<typeof tempDir>;
  let s3: S3TestServer;
  let app: AppProcess;

  test.beforeAll(async () => {
    scratch = tempDir('parley-viewer-s3-');
    s3 = await startS3Server();
    const { bucket, env } = await s3.newBucket();
    app = await startApp([SERVER], CHECKOUT, appEnv(path.join(scratch.dir, 'app'), { ...env, S3_PRESIGNED_REDIRECT: 'true' }));
    // The operator's part: the bucket lets the app's origin read (GET) with CORS.
    await s3.client().send(
      new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: [app.url], AllowedMethods: ['GET', 'HEAD'], AllowedHeaders: ['*'] }] } }),
    );
  });

  test.afterAll(async () => {
    await app?.stop();
    await s3?.stop();
    scratch?.remove();
  });

  test('a file opens in the viewer from the store it is redirected to, and again offline', async ({ page, context, request }, info) => {
    const contact = unique('viewer-s3');
    const conversation = await (await api(request, info, app.url)).createConversation(contact);
    const r = await honouringRetryAfter(() =>
      request.post(`${app.url}/v1/files`, {
        headers: userFor(info).auth,
        multipart: { conversation_id: conversation.id, file: { name: 'cbc.hl7', mimeType: 'text/plain', buffer: Buffer.from(ORU) } },
      }),
    );
    expect(r.status()).toBe(201);
    const file = (await r.json()) as { file_url: string };
    // The bytes are at the store: /files/… redirects there.
    const asset = new URL(file.file_url);
    const redirect = await request.get(`${app.url}${asset.pathname}${asset.search}`, { maxRedirects: 0 });
    expect(redirect.status()).toBe(302);
    expect(new URL(redirect.headers().location!).origin).toBe(new URL(s3.endpoint).origin);
    // The page's policy lets the app read there, and nowhere else new.
    const csp = (await request.get(`${app.url}/`)).headers()['content-security-policy']!;
    expect(csp).toContain(`connect-src 'self' ${new URL(s3.endpoint).origin};`);
    // The service worker (which fetches the file and keeps it) runs under its script's policy: the same.
    expect((await request.get(`${app.url}/sw.js`)).headers()['content-security-policy']).toBe(csp);

    await signInThrough(page, info, app.url);
    await waitForServiceWorker(page);
    await openThrough(page, contact);
    const open = async () => {
      await page.getByRole('link', { name: 'cbc.hl7', exact: true }).click();
      await expect(page.getByRole('heading', { level: 1, name: 'cbc.hl7' })).toBeVisible();
      // Cards on a phone, a table on a wide screen: either way the result and its flag.
      const results = page.getByLabel('Results');
      await expect(results).toContainText('Hemoglobin (718-7)');
      await expect(results.locator('.flag').first()).toHaveText('↓ Low');
      await expect(page.getByRole('link', { name: /Open the server’s copy/ })).toHaveCount(0);
    };
    await open();
    // Kept by the service worker under the file's URL, from the store's answer: it opens offline.
    await expect.poll(() => page.evaluate(async () => (await (await caches.open('parley-files')).keys()).some((r) => r.url.includes('cbc.hl7')))).toBe(true);
    await page.getByRole('link', { name: 'Back' }).click();
    await context.route(/\/(files|v1)\//, (route) => route.abort('internetdisconnected'));
    await context.route(`${new URL(s3.endpoint).origin}/**`, (route) => route.abort('internetdisconnected'));
    await open();
  });
});
