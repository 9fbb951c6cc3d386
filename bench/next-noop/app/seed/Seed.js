'use client';
import { createElement as h, useEffect, useState } from 'react';
import { db } from '../first-screen/db';

export function Seed() {
  const [seeded, setSeeded] = useState(null);
  useEffect(() => {
    const n = Number(new URLSearchParams(location.search).get('n') || 1000);
    const now = Math.floor(Date.now() / 1000);
    const rows = Array.from({ length: n }, (_, i) => ({
      id: `conv_${String(i).padStart(8, '0')}`,
      contact_id: `contact-${i}`,
      group_id: null,
      pinned_message_id: null,
      is_pinned: i % 17 === 0,
      is_muted: i % 11 === 0,
      last_active_at: i % 5 === 0 ? now - n + i : null,
      last_opened_at: null,
      created_at: now - n + i,
      archived_at: null,
    }));
    db.conversations
      .clear()
      .then(() => db.conversations.bulkPut(rows))
      .then(() => setSeeded(n));
  }, []);
  return h('output', { 'data-seeded': seeded ?? '' }, seeded === null ? 'seeding…' : `${seeded} conversations`);
}
