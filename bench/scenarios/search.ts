// 13. Search on 10,000 conversations (issue 21): the forgiving search (lib/view/search.ts) against
//     a floor measured in the same run — the literal search it replaced (`includes` over the
//     lower-cased ids). Two figures per query: in memory (the filter over rows already read), and
//     through the mirror's words index (lib/view/windows.ts on fake-indexeddb, in Node) against
//     reading and filtering the whole table, as the literal search did on every keystroke.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import type { Conversation } from '../../lib/schemas';
import { openSyncDb, type ConversationView } from '../../lib/sync/mirror/db';
import { DEFAULT_FILTERS, filterConversations, sortConversations } from '../../lib/view/conversations';
import { readConversationWindow } from '../../lib/view/windows';
import type { Scenario } from '../lib/scenario';
import { median, round } from '../lib/stats';

const N = 10_000;
const FIRST = ['amelia', 'oliver', 'zoe', 'noah', 'isla', 'leo', 'ava', 'jack', 'mia', 'harry', 'ella', 'omar'];
const LAST = ['hughes', 'smith', 'patel', 'jones', 'nguyen', 'murphy', 'khan', 'brown', 'garcia', 'walker', 'clarke'];

function rows(): ConversationView[] {
  return Array.from({ length: N }, (_, n) => {
    const group = n % 5 === 0;
    const c: Conversation = {
      id: `C${String(n).padStart(15, '0')}`,
      contact_id: group ? null : `${FIRST[n % FIRST.length]}-${LAST[(n * 7) % LAST.length]}-${n}`,
      group_id: group ? `ward_${n % 40}_team-${n}` : null,
      pinned_message_id: null,
      is_pinned: n % 97 === 0,
      is_muted: false,
      last_active_at: 1_700_000_000 + ((n * 7919) % 100_000),
      last_opened_at: null,
      created_at: 1_600_000_000 + n,
      archived_at: null,
    };
    return { ...c, syncState: 'synced' };
  });
}

function time(runs: number, work: () => unknown): number {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    work();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function timeAsync(runs: number, work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await work();
    times.push(performance.now() - t0);
  }
  return median(times);
}

export const search: Scenario = {
  name: 'search',
  title: 'Search on 10,000 conversations: the forgiving search against a literal includes',
  async run({ runs, log }) {
    const all = rows();
    const queries = ['amelia hughes', 'Hughes Amelia', 'ward 7', 'zo'];
    const literal = (text: string) => {
      const needle = text.toLowerCase();
      return all.filter((c) => (c.contact_id ?? c.group_id ?? '').toLowerCase().includes(needle));
    };
    const db = openSyncDb('bench-search', { indexedDB: new IDBFactory(), IDBKeyRange });
    await db.conversations.bulkPut(all);
    const out = [];
    for (const text of queries) {
      const filters = { ...DEFAULT_FILTERS, text };
      const found = filterConversations(all, filters).length;
      const memory = time(Math.max(runs, 5), () => filterConversations(all, filters));
      const floor = time(Math.max(runs, 5), () => literal(text));
      const indexed = await timeAsync(runs, () => readConversationWindow(db, filters, null, 0, 60));
      // The literal search's read: every row, filtered and sorted, each keystroke.
      const needle = text.toLowerCase();
      const scan = await timeAsync(runs, async () =>
        sortConversations((await db.conversations.toArray()).filter((c) => (c.contact_id ?? c.group_id ?? '').toLowerCase().includes(needle)), null).slice(0, 60),
      );
      log(`"${text}": ${found} found; in memory ${memory.toFixed(2)} ms (literal ${floor.toFixed(2)} ms); indexed read ${indexed.toFixed(1)} ms (table read ${scan.toFixed(1)} ms)`);
      out.push(
        { name: `"${text}" (${found} of 10,000): forgiving filter in memory`, value: round(memory, 2), unit: 'ms', note: `literal includes ${floor.toFixed(2)} ms, ×${(memory / floor).toFixed(1)}` },
        { name: `"${text}": windowed read through the words index (fake-indexeddb)`, value: round(indexed, 1), unit: 'ms', note: `whole-table read + includes ${scan.toFixed(1)} ms` },
        // The index must beat the per-keystroke table read it replaced, measured in the same run.
        { name: `"${text}": indexed read / whole-table read`, value: round(indexed / scan, 2), unit: '×', target: { op: '<=' as const, value: 0.5 } },
      );
    }
    db.close();
    return out;
  },
};
