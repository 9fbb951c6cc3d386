// Whether a user's database holds sealed rows (seal.ts), told without its keys: for the service
// worker, which never holds them. On such a device it must not keep anything of a file in clear
// (Cache Storage) nor write to the database (its writes would be in clear), so it leaves files
// and the outbox to the page and its sync worker.
import { Dexie, type DexieOptions } from 'dexie';

/** Tables the first sync writes at once: one sealed row in any of them marks the database. */
const PROBED = ['meta', 'outbox', 'conversations', 'files'];

export async function isSealedDatabase(name: string, options: DexieOptions = {}): Promise<boolean> {
  // Opened without a version and without the app's middleware: the rows as IndexedDB holds them.
  const raw = new Dexie(name, { ...options, addons: [] });
  try {
    await raw.open();
    for (const table of raw.tables.filter((t) => PROBED.includes(t.name))) {
      const [row]: (Record<string, unknown> | undefined)[] = await table.limit(1).toArray();
      if (row && row.$ instanceof Uint8Array) return true;
    }
    return false;
  } catch {
    return false; // gone (signed out) or never made: nothing of it to keep in clear either
  } finally {
    raw.close();
  }
}
