// @vitest-environment node
// The list-keys middleware hands out a view of each cursor with `listKeys` stripped from its value.
// A native IDBCursor's getters and methods check their receiver ("Illegal invocation" on any other
// object); fake-indexeddb's do not, so the view is tested here against a cursor that checks like
// Chromium's does (a private field: reading it through any other receiver throws).
import type { DBCore, DBCoreCursor, DBCoreTable } from 'dexie';
import { describe, expect, it } from 'vitest';
import { listKeysMiddleware } from '../../lib/sync/mirror/list-keys';

class BrandedCursor {
  readonly #row: Record<string, unknown>;
  #moves = 0;
  constructor(row: Record<string, unknown>) {
    this.#row = row;
  }
  get key() {
    return this.#row.id;
  }
  get primaryKey() {
    return this.#row.id;
  }
  get value() {
    return this.#row;
  }
  continue() {
    this.#moves++;
  }
  get moves() {
    return this.#moves;
  }
}

describe('list-keys middleware cursors', () => {
  it('strip the value and leave key, primaryKey and continue working on the cursor itself', async () => {
    const row = { id: 'AAAAAAAAAAAAAAAA', contact_id: 'x', listKeys: { order: [1, 0, 0] } };
    const native = new BrandedCursor(row);
    const table = { openCursor: async () => native as unknown as DBCoreCursor } as unknown as DBCoreTable;
    const down = { table: () => table } as unknown as DBCore;
    const core = listKeysMiddleware.create(down);
    const cursor = (await core.table!('conversations').openCursor({ values: true } as never))!;

    expect(cursor.value).toEqual({ id: 'AAAAAAAAAAAAAAAA', contact_id: 'x' });
    expect(cursor.primaryKey).toBe('AAAAAAAAAAAAAAAA');
    expect(cursor.key).toBe('AAAAAAAAAAAAAAAA');
    cursor.continue();
    expect(native.moves).toBe(1);
  });
});
