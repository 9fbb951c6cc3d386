// 4. Initial sync in headless Chromium: a fresh mirror of 10,000 conversations and 10,000 files
//    through the app's real sync worker, timed from the click on "Sign in" (lib/mirror.ts).
//    - Against a plain server (no change feed: the scan path): vs the floor, a bare loop in a page
//      making the same requests the same way (list pages one after another, then each active
//      conversation's file list, SCAN_CONCURRENCY at a time) and storing nothing.
//    - Against the embedded server (the change feed): records per second, and vs what raw
//      IndexedDB batching allows for the same rows (the same stores and indexes, 1,000 records a
//      transaction, relaxed durability, nothing else).
//    Medians of `runs` fresh contexts each. BENCH_INITIAL_SYNC=feed measures the embedded server
//    only (no floor, no plain server): a quicker loop while working on the feed path.
import type { Page } from 'playwright-core';
import { SCAN_CONCURRENCY } from '../../lib/sync/pull/scan';
import { aliceMirror, openSignedOut, SYNC_CONVERSATIONS, syncWorld, timedInitialSync } from '../lib/mirror';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, MiB, round } from '../lib/stats';

/** The floor: the requests the engine makes for a fresh mirror on a plain server, nothing stored. */
export async function floorLoop(page: Page, token: string): Promise<{ ms: number; requests: number; conversations: number; files: number }> {
  // A string, so no bundler helper (tsx's __name) ends up in the page.
  return page.evaluate(`(async ([t, concurrency]) => {
    const headers = { Authorization: 'Bearer ' + t };
    let requests = 0;
    async function list(path, extra) {
      const all = [];
      let after = null;
      for (let guard = 0; guard < 100000; guard++) {
        const res = await fetch(path + '?limit=100' + extra + (after ? '&starting_after=' + after : ''), { headers });
        requests++;
        const page = await res.json();
        for (const item of page.data) all.push(item);
        if (!page.has_more || page.data.length === 0) break;
        after = page.data[page.data.length - 1].id;
      }
      return all;
    }
    const t0 = performance.now();
    const conversations = await list('/v1/conversations', '');
    const files = await list('/v1/files', '');
    // The engine never lists a conversation without activity (an upload raises last_active_at).
    const active = conversations.filter((c) => c.last_active_at !== null);
    let placed = 0;
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < active.length) {
        const c = active[next++];
        const listed = await list('/v1/files', '&conversation_id=' + c.id);
        placed += listed.length;
      }
    }));
    const ms = performance.now() - t0;
    if (placed !== files.length) throw new Error('floor placed ' + placed + ' of ' + files.length + ' files');
    return { ms, requests, conversations: conversations.length, files: files.length };
  })(${JSON.stringify([token, SCAN_CONCURRENCY])})`);
}

/**
 * The feed path's floor: the requests the engine makes for a fresh mirror on the embedded server
 * (the conversations listing with the feed's history read alongside, then the files listing), the
 * same way (each list one page after another), parsing each answer and storing nothing.
 */
export async function feedFloorLoop(page: Page, token: string): Promise<{ ms: number; requests: number }> {
  return page.evaluate(`(async ([t]) => {
    const headers = { Authorization: 'Bearer ' + t };
    let requests = 0;
    async function list(path) {
      let n = 0;
      let after = null;
      for (;;) {
        const res = await fetch(path + '?limit=100' + (after ? '&starting_after=' + after : ''), { headers });
        requests++;
        const page = await res.json();
        n += page.data.length;
        if (!page.has_more || page.data.length === 0) return n;
        after = page.data[page.data.length - 1].id;
      }
    }
    async function history() {
      let after = '0';
      for (;;) {
        const res = await fetch('/v1/events?limit=1000&after=' + after, { headers });
        requests++;
        const page = await res.json();
        if (!page.has_more || page.data.length === 0) return;
        after = page.next;
      }
    }
    const t0 = performance.now();
    await fetch('/v1/events?limit=0', { headers }).then((r) => r.json());
    requests++;
    await Promise.all([list('/v1/conversations'), history()]);
    await list('/v1/files');
    return { ms: performance.now() - t0, requests };
  })(${JSON.stringify([token])})`);
}

/**
 * Raw IndexedDB: the same rows the mirror writes (the visible row of each conversation and file,
 * with the mirror's stores and indexes; no server copies, as nothing is pending) written 1,000
 * records a transaction, relaxed durability, no reads.
 */
