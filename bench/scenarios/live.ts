// Live updates across two browser contexts of alice (10,000 conversations mirrored in each): a
// conversation muted/unmuted in A (through its sync client, as the UI does) until its row shows it
// in B, which nobody touches (the row on screen: the DOM, not just IndexedDB). p50/p95 of
// LIVE_SAMPLES. Part of steady-sync; `npm run bench live` runs this part alone.
import type { Page } from 'playwright-core';
import { waitIdle } from '../lib/app';
import { aliceMirror, syncWorld, timedInitialSync, type SignedInSession, type SyncWorld } from '../lib/mirror';
import type { FigureInput } from '../lib/figures';
import type { Scenario } from '../lib/scenario';
import { runToken } from '../lib/seed';
import { percentile, round } from '../lib/stats';

export const LIVE_SAMPLES = Number(process.env.BENCH_LIVE_SAMPLES || 20);

/** The conversation in the first row of the list on screen, and its title. */
async function topRow(page: Page): Promise<{ id: string; title: string }> {
  return page.evaluate(() => {
    const link = document.querySelector('[role="table"][aria-label="Conversations"] [aria-rowindex="2"] a') as HTMLAnchorElement;
    const id = new URL(link.href).searchParams.get('c')!;
    // The row's name (the link also holds the kind, the last activity and marks).
    return { id, title: link.querySelector('.name')?.textContent ?? link.title };
  });
}

/**
 * One live update: muted (or unmuted) in A, until B's row shows it (its "Muted" mark under the name:
 * a phone's row has no mute button). Latency in ms (one clock).
 */
async function liveOnce(a: Page, b: Page, target: { id: string; title: string }, muted: boolean): Promise<number> {
  const seen = b.evaluate(
    (wanted) =>
      new Promise<number>((resolve) => {
        const started = Date.now();
        const look = () => {
          if ((document.querySelector('[aria-rowindex="2"] .state-mark[title="Muted"]') !== null) === wanted) resolve(Date.now());
          else if (Date.now() - started > 30_000) resolve(NaN); // never shown: reported, not waited for forever
          else requestAnimationFrame(look);
        };
        look();
      }),
    muted,
  );
  const t0 = await a.evaluate(
    async ([id, value]) => {
      const at = Date.now();
      await (window as any).parley.client.updateConversation(id, { is_muted: value });
      return at;
    },
    [target.id, muted] as const,
  );
  return (await seen) - t0;
}

/** The latencies (ms) of LIVE_SAMPLES live updates from a second context of alice to `session` (B). */
export async function liveLatencies(w: SyncWorld, session: SignedInSession, log: (m: string) => void): Promise<number[]> {
  // A: a second context of alice (its own initial sync); B: the mirror handed in.
  const other = await timedInitialSync(w.browser, w.app.baseUrl, runToken('alice'), { conversations: w.alice.ids.length, files: w.alice.files });
  const a = other.session.page;
  const b = session.page;
  await waitIdle(a);
  await waitIdle(b);
  const target = await topRow(b);
  const latencies: number[] = [];
  let muted = (await b.evaluate(async (id) => (await (window as any).parley.db.conversations.get(id)).is_muted, target.id)) as boolean;
  for (let i = 0; i < LIVE_SAMPLES; i++) {
    muted = !muted;
    latencies.push(await liveOnce(a, b, target, muted));
    await waitIdle(a);
    await waitIdle(b);
  }
  log(`live latency over ${LIVE_SAMPLES}: ${latencies.map((x) => x.toFixed(0)).join(', ')} ms`);
  if (latencies.some((x) => Number.isNaN(x))) throw new Error(`a live update never showed in the other context (${target.title})`);
  await other.session.context.close();
  return latencies;
}

export function liveFigures(latencies: number[]): FigureInput[] {
  return [
    { name: `live update, another context, to the row on screen: p50 (${LIVE_SAMPLES} samples)`, value: round(percentile(latencies, 50) / 1000, 3), unit: 's' },
    { name: 'live update: p95', value: round(percentile(latencies, 95) / 1000, 3), unit: 's', target: { op: '<=' as const, value: 2 } },
  ];
}

/** Only the live updates of steady-sync (not in the whole run, which measures them there). */
export const live: Scenario = {
  name: 'live',
  title: 'Live updates alone (part of steady-sync): another context of alice, to the row on screen',
  async run({ log }) {
    const w = await syncWorld(log);
    const { session } = await aliceMirror(log);
    return liveFigures(await liveLatencies(w, session, log));
  },
};
