/// <reference lib="webworker" />
// The service worker: precaches the app shell, caches the rest of the build's code on first use,
// serves navigations offline, keeps files the user opened so they open offline too, and downloads
// the files of conversations kept offline (lib/offline/downloader.ts says why here and not in the
// sync worker). /v1 is never cached (the mirror is the offline copy of the data). The flush and the
// downloads are its IndexedDB half (./sw-background.ts), evaluated on first need.
import { cleanupOutdatedCaches, createHandlerBoundToURL, matchPrecache, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import type { DownloaderDeps } from '../lib/offline/downloader';
import { cacheStorageFiles } from '../lib/offline/file-bytes';
import { pauseReason, type ConnectionLike } from '../lib/offline/policy';
import { OFFLINE_MESSAGE } from '../lib/offline/message';
import { databaseOfTag, OPENED_FILES_CACHE } from '../lib/sync/service-worker';
import type { Background } from './sw-background';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: Array<{ url: string; revision: string | null }> };
/** The build this worker came with, and where its IndexedDB half is (scripts/build-sw.mjs). */
declare const PARLEY_BUILD_ID: string;
declare const PARLEY_BACKGROUND_URL: string;

/**
 * The flush and the downloader (workers/sw-background.ts), evaluated on first need. A service
 * worker may fetch a script with importScripts() only until it is installed; later calls are
 * answered from the scripts stored then. So the install imports it once (stored with this
 * version), and a later start evaluates it only when an event needs it.
 */
let background: Background | undefined;
function loadBackground(): Background {
  if (!background) {
    importScripts(PARLEY_BACKGROUND_URL);
    background = (self as unknown as { parleyBackground: Background }).parleyBackground;
  }
  return background;
}
self.addEventListener('install', () => {
  loadBackground();
});

/**
 * Code the shell does not need at start — the viewer's pdf.js and its workers, anything not in the
 * precache — kept here once it was fetched: a hashed build file never changes, so a copy is always
 * right. One cache per build; an activating version drops the older ones (the precache is
 * workbox's to clean).
 */
const CODE_CACHE_PREFIX = 'parley-code-';
const CODE_CACHE = `${CODE_CACHE_PREFIX}${PARLEY_BUILD_ID}`;

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
    const cached = (await matchPrecache(url.pathname)) ?? (await caches.match(url.pathname, { cacheName: CODE_CACHE }));
    if (!cached) return fetch(request);
    return new Response(cached.body, { status: cached.status, headers: cached.headers });
  },
);

precacheAndRoute(self.__WB_MANIFEST);

// The rest of the build's files (not precached: the app shell is, scripts/build-sw.mjs) on first use.
registerRoute(
  ({ url, request }) => url.origin === self.location.origin && url.pathname.startsWith('/_next/static/') && request.method === 'GET',
  async ({ request, event }) => {
    const cache = await caches.open(CODE_CACHE);
    const cached = await cache.match(request.url);
    if (cached) return cached;
    const response = await fetch(request);
    if (response.status === 200) (event as ExtendableEvent).waitUntil(cache.put(request.url, response.clone()).catch(() => {}));
    return response;
  },
);
self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith(CODE_CACHE_PREFIX) && name !== CODE_CACHE) await caches.delete(name);
    })(),
  );
});