export async function rawIndexedDb(page: Page, conversations: number, files: number): Promise<{ ms: number; records: number }> {
  return page.evaluate(`(async ([nc, nf]) => {
    const name = 'raw-idb-bench-' + Math.random();
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open(name, 1);
      open.onupgradeneeded = () => {
        const d = open.result;
        const conv = d.createObjectStore('conversations', { keyPath: 'id' });
        conv.createIndex('contact_id', 'contact_id'); conv.createIndex('group_id', 'group_id');
        conv.createIndex('order', 'listKeys.order'); conv.createIndex('byArchived', 'listKeys.byArchived');
        conv.createIndex('words', 'listKeys.words', { multiEntry: true });
        d.createObjectStore('serverConversations', { keyPath: 'id' });
        const files = d.createObjectStore('files', { keyPath: 'id' });
        files.createIndex('conversationId', 'conversationId'); files.createIndex('created_at', 'created_at');
        files.createIndex('cc', ['conversationId', 'created_at']);
        d.createObjectStore('serverFiles', { keyPath: 'id' }).createIndex('conversationId', 'conversationId');
      };
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const id = (p, n) => (p + String(n).padStart(15, '0'));
    const conversation = (n) => ({ id: id('C', n), contact_id: 'contact-' + n, group_id: null, pinned_message_id: null, is_pinned: false, is_muted: n % 11 === 0,
      last_active_at: n % 5 === 0 ? 1700000000 + n : null, last_opened_at: null, created_at: 1690000000 + n, archived_at: null });
    const file = (n) => ({ id: id('F', n), message_id: id('M', n), filename: 'report-' + n + '.pdf', file_url: '/files/report-' + n + '.pdf?id=' + id('F', n) + '&sig=0123456789abcdef0123456789abcdef',
      file_type: 'application/pdf', file_size: 2048, created_at: 1690000000 + n, conversationId: id('C', (n % (nc / 5)) * 5) });
    const write = (stores, rows) => new Promise((resolve, reject) => {
      const tx = db.transaction(stores.map((s) => s[0]), 'readwrite', { durability: 'relaxed' });
      for (const [store, make] of stores) { const os = tx.objectStore(store); for (const row of rows) os.put(make(row)); }
      tx.oncomplete = resolve; tx.onerror = () => reject(tx.error);
    });
    const t0 = performance.now();
    for (let i = 0; i < nc; i += 1000) {
      const rows = []; for (let n = i; n < Math.min(nc, i + 1000); n++) rows.push(conversation(n));
      await write([['conversations', (c) => ({ ...c, syncState: 'synced', listKeys: { order: [1, -(c.last_active_at ?? c.created_at), -c.created_at], byArchived: [0, 1, -(c.last_active_at ?? c.created_at), -c.created_at], words: c.contact_id.split('-').concat(c.contact_id.replace('-', '')) } })]], rows);
    }
    for (let i = 0; i < nf; i += 1000) {
      const rows = []; for (let n = i; n < Math.min(nf, i + 1000); n++) rows.push(file(n));
      await write([['files', (f) => ({ ...f, syncState: 'synced' })]], rows);
    }
    const ms = performance.now() - t0;
    db.close();
    indexedDB.deleteDatabase(name);
    return { ms, records: nc + nf };
  })(${JSON.stringify([conversations, files])})`);
}

