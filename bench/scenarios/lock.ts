// The device lock's cost (issue 28): the same work on a server asking for the lock (a PIN set at
// sign-in, every row of the mirror sealed: LOCK_AFTER_MINUTES=5) and on one that does not
// (LOCK_AFTER_MINUTES=0), same data, same run, alternating.
// - Initial sync of alice's 10,000 + 10,000 (change feed), timed from the click that starts it
//   (Sign in; Set PIN with the lock).
// - Reloads with the mirror held, the CPU slowed 4× (a mid-range phone): without the lock, until
//   the first row is painted; with it, the lock screen, then the PIN typed and Unlock clicked:
//   "unlock → list painted" is from the click to the first row (the PIN's Argon2id stretch
//   included), and "first rows" leaves out the person's wait and the stretch (lock screen shown +
//   from the key ready, `parley:unlocked`, to the first row) so it compares with the load without.
// - Replay of UPDATES queued updates and UPLOADS queued 1 MiB uploads after reconnecting.
// `npm run bench lock`.
import type { Page } from 'playwright-core';
import { startApp, waitIdle } from '../lib/app';
import { BENCH_PIN, syncWorld, SYNC_CONVERSATIONS, timedInitialSync, type SignedInSession } from '../lib/mirror';
import { CPU_RATE, ROW } from '../lib/first-screen';
import type { FigureInput } from '../lib/figures';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { median, round } from '../lib/stats';

const UPDATES = Number(process.env.BENCH_LOCK_UPDATES ?? 300);
const UPLOADS = Number(process.env.BENCH_LOCK_UPLOADS ?? 20);

/** Plain JS, installed before the page's scripts: when the lock screen and the first row were painted. */
const TIMING = `(() => {
  const s = { lockAt: null, rowsAt: null };
  globalThis.__lockTiming = s;
  const painted = (set) => requestAnimationFrame(() => { const c = new MessageChannel(); c.port1.onmessage = () => set(performance.now()); c.port2.postMessage(0); });
  const mo = new MutationObserver(() => {
    if (s.lockAt === null && document.getElementById('unlock-pin')) { s.lockAt = -1; painted((t) => { s.lockAt = t; }); }
    if (s.rowsAt === null && document.querySelector(${JSON.stringify(ROW)})) { s.rowsAt = -1; mo.disconnect(); painted((t) => { s.rowsAt = t; }); }
  });
  mo.observe(document, { childList: true, subtree: true });
})();`;

interface Reload {
  /** Navigation → first row (no lock), or lock screen + key ready → first row (lock). */
  firstRowsMs: number;
  /** Unlock clicked → first row (lock only). */
  unlockToListMs: number | null;
}

async function timedReload(page: Page, lock: boolean): Promise<Reload> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_RATE });
    await page.reload({ waitUntil: 'commit' });
    const timing = () => page.evaluate(() => (globalThis as any).__lockTiming as { lockAt: number | null; rowsAt: number | null });
    if (!lock) {
      await page.waitForFunction(() => (globalThis as any).__lockTiming?.rowsAt > 0, null, { timeout: 120_000 });
      return { firstRowsMs: (await timing()).rowsAt!, unlockToListMs: null };
    }
    await page.waitForFunction(() => (globalThis as any).__lockTiming?.lockAt > 0, null, { timeout: 120_000 });
    await page.getByLabel('PIN', { exact: true }).fill(BENCH_PIN);
    const clickAt = await page.evaluate(() => {
      const at = performance.now();
      (document.querySelector('#unlock-pin')!.closest('form')!.querySelector('button[type=submit]') as HTMLButtonElement).click();
      return at;
    });
    await page.waitForFunction(() => (globalThis as any).__lockTiming?.rowsAt > 0, null, { timeout: 120_000 });
    const { lockAt, rowsAt } = await timing();
    const unlockedAt = await page.evaluate(() => performance.getEntriesByName('parley:unlocked').at(-1)?.startTime ?? NaN);
    return { firstRowsMs: lockAt! + (rowsAt! - unlockedAt), unlockToListMs: rowsAt! - clickAt };
  } finally {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 }).catch(() => {});
    await cdp.detach().catch(() => {});
  }
}

/** Queues the updates and uploads with the worker stopped and the network cut, then times their replay. */
async function timedReplay(session: SignedInSession, run: number): Promise<number> {
  const { page, context } = session;
  await waitIdle(page);
  await context.setOffline(true);
  await page.evaluate(
    async ({ updates, uploads, run }) => {
      const p = (window as any).parley;
      await p.worker.stop();
      const ids = (await p.db.conversations.limit(updates).primaryKeys()) as string[];
      const bytes = new Uint8Array(1024 * 1024);
      for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
      for (const id of ids) await p.client.updateConversation(id, { is_pinned: run % 2 === 0 });
      for (let j = 0; j < uploads; j++) await p.client.uploadFile({ conversationId: ids[j] }, { name: `lock-${run}-${j}.bin`, type: 'application/octet-stream', bytes });
    },
    { updates: UPDATES, uploads: UPLOADS, run },
  );
  await context.setOffline(false);
  return page.evaluate(async (token) => {
    const p = (window as any).parley;
    const t0 = performance.now();
    await p.restart(token);
    const deadline = Date.now() + 10 * 60_000;
    while ((await p.db.outbox.count()) > 0) {
      if (Date.now() > deadline) throw new Error('outbox not empty after 10 minutes');
      await new Promise((res) => setTimeout(res, 25));
    }
    return performance.now() - t0;
  }, runToken('alice'));
}

