// The device's registry of local databases: which database holds which user's data on which
// server. It lets a new token of the same user find that user's database (and its unsynced
// changes), and sign-out find every database of the user. Kept in localStorage beside the
// token: small, synchronous (the app must open the right database offline, at once), per origin.

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface LocalDatabase {
  /** IndexedDB name (see lib/sync/mirror/db.ts). */
  name: string;
  /** The server it mirrors (the origin serving /v1). */
  origin: string;
  /** The user it belongs to, once the server said so (GET /v1/me); null while unknown. */
  userId: string | null;
  /** Named after a token by an earlier version, and adopted. */
  legacy?: boolean;
  /** Sign-out began removing it; finished at the next start if it was interrupted. */
  removing?: boolean;
  /**
   * What the database held, kept outside it so a database the browser cleared is noticed
   * (lib/view/mirror.ts): it had synced or held changes once, and how many were unsent.
   */
  mirror?: { filled: boolean; pending: number };
}

const REGISTRY_KEY = 'parley:databases';

function isEntry(value: unknown): value is LocalDatabase {
  const v = value as LocalDatabase;
  return typeof v === 'object' && v !== null && typeof v.name === 'string' && typeof v.origin === 'string' && (v.userId === null || typeof v.userId === 'string');
}

export function readRegistry(storage: StorageLike): LocalDatabase[] {
  try {
    const parsed: unknown = JSON.parse(storage.getItem(REGISTRY_KEY) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter(isEntry) : [];
  } catch {
    return [];
  }
}

function writeRegistry(storage: StorageLike, entries: LocalDatabase[]): void {
  if (entries.length === 0) storage.removeItem(REGISTRY_KEY);
  else storage.setItem(REGISTRY_KEY, JSON.stringify(entries));
}

/** Adds the entry, or replaces the one of the same name. */
export function register(storage: StorageLike, entry: LocalDatabase): void {
  writeRegistry(storage, [...readRegistry(storage).filter((e) => e.name !== entry.name), entry]);
}

export function unregister(storage: StorageLike, names: readonly string[]): void {
  writeRegistry(storage, readRegistry(storage).filter((e) => !names.includes(e.name)));
}

export function entryFor(storage: StorageLike, name: string): LocalDatabase | undefined {
  return readRegistry(storage).find((e) => e.name === name);
}
