// What the service worker uses of the sync core: the background flush (the same engine under the
// same lock, without tus: the service worker has no transport that reports bytes sent) and the
// name of the opened-files cache, and whether a database is sealed (then the service worker keeps
// out of it). An entry of its own, not worker.ts: the service worker is its
// own bundle, and worker.ts would bring it tus-js-client.
export { databaseOfTag, flushOutbox } from './session/background';
export { OPENED_FILES_CACHE } from './session/removal';
export { isSealedDatabase } from './mirror/sealed-probe';
