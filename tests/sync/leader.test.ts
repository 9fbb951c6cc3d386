// @vitest-environment node
// Many tabs on one database (issue 17): the tabs' engines elect a leader with a lock held for
// their life; only the leader holds the live stream and polls, the followers push their own
// writes at once and otherwise wait on a slow safety timer that any tab's pull pushes back.
// The lock manager and the BroadcastChannel are fakes with the browser's semantics (one holder,
// waiters granted in order, a released lock handed on at once; messages to every other end). The
// real thing — eight pages of the built app in Chromium — is tests/browser/many-tabs.spec.ts.
import { IDBFactory } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Leadership, leaderLockName, type LeaderLocks, type OpenTabChannel } from '../../lib/sync/engine/leader';
import { startTestServer, type TestServer } from '../helpers/server';
import { cleanSlate, makeDevice, PLAIN, RecordingClock, serverConversations, sharedLock, until, type Device } from './harness';

/** navigator.locks for one name at a time: one holder, waiters in order, `signal` abandons a wait. */
class FakeLocks implements LeaderLocks {
  private readonly holders = new Map<string, boolean>();
  private readonly queues = new Map<string, Array<{ callback: () => Promise<void>; done: (error?: unknown) => void }>>();

  request(name: string, options: { signal?: AbortSignal }, callback: () => Promise<void>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(name) ?? [];
      this.queues.set(name, queue);
      const entry = { callback, done: (error?: unknown) => (error ? reject(error) : resolve(undefined)) };
      options.signal?.addEventListener('abort', () => {
        const at = queue.indexOf(entry);
        if (at < 0) return; // already granted: only its callback's promise ends it
        queue.splice(at, 1);
        reject(new DOMException('aborted', 'AbortError'));
      });
      queue.push(entry);
      this.grant(name);
    });
  }

  held(name: string): boolean {
    return this.holders.get(name) === true;
  }

  waiting(name: string): number {
    return this.queues.get(name)?.length ?? 0;
  }

  private grant(name: string): void {
    if (this.held(name)) return;
    const next = this.queues.get(name)?.shift();
    if (!next) return;
    this.holders.set(name, true);
    queueMicrotask(() => {
      void Promise.resolve()
        .then(next.callback)
        .then(
          () => next.done(),
          (error) => next.done(error),
        )
        .finally(() => {
          this.holders.set(name, false);
          this.grant(name);
        });
    });
  }
}

/** BroadcastChannel: a message goes (asynchronously) to every other open end of its name. */
class FakeChannels {
  private readonly ends = new Set<{ name: string; onMessage: (message: unknown) => void }>();
  readonly posted: unknown[] = [];
  readonly open: OpenTabChannel = (name, onMessage) => {
    const end = { name, onMessage };
    this.ends.add(end);
    return {
      post: (message) => {
        this.posted.push(message);
        for (const other of [...this.ends]) if (other !== end && other.name === name) setTimeout(() => this.ends.has(other) && other.onMessage(message), 0);
      },
      close: () => void this.ends.delete(end),
    };
  };
}




const PERIOD = 3_600_000; // an hour: no periodic sync can explain what arrives within a test
const SAFETY = 7_200_000;
const DATABASE = 'many-tabs';

interface Tab {
  d: Device;
  clock: RecordingClock;
}

/** `count` tabs of one browser: one IndexedDB, one lock manager, one channel namespace. */
function openTabs(server: TestServer, token: string, count: number) {
  const indexedDB = new IDBFactory();
  const locks = new FakeLocks();
  const channels = new FakeChannels();
  const withLock = sharedLock();
  const tabs: Tab[] = [];
  for (let i = 0; i < count; i++) {
    const clock = new RecordingClock();
    const d = makeDevice(server.baseUrl, token, {
      indexedDB,
      name: DATABASE,
      engine: {
        clock,
        withLock,
        periodMs: PERIOD,
        safetyPeriodMs: SAFETY,
        debounceMs: 0,
        live: { backoff: { baseMs: 50, maxMs: 500 } },
        tabs: { database: DATABASE, locks, openChannel: channels.open },
      },
    });
    tabs.push({ d, clock });
  }
  return { tabs, locks, channels };
}

const streamRequests = (tab: Tab) => tab.d.net.seen.filter((r) => r.path.startsWith('/v1/events/stream'));
/** A tab's first sync is over once it has scheduled its next periodic one. */
const firstSyncDone = (tab: Tab) => tab.clock.delays.some((ms) => ms === PERIOD || ms === SAFETY);

function closeAll(tabs: Tab[]) {
  for (const { d } of tabs) {
    d.engine.stop();
    d.close();
  }
}


