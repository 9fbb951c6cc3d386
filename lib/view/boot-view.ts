// What the page's HTML shows before its scripts have run (issue 30: the largest paint of the first
// screen came only after all of them). The page is one static, precached document for every user and
// route, so the server cannot choose: a tiny inline script in <head> (app/layout.tsx) reads what the
// app itself will read first — whether a session, and a lock, are on this device, and the route —
// and marks <html data-boot=…>; the CSS shows the matching part of BootShell. No patient data is
// read or shown: only whether keys exist and the address's route.

/** `list`: signed in, on the conversations list; `app`: signed in, another route; `signin`; `plain`: locked (the lock screen comes first). */
export type BootView = 'list' | 'app' | 'signin' | 'plain';

export type BootKeys = { token: string; lock: string };

/**
 * Self-contained (it is sent as source in the inline script: no imports, no outer names). Routes
 * as router.ts parseRoute reads them (a test holds the two together).
 */
export function bootView(storage: { getItem(key: string): string | null }, search: string, keys: BootKeys): BootView {
  if (storage.getItem(keys.lock) !== null) return 'plain';
  if (storage.getItem(keys.token) === null) return 'signin';
  const params = new URLSearchParams(search);
  const view = params.get('view');
  return params.get('c') || params.get('file') || view === 'files' || view === 'device' || view === 'devices' ? 'app' : 'list';
}

/** The inline script: best effort (storage may be refused), `plain` when it cannot tell. */
export function bootScript(keys: BootKeys): string {
  return `try{document.documentElement.dataset.boot=(${bootView.toString()})(localStorage,location.search,${JSON.stringify(keys)})}catch(e){document.documentElement.dataset.boot="plain"}`;
}