export const initialSync: Scenario = {
  name: 'initial-sync',
  title: `Initial sync in Chromium: ${SYNC_CONVERSATIONS.toLocaleString('en-US')} conversations + files, from "Sign in" to a complete mirror`,
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const expected = { conversations: SYNC_CONVERSATIONS, files: w.alice.files };
    const records = expected.conversations + expected.files;
    const feedOnly = process.env.BENCH_INITIAL_SYNC === 'feed';

    // The floor, on the plain server (a signed-out page of the same origin: no worker, no storage).
    const floorMs: number[] = [];
    let floorRequests = 0;
    for (let r = 0; r < (feedOnly ? 0 : runs); r++) {
      const { context, page } = await openSignedOut(w.browser, w.plainFloorApp.baseUrl);
      const floor = await floorLoop(page, runToken('alice'));
      await context.close();
      floorMs.push(floor.ms);
      floorRequests = floor.requests;
      log(`floor run ${r + 1}/${runs}: ${(floor.ms / 1000).toFixed(2)} s, ${floor.requests} requests`);
    }

    // The sync worker against the plain server: lists, then scans.
    const plain: { ms: number; requests: number }[] = [];
    for (let r = 0; r < (feedOnly ? 0 : runs); r++) {
      const { session, initial } = await timedInitialSync(w.browser, w.plainApp.baseUrl, runToken('alice'), expected);
      await session.context.close();
      plain.push(initial);
      log(`plain server run ${r + 1}/${runs}: ${(initial.ms / 1000).toFixed(2)} s, ${initial.requests} requests; phases from the click ${JSON.stringify(initial.phases)}`);
    }

    // The sync worker against the embedded server (change feed). The first run's mirror is kept
    // for steady-sync.
    const feed: { ms: number; requests: number; idbBytes: number }[] = [];
    const kept = await aliceMirror(log);
    feed.push(kept.initial);
    for (let r = 1; r < runs; r++) {
      const { session, initial } = await timedInitialSync(w.browser, w.app.baseUrl, runToken('alice'), expected);
      await session.context.close();
      feed.push(initial);
      log(`feed server run ${r + 1}/${runs}: ${(initial.ms / 1000).toFixed(2)} s, ${initial.requests} requests; phases from the click ${JSON.stringify(initial.phases)}`);
    }

    const feedFloor: number[] = [];
    for (let r = 0; r < runs; r++) {
      const { context, page } = await openSignedOut(w.browser, w.floorApp.baseUrl);
      const f = await feedFloorLoop(page, runToken('alice'));
      await context.close();
      feedFloor.push(f.ms);
      log(`embedded server floor run ${r + 1}/${runs}: ${(f.ms / 1000).toFixed(2)} s, ${f.requests} requests`);
    }

    const rawRuns: number[] = [];
    for (let r = 0; r < runs; r++) {
      const { context, page } = await openSignedOut(w.browser, w.floorApp.baseUrl);
      const raw = await rawIndexedDb(page, expected.conversations, expected.files);
      await context.close();
      rawRuns.push(raw.records / (raw.ms / 1000));
      log(`raw IndexedDB run ${r + 1}/${runs}: ${(raw.ms / 1000).toFixed(2)} s for ${raw.records} records`);
    }

    const floor = median(floorMs);
    const plainMs = median(plain.map((x) => x.ms));
    const feedMs = median(feed.map((x) => x.ms));
    const feedRate = records / (feedMs / 1000);
    const rawRate = median(rawRuns);
    const plainFigures = [
      { name: `plain server (no feed; scan): sync worker, median of ${runs}`, value: round(plainMs / 1000, 2), unit: 's' },
      { name: 'plain server: floor (bare fetch loop, same requests and concurrency, no storage)', value: round(floor / 1000, 2), unit: 's' },
      { name: 'plain server: initial sync vs floor', value: round(plainMs / floor, 2), unit: '×', target: { op: '<=' as const, value: 1.5 } },
      { name: 'plain server: requests, sync worker', value: median(plain.map((x) => x.requests)), unit: 'req' },
      { name: 'plain server: requests, floor', value: floorRequests, unit: 'req' },
    ];
    return [
      ...(feedOnly ? [] : plainFigures),
      { name: `embedded server (change feed): sync worker, median of ${runs}`, value: round(feedMs / 1000, 2), unit: 's', target: { op: '<=' as const, value: 4 } },
      { name: 'embedded server: records mirrored per second', value: Math.round(feedRate), unit: 'rec/s', target: { op: '>=' as const, value: 5_000 } },
      { name: 'embedded server: floor (bare fetch loop: the same listings and history, parsed, not stored)', value: round(median(feedFloor) / 1000, 2), unit: 's' },
      { name: 'embedded server: requests', value: median(feed.map((x) => x.requests)), unit: 'req' },
      { name: 'raw IndexedDB batching, same rows and indexes (1,000 a transaction, relaxed)', value: Math.round(rawRate), unit: 'rec/s' },
      { name: 'embedded server: share of the raw IndexedDB rate', value: round(feedRate / rawRate, 2), unit: '×' },
      { name: 'IndexedDB size after the initial sync', value: round(kept.initial.idbBytes / MiB, 1), unit: 'MiB' },
    ];
  },
};