describe('many tabs, one live stream', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { EVENTS_HEARTBEAT_MS: '50' } });
  });
  afterAll(async () => server.stop());

  it("only the leader opens the stream; another device's change reaches every tab, a follower's write goes at once", async () => {
    const other = await cleanSlate(server.baseUrl, server.tokens.alice);
    const { tabs, locks } = openTabs(server, server.tokens.alice, 4);
    for (const { d } of tabs) d.engine.start();
    const [leader, ...followers] = tabs;
    await until(() => leader!.d.engine.live!.connected);
    await until(() => tabs.every(firstSyncDone));

    // One stream for the four tabs, opened by the first tab (the lock's first holder).
    expect(locks.held(leaderLockName(DATABASE))).toBe(true);
    expect(locks.waiting(leaderLockName(DATABASE))).toBe(3);
    expect(server.service.hub.size).toBe(1);
    for (const f of followers) expect(streamRequests(f)).toEqual([]);
    // Followers never poll at the normal period: the leader does that for every tab.
    for (const f of followers) expect(f.clock.delays).not.toContain(PERIOD);

    // Another device's change: the leader's stream pokes, its pull lands in the shared database.
    const c = await other.createConversation({ contact_id: 'many-tabs-remote' });
    for (const { d } of tabs) await until(async () => (await d.db.conversations.get(c.id)) !== undefined);

    // A follower's write is pushed by that follower at once (shared outbox, shared sync lock).
    const last = followers.at(-1)!;
    await last.d.client.createConversation({ contact_id: 'many-tabs-local' });
    last.d.engine.requestSync();
    await until(async () => (await serverConversations(server.baseUrl, server.tokens.alice)).some((x) => x.contact_id === 'many-tabs-local'));
    for (const f of followers) expect(streamRequests(f)).toEqual([]);
    expect(server.service.hub.size).toBe(1);
    closeAll(tabs);
    await until(() => server.service.hub.size === 0);
  });

  it('the leader closes: the next tab takes the stream over at once, and changes keep arriving', async () => {
    const other = await cleanSlate(server.baseUrl, server.tokens.bob);
    const { tabs } = openTabs(server, server.tokens.bob, 3);
    for (const { d } of tabs) d.engine.start();
    const [leader, next, last] = tabs as [Tab, Tab, Tab];
    await until(() => leader.d.engine.live!.connected);
    await until(() => tabs.every(firstSyncDone));

    // The leader's tab closes; nobody asks the others to sync.
    leader.d.engine.stop();
    leader.d.close();
    await until(() => next.d.engine.live!.connected);
    expect(server.service.hub.size).toBe(1);
    expect(streamRequests(last)).toEqual([]);
    // It is the leader now: its period is the leader's (the stream's safety net), the stream pokes.
    const c = await other.createConversation({ contact_id: 'after-handover' });
    for (const tab of [next, last]) await until(async () => (await tab.d.db.conversations.get(c.id)) !== undefined);
    expect(streamRequests(last)).toEqual([]);
    closeAll([next, last]);
    await until(() => server.service.hub.size === 0);
  });
});

describe('many tabs against a server without the feed', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: PLAIN });
  });
  afterAll(async () => server.stop());

  it('only the leader polls; any tab that pulls pushes the others’ timers back', async () => {
    const { tabs, channels } = openTabs(server, server.tokens.alice, 3);
    for (const { d } of tabs) d.engine.start();
    const [leader, ...followers] = tabs as [Tab, Tab, Tab];
    await until(() => tabs.every(firstSyncDone));
    expect(leader.clock.delays).toContain(PERIOD);
    for (const f of followers) expect(f.clock.delays).not.toContain(PERIOD);
    for (const tab of tabs) expect(streamRequests(tab)).toEqual([]);

    // The leader pulls (its period came): the followers hear it and start their wait again.
    await until(() => channels.posted.length >= 3); // every tab's first pull was announced
    // The leader may still be in a second run (its lead came while the first ran: becameLeader's
    // sync). Counted before it ends, that run's pull would either land in syncNow's count or be
    // the one syncNow joins, as it happens to end: let it end first.
    await leader.d.engine.settled();
    const rearmed = followers.map((f) => f.clock.delays.filter((ms) => ms === SAFETY).length);
    const announced = channels.posted.length;
    await leader.d.engine.syncNow();
    expect(channels.posted.length).toBe(announced + 1);
    await until(() => followers.every((f, i) => f.clock.delays.filter((ms) => ms === SAFETY).length > rearmed[i]!));
    closeAll(tabs);
  });
});

describe('Leadership', () => {
  it('one leader at a time; a stopped leader hands over at once; a tab that leaves while waiting never leads', async () => {
    const locks = new FakeLocks();
    const led: string[] = [];
    const tab = (name: string) => new Leadership({ database: 'db', locks, onLeading: () => led.push(name), onPulled: () => {} });
    const a = tab('a');
    const b = tab('b');
    const c = tab('c');
    a.start();
    b.start();
    c.start();
    await until(() => led.length === 1);
    expect(led).toEqual(['a']);
    expect([a.leading, b.leading, c.leading]).toEqual([true, false, false]);
    b.stop(); // closed while waiting
    a.stop();
    await until(() => led.length === 2);
    expect(led).toEqual(['a', 'c']);
    expect(a.leading).toBe(false);
    c.stop();
    await until(() => !locks.held(leaderLockName('db')));
    expect(led).toEqual(['a', 'c']);
  });

  it('a lock manager that refuses the request: this tab leads, as without Web Locks', async () => {
    const refusing: LeaderLocks = { request: () => Promise.reject(new DOMException('no locks here', 'SecurityError')) };
    let led = false;
    new Leadership({ database: 'db', locks: refusing, onLeading: () => (led = true), onPulled: () => {} }).start();
    await until(() => led);
  });

  it('without Web Locks every tab leads (each its own stream, as before)', () => {
    const led: string[] = [];
    const a = new Leadership({ database: 'db', onLeading: () => led.push('a'), onPulled: () => {} });
    const b = new Leadership({ database: 'db', onLeading: () => led.push('b'), onPulled: () => {} });
    a.start();
    b.start();
    expect(led).toEqual(['a', 'b']);
  });
});