export const lock: Scenario = {
  name: 'lock',
  title: `The device lock's cost: initial sync of ${SYNC_CONVERSATIONS} + ${SYNC_CONVERSATIONS}, reload → first rows and unlock → list (CPU ${CPU_RATE}×), replay of ${UPDATES} updates + ${UPLOADS} × 1 MiB; with the lock (a PIN, rows sealed) vs without, same run`,
  async run({ runs, log }) {
    const w = await syncWorld(log);
    const withLock = await startApp(w.dataDir, { LOCK_AFTER_MINUTES: '5' });
    const without = await startApp(w.dataDir, { LOCK_AFTER_MINUTES: '0' });
    const sync = { lock: [] as number[], open: [] as number[] };
    const firstRows = { lock: [] as number[], open: [] as number[] };
    const unlockToList: number[] = [];
    const replay = { lock: [] as number[], open: [] as number[] };
    const passes = Math.min(runs, Number(process.env.BENCH_LOCK_RUNS || 2));
    // Each replay adds its uploads to alice's files: the next initial sync mirrors them too.
    let uploaded = 0;
    for (let r = 0; r < passes; r++) {
      for (const locked of [false, true]) {
        const app = locked ? withLock : without;
        const expected = { conversations: SYNC_CONVERSATIONS, files: w.alice.files + uploaded };
        const { session, initial } = await timedInitialSync(w.browser, app.baseUrl, runToken('alice'), expected, { lock: locked });
        try {
          await session.context.addInitScript(TIMING);
          (locked ? sync.lock : sync.open).push(initial.ms);
          await waitIdle(session.page);
          for (let i = 0; i < 2; i++) {
            const reload = await timedReload(session.page, locked);
            (locked ? firstRows.lock : firstRows.open).push(reload.firstRowsMs);
            if (reload.unlockToListMs !== null) unlockToList.push(reload.unlockToListMs);
          }
          await session.page.waitForFunction(() => 'parley' in window, null, { timeout: 60_000 });
          (locked ? replay.lock : replay.open).push(await timedReplay(session, r));
          uploaded += UPLOADS;
          log(`run ${r + 1}/${passes} ${locked ? 'lock' : 'no lock'}: initial sync ${(initial.ms / 1000).toFixed(2)} s; first rows ${(locked ? firstRows.lock : firstRows.open).slice(-2).map((ms) => ms.toFixed(0)).join(', ')} ms${locked ? `; unlock → list ${unlockToList.slice(-2).map((ms) => ms.toFixed(0)).join(', ')} ms` : ''}; replay ${((locked ? replay.lock : replay.open).at(-1)! / 1000).toFixed(2)} s`);
        } finally {
          await session.context.close();
        }
      }
    }
    await withLock.child.stop();
    await without.child.stop();
    const ratio = (a: number[], b: number[]) => round(median(a) / median(b), 2);
    const figures: FigureInput[] = [
      { name: 'initial sync, lock on', value: round(median(sync.lock) / 1000, 2), unit: 's' },
      { name: 'initial sync, lock off', value: round(median(sync.open) / 1000, 2), unit: 's' },
      { name: 'initial sync: lock on vs off', value: ratio(sync.lock, sync.open), unit: '×', target: { op: '<=', value: 1.15 } },
      { name: `first rows (${SYNC_CONVERSATIONS.toLocaleString('en-US')} mirrored, CPU ${CPU_RATE}×), lock on: lock screen + key ready → rows`, value: round(median(firstRows.lock), 0), unit: 'ms' },
      { name: `first rows, lock off: navigation → rows`, value: round(median(firstRows.open), 0), unit: 'ms' },
      { name: 'first rows: lock on vs off', value: ratio(firstRows.lock, firstRows.open), unit: '×', target: { op: '<=', value: 1.1 } },
      { name: `unlock → list painted (PIN, CPU ${CPU_RATE}×)`, value: round(median(unlockToList), 0), unit: 'ms', target: { op: '<=', value: 1000 } },
      { name: `replay ${UPDATES} updates + ${UPLOADS} × 1 MiB, lock on`, value: round(median(replay.lock) / 1000, 2), unit: 's' },
      { name: 'replay, lock off', value: round(median(replay.open) / 1000, 2), unit: 's' },
      { name: 'replay: lock on vs off', value: ratio(replay.lock, replay.open), unit: '×', target: { op: '<=', value: 1.1 } },
    ];
    return figures;
  },
};
