// @vitest-environment node
// Search that tolerates typos, and new ids too close to known ones (issue 32; lib/view/windows.ts
// readConversationWindow's pass for typos, readCloseMatches, readNearIds). In the `sealed` project
// the mirror is sealed (tests/helpers/sealed-mirror.ts): its id and word indexes hold keyed
// tokens, so everything here must come from the rows, never from index keys.
import type { DBCore, Middleware } from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSyncDb, type ConversationView, type ParleyDb } from '../../lib/sync/mirror/db';
import { DEFAULT_FILTERS, type ConversationFilters } from '../../lib/view/conversations';
import { readCloseMatches, readNearIds } from '../../lib/view/close-matches';
import { FEW_MATCHES, readConversationWindow } from '../../lib/view/windows';

/** Counts the conversation rows IndexedDB hands back (query results, and the rows a cursor stepped on, each once). */
function countReads(db: ParleyDb) {
  let reads = 0;
  const stepped = new Set<unknown>();
  const counter: Middleware<DBCore> = {
    stack: 'dbcore',
    name: 'test-read-counter',
    level: 0,
    create: (down) => ({
      ...down,
      table: (name) => {
        const table = down.table(name);
        if (name !== 'conversations') return table;
        return {
          ...table,
          getMany: (req) => table.getMany(req).then((v) => ((reads += v.length), v)),
          query: (req) => table.query(req).then((res) => (req.values ? (reads += res.result.length) : undefined, res)),
          openCursor: (req) =>
            table.openCursor(req).then((cursor) => {
              if (!cursor || req.values === false) return cursor;
              // Dexie reads a cursor's value more than once per step.
              return Object.create(cursor, { value: { get: () => (stepped.has(cursor.primaryKey) || (stepped.add(cursor.primaryKey), reads++), cursor.value) } });
            }),
        };
      },
    }),
  };
  db.use(counter);
  return { get reads() { return reads; }, reset: () => ((reads = 0), stepped.clear()) };
}

let n = 0;
function conversation(party: { contact_id: string } | { group_id: string }, extra: Partial<ConversationView> = {}): ConversationView {
  n++;
  return {
    id: `C${String(n).padStart(15, '0')}`,
    contact_id: 'contact_id' in party ? party.contact_id : null,
    group_id: 'group_id' in party ? party.group_id : null,
    pinned_message_id: null,
    is_pinned: false,
    is_muted: false,
    last_active_at: 1_700_000_000 + n,
    last_opened_at: null,
    created_at: 1_600_000_000 + n,
    archived_at: null,
    syncState: 'synced',
    ...extra,
  };
}

const search = (text: string, extra: Partial<ConversationFilters> = {}): ConversationFilters => ({ ...DEFAULT_FILTERS, ...extra, text });
const titles = (rows: ConversationView[]) => rows.map((c) => c.contact_id ?? c.group_id);

describe('a search with typos', () => {
  let db: ParleyDb;
  beforeEach(async () => {
    db = openSyncDb('close-matches', { indexedDB: new IDBFactory(), IDBKeyRange });
    await db.conversations.bulkPut([
      conversation({ contact_id: 'amelia-hughes' }),
      conversation({ contact_id: 'amelia_smith' }),
      conversation({ contact_id: 'oliver-hughes' }),
      conversation({ group_id: 'Cardiology_Ward7' }),
      conversation({ contact_id: 'amelia-hughs-archived' }, { archived_at: 1_700_000_000 }),
    ]);
  });
  afterEach(() => db.close());

  it('"amelia hugjes" finds amelia-hughes, offered as "Did you mean …?"', async () => {
    const window = await readConversationWindow(db, search('amelia hugjes'), null, 0, 50, { near: true });
    expect(titles(window.rows)).toEqual(['amelia-hughes']);
    expect(window.total).toBe(1);
    expect(window.closeMatches).toEqual([window.rows[0]!.id]);
    expect(window.didYouMean).toEqual(['amelia-hughes']);
    expect(window.nearPass).toBe(true);
  });

  it('"amelai" and "hughs" find every id one edit away, newest activity first; archived ones only when asked for', async () => {
    const amelai = await readConversationWindow(db, search('amelai'), null, 0, 50, { near: true });
    expect(titles(amelai.rows)).toEqual(['amelia_smith', 'amelia-hughes']);
    expect(amelai.didYouMean).toEqual(['amelia_smith', 'amelia-hughes']);
    expect(titles((await readConversationWindow(db, search('hughs'), null, 0, 50, { near: true })).rows)).toEqual(['oliver-hughes', 'amelia-hughes']);
    expect(titles((await readConversationWindow(db, search('hughs', { archived: 'any' }), null, 0, 50, { near: true })).rows)).toEqual([
      'amelia-hughs-archived', // "hughs" begins one of its words: a match without typos, first
      'oliver-hughes',
      'amelia-hughes',
    ]);
    // The other filters hold for close matches too.
    expect(titles((await readConversationWindow(db, search('cardiolgy', { kind: 'contact' }), null, 0, 50, { near: true })).rows)).toEqual([]);
    expect(titles((await readConversationWindow(db, search('cardiolgy', { kind: 'group' }), null, 0, 50, { near: true })).rows)).toEqual(['Cardiology_Ward7']);
  });

  it('lists close matches after the exact ones, without "Did you mean"; looks for none once a few match', async () => {
    await db.conversations.put(conversation({ contact_id: 'amelia-hugjes' }));
    const window = await readConversationWindow(db, search('amelia hugjes'), null, 0, 50, { near: true });
    expect(titles(window.rows)).toEqual(['amelia-hugjes', 'amelia-hughes']);
    expect(window.closeMatches).toEqual([window.rows[1]!.id]);
    expect(window.didYouMean).toEqual([]);
    // A window further down the list still counts the close matches.
    expect(titles((await readConversationWindow(db, search('amelia hugjes'), null, 1, 50, { near: true })).rows)).toEqual(['amelia-hughes']);

    for (let i = 0; i < FEW_MATCHES; i++) await db.conversations.put(conversation({ contact_id: `amelia-hugjes-${i}` }));
    const many = await readConversationWindow(db, search('amelia hugjes'), null, 0, 50, { near: true });
    expect(many.total).toBe(FEW_MATCHES + 1);
    expect(many.nearPass).toBe(true); // asked for, and not needed
    expect(many.closeMatches).toEqual([]);
  });

  it('without `near` (typing has not paused), only the exact search runs', async () => {
    const window = await readConversationWindow(db, search('amelia hugjes'), null, 0, 50);
    expect(window).toMatchObject({ total: 0, rows: [], closeMatches: [], didYouMean: [], nearPass: false });
    // Nor for words too short to forgive a typo.
    expect((await readConversationWindow(db, search('amx'), null, 0, 50, { near: true })).rows).toEqual([]);
  });
});

