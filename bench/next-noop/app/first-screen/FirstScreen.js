'use client';
// Rows as role="row" with aria-rowindex, as the app's list marks them (the bench waits for the
// first such row to be painted, in both pages).
import { useLiveQuery } from 'dexie-react-hooks';
import { createElement as h } from 'react';
import { db } from './db';

export function FirstScreen() {
  const rows = useLiveQuery(() => db.conversations.orderBy('created_at').reverse().limit(60).toArray(), []);
  if (!rows) return h('p', null, 'Loading…');
  return h(
    'div',
    { role: 'table', 'aria-label': 'Conversations', 'aria-rowcount': rows.length + 1 },
    h('div', { role: 'row' }, h('span', { role: 'columnheader' }, 'Conversation'), h('span', { role: 'columnheader' }, 'Last active')),
    rows.map((c, i) =>
      h(
        'div',
        { key: c.id, role: 'row', 'aria-rowindex': i + 2 },
        h('span', { role: 'cell' }, c.contact_id ?? c.group_id),
        h('span', { role: 'cell' }, c.last_active_at === null ? '—' : new Date(c.last_active_at * 1000).toISOString().slice(0, 10)),
      ),
    ),
  );
}
