// The page's word to the service worker's downloader ("Keep offline" changed, look again). A
// module of its own, importing nothing: the service worker's script takes it without the mirror's
// code (lib/offline/settings.ts reads the mirror through lib/sync/page, zod and Dexie with it).
export const OFFLINE_MESSAGE = 'parley-offline-files';