describe('a pass for typos over 10,000 conversations', () => {
  let db: ParleyDb;
  let counter: ReturnType<typeof countReads>;
  const names = ['hughes', 'smith', 'jones', 'patel', 'nguyen', 'garcia', 'okafor', 'kowalski'];
  beforeEach(async () => {
    db = openSyncDb('close-matches-10k', { indexedDB: new IDBFactory(), IDBKeyRange });
    counter = countReads(db);
    const rows: ConversationView[] = [];
    // Every 500th is an "amelia": 20 of them.
    for (let i = 0; i < 10_000; i++) rows.push(conversation({ contact_id: `${i % 500 === 0 ? 'amelia' : 'patient'}-${names[i % names.length]}-${i}` }));
    await db.conversations.bulkPut(rows);
  });
  afterEach(() => db.close());

  it('stops once enough rows are one edit away, and reads the whole list at most when fewer are', async () => {
    counter.reset();
    const ten = await readCloseMatches(db, search('amelai'), new Set(), 10);
    expect(ten).toHaveLength(10);
    expect(titles(ten).every((t) => t!.startsWith('amelia-'))).toBe(true);
    // The ten most recently active, read in the list's order: 10 × 500 rows, not 10,000.
    expect(counter.reads).toBeLessThanOrEqual(10 * 500 + 1); // (+ the row the stop is decided on)

    counter.reset();
    expect(await readCloseMatches(db, search('zzzzzz'), new Set(), 10)).toEqual([]);
    expect(counter.reads).toBe(10_000);

    counter.reset();
    expect(await readCloseMatches(db, search('amelai'), new Set(), 10, 600)).toHaveLength(1); // only one "amelia" in the 600 most recent
    expect(counter.reads).toBe(601); // (+ the row the stop is decided on)
  });

  it('keeps the closest when more than enough are near: one edit before two', async () => {
    await db.conversations.put(conversation({ contact_id: 'kowalsky-far' }, { last_active_at: 1 }));
    // "kowalskj" is one edit from every "kowalski" (1,250 of them) and "kowalsky": the pass stops at the first 3.
    counter.reset();
    const three = await readCloseMatches(db, search('kowalskj'), new Set(), 3);
    expect(titles(three).every((t) => t!.includes('kowalski'))).toBe(true);
    expect(counter.reads).toBeLessThan(100);
    // "kowalskyy" is one edit from kowalsky and two from each kowalski: read whole, the one edit comes first.
    const closest = await readCloseMatches(db, search('kowalskyy'), new Set(), 3);
    expect(titles(closest)[0]).toBe('kowalsky-far');
    expect(closest).toHaveLength(3);
  });
});

describe('new ids near known ones', () => {
  let db: ParleyDb;
  beforeEach(async () => {
    db = openSyncDb('near-ids', { indexedDB: new IDBFactory(), IDBKeyRange });
    await db.conversations.bulkPut([
      conversation({ contact_id: 'amelia-hughes' }),
      conversation({ contact_id: 'amelia-hughes2' }, { archived_at: 1_700_000_000 }),
      conversation({ group_id: 'amelia-hughex' }),
    ]);
  });
  afterEach(() => db.close());

  it('finds contact ids one or two edits away (archived ones too), closest first', async () => {
    expect(await readNearIds(db, 'contact_id', 'amelia-hugjes', 5)).toEqual([
      expect.objectContaining({ id: 'amelia-hughes', edits: 1 }),
      expect.objectContaining({ id: 'amelia-hughes2', edits: 2 }),
    ]);
    const [near] = await readNearIds(db, 'contact_id', ' Amelia-Hughes ', 5);
    expect(near).toEqual({ conversationId: (await db.conversations.where('contact_id').equals('amelia-hughes').first())!.id, id: 'amelia-hughes', edits: 0 });
  });

  it('the same id is no warning (creating it opens it); other kinds and far ids neither', async () => {
    expect((await readNearIds(db, 'contact_id', 'amelia-hughes', 5)).map((x) => x.id)).toEqual(['amelia-hughes2']);
    expect((await readNearIds(db, 'group_id', 'amelia-hughes', 5)).map((x) => x.id)).toEqual(['amelia-hughex']);
    expect(await readNearIds(db, 'contact_id', 'oliver-smith', 5)).toEqual([]);
    expect(await readNearIds(db, 'contact_id', '  ', 5)).toEqual([]);
  });
});
