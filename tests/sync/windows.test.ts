// @vitest-environment node
// Windowed list reads (lib/view/windows.ts): the screens read the rows around what is on screen,
// not the table. Checked two ways: the window equals the same slice of the whole list filtered and
// sorted in memory (for every filter the indexes cover), and a counter under Dexie sees how many
// rows were actually read from IndexedDB.
import type { DBCore, Middleware } from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../lib/schemas';
import { openSyncDb, type ConversationView, type FileView, type ParleyDb } from '../../lib/sync/mirror/db';
import { DEFAULT_FILTERS, filterConversations, listConversations, sortConversations, type ConversationFilters, type TriState } from '../../lib/view/conversations';
import { readFileWindow } from '../../lib/view/file-window';
import { readConversationWindow } from '../../lib/view/windows';

/** Counts the rows IndexedDB hands back (query results and cursor steps), per table. */
function countReads(db: ParleyDb) {
  const reads = new Map<string, number>();
  const add = (table: string, n: number) => reads.set(table, (reads.get(table) ?? 0) + n);
  const counter: Middleware<DBCore> = {
    stack: 'dbcore',
    name: 'test-read-counter',
    level: 0,
    create: (down) => ({
      ...down,
      table: (name) => {
        const table = down.table(name);
        return {
          ...table,
          get: (req) => table.get(req).then((v) => (add(name, 1), v)),
          getMany: (req) => table.getMany(req).then((v) => (add(name, v.length), v)),
          query: (req) => table.query(req).then((res) => (req.values ? add(name, res.result.length) : undefined, res)),
          openCursor: (req) =>
            table.openCursor(req).then((cursor) => {
              if (!cursor || req.values === false) return cursor;
              return Object.create(cursor, { value: { get: () => (add(name, 1), cursor.value) } });
            }),
        };
      },
    }),
  };
  db.use(counter);
  return { reads, reset: () => reads.clear() };
}

const ID = (n: number) => `C${String(n).padStart(15, '0')}`;

function conversation(n: number): ConversationView {
  const c: Conversation = {
    id: ID(n),
    contact_id: n % 3 === 0 ? null : `contact-${n}`,
    group_id: n % 3 === 0 ? `group-${n}` : null,
    pinned_message_id: null,
    is_pinned: n % 7 === 0,
    is_muted: n % 5 === 0,
    last_active_at: n % 4 === 0 ? null : 1_700_000_000 + ((n * 37) % 500),
    last_opened_at: null,
    created_at: 1_600_000_000 + n,
    archived_at: n % 6 === 0 ? 1_700_000_000 : null,
  };
  return { ...c, syncState: 'synced' };
}

