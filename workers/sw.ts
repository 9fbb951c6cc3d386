/// <reference lib="webworker" />
// The service worker: precaches the app shell and build assets, serves navigations offline, and
// keeps files the user opened so they open offline too. /v1 is never cached (the mirror is the
// offline copy of the data).
import { cleanupOutdatedCaches, createHandlerBoundToURL, matchPrecache, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { CacheFirst } from 'workbox-strategies';
import { ExpirationPlugin } from 'workbox-expiration';
import { databaseOfTag, flushOutbox } from '../lib/sync/background';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: Array<{ url: string; revision: string | null }> };

/** Background Sync's event (not in TypeScript's webworker types). */
interface SyncEvent extends ExtendableEvent {
  readonly tag: string;
}

cleanupOutdatedCaches();

// Turbopack starts web workers from `turbopack-worker-*.js#params=<bootstrap config>`, and the
// worker reads its config from its own URL. A cached response would give the worker the precached
// URL (no fragment) and it would fail; a fresh Response has no URL, so the worker keeps its own.
registerRoute(
  ({ url }) => url.pathname.includes('/turbopack-worker-'),
  async ({ url, request }) => {
    const cached = await matchPrecache(url.pathname);
    if (!cached) return fetch(request);
    return new Response(cached.body, { status: cached.status, headers: cached.headers });
  },
);

precacheAndRoute(self.__WB_MANIFEST);

// Every navigation gets the precached shell: the app routes on the client and reads IndexedDB.
// Requests for React Server Component data (RSC header) are never answered with HTML.
registerRoute(
  new NavigationRoute(createHandlerBoundToURL('/'), {
    denylist: [/^\/v1(\/|$)/, /^\/files\//, /^\/_next\//],
  }),
);

// Files the user opened: a signed URL names one version of one file, so cache-first is safe.
registerRoute(
  ({ url, request }) => url.origin === self.location.origin && url.pathname.startsWith('/files/') && request.method === 'GET' && !request.headers.has('range'),
  new CacheFirst({
    cacheName: 'parley-files',
    plugins: [new ExpirationPlugin({ maxEntries: 300, maxAgeSeconds: 30 * 24 * 3600, purgeOnQuotaError: true })],
  }),
);

// A new version waits until the user accepts "reload to update".
self.addEventListener('message', (event) => {
  if (event.data?.type === 'SKIP_WAITING') void self.skipWaiting();
});

// Background Sync: changes queued while the app was closed are sent once connectivity returns,
// by the same engine under the same lock as the sync worker (lib/sync/background.ts). A rejected
// event is retried by the browser later.
self.addEventListener('sync', (event) => {
  const sync = event as SyncEvent;
  const database = databaseOfTag(sync.tag);
  if (!database) return;
  sync.waitUntil(
    (async () => {
      // While the app is on screen its own sync worker sends the changes (with upload progress,
      // and pulling too): the event is handed back (rejected), so the browser keeps the tag and
      // fires it again later — by then the app may be closed. (Chromium fires a tag at once when
      // online, which would otherwise race the worker for every write.)
      if (await appOnScreen()) throw new Error('the app is open: its sync worker sends the changes');
      const result = await flushOutbox({ database, fetch: (input, init) => fetch(input, init), locks: self.navigator.locks });
      if (result === 'retry') throw new Error('the outbox could not be sent yet');
    })(),
  );
});

async function appOnScreen(): Promise<boolean> {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  return windows.some((client) => (client as WindowClient).visibilityState === 'visible');
}