// Every navigation gets the precached shell: the app routes on the client and reads IndexedDB.
// Requests for React Server Component data (RSC header) are never answered with HTML. Single
// sign-on's navigations (/auth/oidc/start, the provider's way back to /auth/oidc/callback) go to the server.
registerRoute(
  new NavigationRoute(createHandlerBoundToURL('/'), {
    denylist: [/^\/v1(\/|$)/, /^\/files\//, /^\/_next\//, /^\/auth\//],
  }),
);

// Files: a signed URL names one version of one file, so a cached copy is always right. Served
// from the cache when there ("parley-files": files the user opened, and those of conversations
// kept offline, downloaded by lib/offline/downloader.ts), else from the network and cached.
// Every opening is recorded (last opened, for least-recently-opened eviction); the budget is
// applied by the downloader's pass that follows. A Range request for a cached file is answered
// from the cached copy (PDF viewers ask for ranges).
// A request that asks not to be stored (`cache: 'no-store'`: a thumbnail's fetch) is not kept.
registerRoute(
  ({ url, request }) => url.origin === self.location.origin && url.pathname.startsWith('/files/') && request.method === 'GET',
  async ({ request, event }) => {
    // A device with a lock: nothing of a file is kept in clear (issue 28), the network answers.
    if (await deviceIsSealed()) return fetch(request);
    const cache = await caches.open(OPENED_FILES_CACHE);
    const cached = await cache.match(request.url);
    const extend = (work: Promise<unknown>) => (event as ExtendableEvent).waitUntil(work.catch(() => {}));
    if (cached) {
      if (request.cache !== 'no-store') extend(opened(request.url, Number(cached.headers.get('content-length') ?? 0)));
      return request.headers.has('range') ? loadBackground().partialResponse(request, cached) : cached;
    }
    if (request.headers.has('range')) return fetch(request);
    // Asked not to be stored (`cache: 'no-store'`): the page fetches a file only to draw its
    // thumbnail (lib/view/viewer/thumbnail-fetch.ts) — no copy of it is kept, and it was not opened.
    if (request.cache === 'no-store') return fetch(request);
    const response = await fetch(request);
    if (response.status === 200) {
      const copy = response.clone();
      extend(
        (async () => {
          const bytes = await copy.blob();
          const headers = new Headers(copy.headers);
          headers.set('content-length', String(bytes.size));
          await cache.put(request.url, new Response(bytes, { status: 200, headers }));
          await opened(request.url, bytes.size);
        })(),
      );
    }
    return response;
  },
);

const downloader: DownloaderDeps = {
  fetch: (input, init) => fetch(input, init),
  store: cacheStorageFiles(caches, OPENED_FILES_CACHE),
  origin: self.location.origin,
  connection: () => (self.navigator as Navigator & { connection?: ConnectionLike }).connection ?? null,
  quota: async () => (await self.navigator.storage?.estimate?.().catch(() => null))?.quota ?? null,
  now: () => Date.now(),
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The app's databases on this device (sign-out deletes them; the downloader never creates one). */
const told = new Set<string>();
async function appDatabases(): Promise<string[]> {
  const listed = (await indexedDB.databases?.().catch(() => [])) ?? [];
  return [...new Set([...listed.map((d) => d.name ?? '').filter((n) => n.startsWith('parley-sync-')), ...told])];
}

/**
 * Whether the user's databases here are sealed (a device with a lock, lib/sync/mirror/seal.ts).
 * The service worker holds no keys: it then keeps no file in Cache Storage (and drops what it
 * kept before the lock), downloads nothing for "Keep offline" and sends no outbox — the page and
 * its sync worker, which hold the keys while unlocked, do. Once sealed, a database stays sealed.
 */
const sealed = new Set<string>();
async function databaseIsSealed(database: string): Promise<boolean> {
  if (sealed.has(database)) return true;
  if (!(await loadBackground().isSealedDatabase(database))) return false;
  sealed.add(database);
  await caches.delete(OPENED_FILES_CACHE);
  return true;
}
async function deviceIsSealed(): Promise<boolean> {
  for (const database of await appDatabases()) if (await databaseIsSealed(database)) return true;
  return false;
}

/** One pass per database at a time; a wake during a pass runs one more after it. */
const passes = new Map<string, { running: Promise<void>; again: boolean }>();
function pass(database: string): Promise<void> {
  const current = passes.get(database);
  if (current) {
    current.again = true;
    return current.running;
  }
  const entry = { running: Promise.resolve(), again: false };
  entry.running = (async () => {
    try {
      do {
        entry.again = false;
        if (await databaseIsSealed(database)) break;
        await loadBackground().runPass(database, downloader).catch((error) => console.warn('[parley] keep offline:', error));
      } while (entry.again);
    } finally {
      passes.delete(database);
    }
  })();
  passes.set(database, entry);
  return entry.running;
}

async function passAll(): Promise<void> {
  await Promise.all((await appDatabases()).map(pass));
}

async function opened(url: string, size: number): Promise<void> {
  for (const database of await appDatabases()) {
    if (await databaseIsSealed(database)) continue;
    if (await loadBackground().noteOpened(database, url, size > 0 ? { size } : null, downloader)) await pass(database);
  }
}

// Wakes: the page asks (a "Keep offline" toggle, a setting, the Device screen) …
self.addEventListener('message', (event) => {
  if (event.data?.type !== OFFLINE_MESSAGE || typeof event.data.database !== 'string') return;
  told.add(event.data.database);
  event.waitUntil(pass(event.data.database));
});
// … the app's own requests (at start and while it syncs), at most every 30 s …
let lastWake = 0;
self.addEventListener('fetch', (event) => {
  const now = Date.now();
  if (now - lastWake < 30_000) return;
  lastWake = now;
  event.waitUntil(passAll());
});
// … and a connection that stops being slow or metered while the worker runs.
(self.navigator as Navigator & { connection?: EventTarget & ConnectionLike }).connection?.addEventListener?.('change', () => {
  if (!pauseReason(downloader.connection())) void passAll();
});

// A new version waits until the user accepts "reload to update".
self.addEventListener('message', (event) => {
  if (event.data?.type === 'SKIP_WAITING') void self.skipWaiting();
});

// Background Sync: changes queued while the app was closed are sent once connectivity returns,
// by the same engine under the same lock as the sync worker (lib/sync/session/background.ts). A rejected
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
      // Sealed: only the app, unlocked, can read the outbox (a tag registered before the lock).
      if (await databaseIsSealed(database)) return;
      const result = await loadBackground().flushOutbox({ database, fetch: (input, init) => fetch(input, init), locks: self.navigator.locks });
      if (result === 'retry') throw new Error('the outbox could not be sent yet');
    })(),
  );
});

async function appOnScreen(): Promise<boolean> {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  return windows.some((client) => (client as WindowClient).visibilityState === 'visible');
}
