// Rows written in clear before the device had a lock (issue 28): an earlier version, or a
// deployment that turned the lock on later. The seal middleware opens such rows as they are, but
// they stay readable on disk, and their index keys are the words themselves where a sealed row has
// keyed tokens, so a query on a token (a contact, the search) would not find them either. Once the
// keys exist, every such row is written again through the middleware, which seals it.
//
// The clear rows are found on a connection without the middleware (the rows as IndexedDB holds
// them), a page at a time so a table of queued upload chunks is never held in memory whole; each
// page is then read again and written back in one transaction of the app's own connection, so a
// row another realm changed in between is sealed as it now is, never overwritten by an old copy.
// Idempotent: a pass cut short is finished by the next one.
import { Dexie, type DexieOptions, type IndexableType } from 'dexie';
import { currentSealer, MirrorLockedError } from './seal';

/** Rows per page: small enough for tables of 256 KiB chunks. */
const PAGE = 32;

function isClear(value: unknown): boolean {
  return !(typeof value === 'object' && value !== null && '$' in value && value.$ instanceof Uint8Array);
}

/**
 * Seals every row of `db` (a connection with the seal middleware, keys set) still in clear;
 * returns how many it sealed. `options` as the database was opened with (tests' IDBFactory).
 */
export async function sealClearRows(db: Dexie, options: DexieOptions = {}): Promise<number> {
  if (!currentSealer()) throw new MirrorLockedError('The device has no keys yet: nothing can be sealed.');
  if (!db.isOpen()) await db.open();
  const raw = new Dexie(db.name, { ...options, addons: [] });
  let sealed = 0;
  try {
    await raw.open();
    for (const rawTable of raw.tables) {
      if (!db.tables.some((t) => t.name === rawTable.name)) continue;
      const table = db.table(rawTable.name);
      let after: IndexableType | undefined;
      for (;;) {
        const page = after === undefined ? rawTable.toCollection() : rawTable.where(':id').above(after);
        const clearKeys: IndexableType[] = [];
        let seen = 0;
        await page.limit(PAGE).each((value, cursor) => {
          seen += 1;
          after = cursor.primaryKey;
          if (isClear(value)) clearKeys.push(cursor.primaryKey);
        });
        if (clearKeys.length > 0) {
          sealed += await db.transaction('rw', table, async () => {
            const rows = await table.bulkGet(clearKeys);
            // Every table of ours keeps its key in the row (inbound), so the rows are all a put needs.
            const present = rows.filter((row) => row !== undefined);
            await table.bulkPut(present);
            return present.length;
          });
        }
        if (seen < PAGE) break;
      }
    }
  } finally {
    raw.close();
  }
  return sealed;
}
