// Eight tabs of one user in one browser (issue 17). A browser keeps at most six HTTP/1.1
// connections to a host: when every tab's sync worker held its own live stream, six streams took
// them all and nothing else reached the server. Now the tabs elect one leader (a Web Lock held
// for its worker's life) that holds the ONE stream; the others see its pulls through the shared
// IndexedDB. Checked here: changes made in any tab reach the server and every other tab, another
// client's change reaches every tab with nobody touching them, the server sees one stream, and when
// the leader's tab closes the next tab takes the stream over. Desktop project only.
//
// No wall-clock bound: how fast a change arrives is the bench's figure (steady-sync's live-update
// latency). What proves the live path here is that a change arrives at all while no tab could have
// polled it: with its stream connected the leader's own timer is a safety net of 10 minutes, and a
// follower's too (lib/sync/engine/engine.ts, schedule), far beyond ARRIVES below.
import http from 'node:http';
import { expect, test, type Page, type Request } from '@playwright/test';
import { api, base, expectAllSynced, signIn, unique, userFor } from './helpers';

const TABS = 8;
/**
 * How long a change may take to show before the test gives up: generous, for a loaded machine
 * (eight tabs on two cores). Not a speed claim; see above.
 */
const ARRIVES = { timeout: 30_000 };
/** The server's default MAX_STREAMS_PER_USER (playwright.config.ts does not change it). */
const STREAM_CAP = 10;

/**
 * How many more live streams the server accepts for this user before it answers 429 (its
 * per-user cap, MAX_STREAMS_PER_USER), opened straight from here and closed again; null when
 * the server has no cap (it accepted `max` of them).
 */
async function streamsLeftBeforeCap(authorization: string, max = 12): Promise<number | null> {
  const opened: http.ClientRequest[] = [];
  try {
    for (let i = 0; i < max; i++) {
      const status = await new Promise<number>((resolve, reject) => {
        const request = http.get(`${base}/v1/events/stream`, { agent: false, headers: { authorization, accept: 'text/event-stream' } }, (response) => {
          resolve(response.statusCode ?? 0);
          if (response.statusCode !== 200) response.resume();
        });
        request.on('error', reject);
        opened.push(request);
      });
      if (status === 429) return i;
      expect(status).toBe(200);
    }
    return null;
  } finally {
    for (const request of opened) request.destroy();
  }
}

/**
 * Live-stream requests of the browser's tabs (their workers' included) that have not ended; a
 * closed tab's stream ends with its worker, whether or not that is reported.
 */
function trackStreams() {
  const open = new Map<Request, Page>();
  const isStream = (r: Request) => new URL(r.url()).pathname === '/v1/events/stream';
  return {
    watch(page: Page) {
      page.on('request', (r) => void (isStream(r) && open.set(r, page)));
      page.on('requestfinished', (r) => void open.delete(r));
      page.on('requestfailed', (r) => void open.delete(r));
      page.on('close', () => {
        for (const [r, owner] of open) if (owner === page) open.delete(r);
      });
    },
    count: () => open.size,
  };
}

