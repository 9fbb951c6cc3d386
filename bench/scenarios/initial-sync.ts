// 4. Initial sync in headless Chromium: a fresh mirror of 10,000 conversations and 10,000 files
//    through the app's real sync worker, vs a bare loop in a page fetching the same pages (the same
//    requests: conversation pages, file pages, then each active conversation's file list) and
//    storing nothing (the floor). The sync worker's pass is timed once per bench run (it takes
//    minutes; see lib/mirror.ts); the floor is the median of `runs`.
import type { Page } from 'playwright-core';
import { aliceMirror, SYNC_CONVERSATIONS, syncWorld } from '../lib/mirror';
import type { Scenario } from '../lib/scenario';
import { BENCH_TOKENS } from '../lib/seed';
import { median, MiB, round } from '../lib/stats';

/** The floor: the requests the engine makes for a fresh mirror, sequential, nothing stored. */
export async function floorLoop(page: Page, token: string): Promise<{ ms: number; requests: number; conversations: number; files: number }> {
  // A string, so no bundler helper (tsx's __name) ends up in the page.
  return page.evaluate(`(async (t) => {
    const headers = { Authorization: 'Bearer ' + t };
    let requests = 0;
    async function list(path, extra) {
      const all = [];
      let after = null;
      for (let guard = 0; guard < 10000; guard++) {
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
    let placed = 0;
    for (const c of conversations) {
      if (c.last_active_at === null) continue; // the engine never lists a conversation without activity
      placed += (await list('/v1/files', '&conversation_id=' + c.id)).length;
    }
    const ms = performance.now() - t0;
    if (placed !== files.length) throw new Error('floor placed ' + placed + ' of ' + files.length + ' files');
    return { ms, requests, conversations: conversations.length, files: files.length };
  })(${JSON.stringify(token)})`);
}

export const initialSync: Scenario = {
  name: 'initial-sync',
  title: `Initial sync in Chromium: ${SYNC_CONVERSATIONS.toLocaleString('en-US')} conversations + files, sync worker vs bare fetch loop`,
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const floorMs: number[] = [];
    let floorRequests = 0;
    for (let r = 0; r < runs; r++) {
      // A page of the same origin, signed out (no worker, no storage), the same requests.
      const context = await w.browser.newContext({ baseURL: w.app.baseUrl });
      const page = await context.newPage();
      await page.goto('/');
      const floor = await floorLoop(page, BENCH_TOKENS.alice);
      await context.close();
      floorMs.push(floor.ms);
      floorRequests = floor.requests;
      log(`floor run ${r + 1}/${runs}: ${(floor.ms / 1000).toFixed(2)} s, ${floor.requests} requests`);
    }
    const { initial } = await aliceMirror(log);
    log(`sync worker: ${(initial.ms / 1000).toFixed(1)} s, ${initial.requests} requests; phases ${JSON.stringify(initial.phases)}`);
    const floor = median(floorMs);
    const out = [
      { name: `fresh mirror (${SYNC_CONVERSATIONS} conversations, ${w.alice.files} files): sync worker (1 run)`, value: round(initial.ms / 1000, 2), unit: 's' },
      { name: 'fresh mirror: floor (bare fetch loop, same requests, no storage)', value: round(floor / 1000, 2), unit: 's' },
      { name: 'initial sync vs floor', value: round(initial.ms / floor, 2), unit: '×', target: { op: '<=' as const, value: 1.5 } },
      { name: 'requests: sync worker', value: initial.requests, unit: 'req' },
      { name: 'requests: floor', value: floorRequests, unit: 'req' },
      { name: 'IndexedDB size after the initial sync', value: round(initial.idbBytes / MiB, 1), unit: 'MiB' },
    ];
    for (const [phase, seconds] of Object.entries(initial.phases)) {
      out.push({ name: `sync worker: pull phase "${phase}"`, value: round(seconds, 1), unit: 's' });
    }
    return out;
  },
};
