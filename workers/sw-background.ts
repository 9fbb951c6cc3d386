/// <reference lib="webworker" />
// The service worker's IndexedDB half (workers/sw.ts): the background flush of the outbox and the
// downloads of files kept offline — the sync engine, the downloader and Dexie, most of the
// worker's code. A classic script of its own (public/sw-background.js), imported by sw.ts: stored
// with the worker's version at install, evaluated only when an event first needs it, so the worker
// starts — and answers a navigation — without evaluating it (issue 30).
import { noteOpened, partialResponse, runPass } from '../lib/offline/downloader';
import { flushOutbox, isSealedDatabase } from '../lib/sync/service-worker';

const background = { flushOutbox, isSealedDatabase, noteOpened, partialResponse, runPass };
export type Background = typeof background;

(self as unknown as { parleyBackground: Background }).parleyBackground = background;