test('eight tabs: one live stream; every change reaches the server and every tab; the stream is handed over', async ({ context, request }, info) => {
  test.setTimeout(180_000);
  const server = await api(request, info);
  const authorization = userFor(info).auth.authorization;
  // The server's per-user cap on open streams (MAX_STREAMS_PER_USER, 10 by default) counts
  // them for us; a server without it (429 never comes) leaves the count to the browser's requests.
  const usingCap = (await streamsLeftBeforeCap(authorization)) !== null;
  // Streams of earlier tests' closed contexts: the server lets them go.
  if (usingCap) await expect.poll(() => streamsLeftBeforeCap(authorization), { timeout: 15_000 }).toBe(STREAM_CAP);
  test.info().annotations.push({ type: 'stream count', description: usingCap ? 'the server\'s per-user cap' : 'browser requests (the server has no cap)' });

  const streams = trackStreams();
  const tabs: Page[] = [await context.newPage()];
  streams.watch(tabs[0]!);
  await signIn(tabs[0]!, info);
  for (let i = 1; i < TABS; i++) {
    const tab = await context.newPage();
    streams.watch(tab);
    await tab.goto('/');
    await expect(tab.getByRole('heading', { name: 'Conversations' })).toBeVisible();
    tabs.push(tab);
  }
  for (const tab of tabs) await expectAllSynced(tab);

  /** The server (or, without a cap, the browser) sees exactly one open stream of this user. */
  const expectOneStream = async () => {
    if (usingCap) await expect.poll(() => streamsLeftBeforeCap(authorization), { timeout: 15_000 }).toBe(STREAM_CAP - 1);
    else await expect.poll(() => streams.count(), { timeout: 15_000 }).toBe(1);
  };
  await expectOneStream();

  // A conversation created in the 8th tab: on the server, and in every other tab.
  const eighth = tabs[TABS - 1]!;
  const fromEighth = unique('tab8');
  await eighth.getByRole('button', { name: /New/ }).click();
  await eighth.getByLabel('Contact id').fill(fromEighth);
  await eighth.getByRole('dialog', { name: 'New conversation' }).getByRole('button', { name: 'Create' }).click();
  await Promise.all([
    expect.poll(async () => (await server.allConversations()).some((c) => c.contact_id === fromEighth), ARRIVES).toBe(true),
    ...tabs.slice(0, -1).map((tab) => expect(tab.getByRole('link', { name: new RegExp(fromEighth) })).toBeVisible(ARRIVES)),
  ]);
  await expect(eighth.getByRole('heading', { level: 1, name: new RegExp(fromEighth) })).toBeVisible();
  await eighth.goBack(); // to the list (client-side: the same page, the same worker)
  await expect(eighth.getByRole('heading', { name: 'Conversations' })).toBeVisible();

  // The 1st tab pins it: on the server, and in every other tab.
  await tabs[0]!.getByRole('button', { name: `Pin ${fromEighth}` }).click();
  await Promise.all([
    expect.poll(async () => (await server.allConversations()).find((c) => c.contact_id === fromEighth)?.is_pinned, ARRIVES).toBe(true),
    ...tabs.slice(1).map((tab) => expect(tab.getByRole('button', { name: `Unpin ${fromEighth}` })).toBeVisible(ARRIVES)),
  ]);

  // Another client's change, through the API: in every tab, nobody touching them.
  const remote = unique('remote');
  await server.createConversation(remote);
  await Promise.all(tabs.map((tab) => expect(tab.getByRole('link', { name: new RegExp(remote) })).toBeVisible(ARRIVES)));
  await expectOneStream();

  // Handover: the 1st tab (the first to start, so the leader) closes; the next waiter's worker
  // takes the stream over, and another client's change still reaches every tab left (only through
  // a new leader, its stream or its first pull: without one, every tab left is a follower on its
  // 10-minute timer).
  await tabs[0]!.close();
  const rest = tabs.slice(1);
  const afterClose = unique('handover');
  await server.createConversation(afterClose);
  await Promise.all(rest.map((tab) => expect(tab.getByRole('link', { name: new RegExp(afterClose) })).toBeVisible(ARRIVES)));
  await expectOneStream();
  // A change made in a follower still goes out (pushed by the follower itself, not left to a timer).
  const fromSecond = unique('tab2');
  await rest[0]!.getByRole('button', { name: /New/ }).click();
  await rest[0]!.getByLabel('Contact id').fill(fromSecond);
  await rest[0]!.getByRole('dialog', { name: 'New conversation' }).getByRole('button', { name: 'Create' }).click();
  await Promise.all([
    expect.poll(async () => (await server.allConversations()).some((c) => c.contact_id === fromSecond), ARRIVES).toBe(true),
    ...rest.slice(1).map((tab) => expect(tab.getByRole('link', { name: new RegExp(fromSecond) })).toBeVisible(ARRIVES)),
  ]);
});