describe('windowed list reads', () => {
  let db: ParleyDb;
  let counter: ReturnType<typeof countReads>;
  const all: ConversationView[] = [];
  beforeEach(async () => {
    db = openSyncDb('windows', { indexedDB: new IDBFactory(), IDBKeyRange });
    counter = countReads(db);
    all.length = 0;
    for (let n = 0; n < 2_000; n++) all.push(conversation(n));
    await db.conversations.bulkPut(all);
  });
  afterEach(() => db.close());

  it('the default view reads the window through an index, not the table', async () => {
    counter.reset();
    const window = await readConversationWindow(db, DEFAULT_FILTERS, null, 1_000, 60);
    const expected = sortConversations(filterConversations(all, DEFAULT_FILTERS), null);
    expect(window.indexed).toBe(true);
    expect(window.total).toBe(expected.length);
    expect(window.rows).toEqual(expected.slice(1_000, 1_060));
    // 60 rows (the count reads keys only): nowhere near the 2,000 stored.
    expect(counter.reads.get('conversations')).toBe(60);
  });

  it('every filter an index covers gives exactly the in-memory list, window by window', async () => {
    const states: TriState[] = ['any', 'yes', 'no'];
    for (const archived of states) {
      for (const pinned of states) {
        const filters: ConversationFilters = { ...DEFAULT_FILTERS, archived, pinned };
        const expected = sortConversations(filterConversations(all, filters), null);
        for (const start of [0, 37, Math.max(0, expected.length - 10)]) {
          const window = await readConversationWindow(db, filters, null, start, 25);
          expect(window.indexed, JSON.stringify(filters)).toBe(true);
          expect(window.total).toBe(expected.length);
          expect(window.rows.map((c) => c.id), `${JSON.stringify(filters)} @${start}`).toEqual(expected.slice(start, start + 25).map((c) => c.id));
        }
      }
    }
  });

  it('a row moves in the index when it changes (pinning brings it to the top), and reads never show the index keys', async () => {
    const target = all[1_501]!; // neither archived nor pinned
    await db.conversations.put({ ...target, is_pinned: true, last_active_at: 1_800_000_000 });
    const top = await readConversationWindow(db, DEFAULT_FILTERS, null, 0, 1);
    expect(top.rows).toEqual([{ ...target, is_pinned: true, last_active_at: 1_800_000_000 }]);
    expect(Object.keys((await db.conversations.get(target.id))!)).not.toContain('listKeys');
    expect(Object.keys((await db.conversations.toArray())[0]!)).not.toContain('listKeys');
  });

  it('filters no index covers still answer correctly (reading the rows that can match)', async () => {
    const filters: ConversationFilters = { ...DEFAULT_FILTERS, muted: 'yes', text: 'contact-1' };
    const sort = { id: 'created' as const, desc: true };
    const window = await readConversationWindow(db, filters, sort, 0, 20);
    const expected = sortConversations(filterConversations(all, filters), sort);
    expect(window.indexed).toBe(false);
    expect(window.total).toBe(expected.length);
    expect(window.rows).toEqual(expected.slice(0, 20));
  });

  it('a search reads the rows its words index finds, not the table, and answers as the in-memory filter does', async () => {
    await db.conversations.bulkPut([
      { ...conversation(5_000), id: ID(5_000), contact_id: 'amelia-hughes', group_id: null, archived_at: null },
      { ...conversation(5_001), id: ID(5_001), contact_id: 'Zoë_Hughes', group_id: null, archived_at: null },
    ]);
    const rows = await db.conversations.toArray();
    for (const text of ['amelia hughes', 'Hughes Amelia', 'HUGHES', 'zoe', 'contact 12', 'group-3', 'group 30 3', '12 contact', 'nobody', '-']) {
      for (const filters of [{ ...DEFAULT_FILTERS, text }, { ...DEFAULT_FILTERS, text, archived: 'any' as const, kind: 'contact' as const }]) {
        counter.reset();
        const window = await readConversationWindow(db, filters, null, 0, 30);
        // Ids every typed word names exactly come first (listConversations), then the list's order.
        const expected = listConversations(rows, filters, null);
        expect(window.total, JSON.stringify(filters)).toBe(expected.length);
        expect(window.rows.map((c) => c.id), JSON.stringify(filters)).toEqual(expected.slice(0, 30).map((c) => c.id));
        // Only the rows whose words match were read (primary keys come from the index, no rows).
        if (text !== '-') expect(counter.reads.get('conversations') ?? 0, text).toBeLessThanOrEqual(filterConversations(rows, { ...DEFAULT_FILTERS, archived: 'any', text }).length);
      }
    }
    expect((await readConversationWindow(db, { ...DEFAULT_FILTERS, text: 'amelia hughes' }, null, 0, 5)).rows.map((c) => c.contact_id)).toEqual(['amelia-hughes']);
    expect((await readConversationWindow(db, { ...DEFAULT_FILTERS, text: 'Hughes Amelia' }, null, 0, 5)).rows.map((c) => c.contact_id)).toEqual(['amelia-hughes']);
    // A renamed id moves in the index: the old words no longer find it.
    await db.conversations.put({ ...(await db.conversations.get(ID(5_000)))!, contact_id: 'amelia-jones' });
    expect((await readConversationWindow(db, { ...DEFAULT_FILTERS, text: 'amelia hughes' }, null, 0, 5)).total).toBe(0);
    expect((await readConversationWindow(db, { ...DEFAULT_FILTERS, text: 'jones' }, null, 0, 5)).total).toBe(1);
  });

  it('files: newest first, overall and per conversation, reading only the window (and its conversations)', async () => {
    const files: FileView[] = Array.from({ length: 1_000 }, (_, n) => ({
      id: `F${String(n).padStart(15, '0')}`,
      message_id: `M${String(n).padStart(15, '0')}`,
      filename: `f${n}.pdf`,
      file_url: `/files/f${n}.pdf`,
      file_type: 'application/pdf',
      file_size: n,
      created_at: 1_650_000_000 + ((n * 13) % 997),
      conversationId: ID(n % 10),
      syncState: 'synced',
    }));
    await db.files.bulkPut(files);
    const byNewest = (a: FileView, b: FileView) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1);
    counter.reset();
    const window = await readFileWindow(db, { conversationId: '', family: 'any', name: '' }, null, 500, 40);
    expect(window.total).toBe(1_000);
    expect(window.rows.map((f) => f.id)).toEqual([...files].sort(byNewest).slice(500, 540).map((f) => f.id));
    expect(window.rows[0]!.conversationTitle).toMatch(/^(contact|group)-\d$/);
    expect(counter.reads.get('files')).toBe(40);
    expect(counter.reads.get('conversations')).toBeLessThanOrEqual(10);

    const one = await readFileWindow(db, { conversationId: ID(3), family: 'any', name: '' }, null, 0, 30);
    const expected = files.filter((f) => f.conversationId === ID(3)).sort(byNewest);
    expect(one.total).toBe(expected.length);
    expect(one.rows.map((f) => f.id)).toEqual(expected.slice(0, 30).map((f) => f.id));
  });
});
