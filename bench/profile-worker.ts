// A diagnostic, not a benchmark: where the sync worker's time goes during alice's initial sync and
// during a replay of queued updates and 1 MiB uploads, with the device lock (a PIN, rows sealed)
// and without it. Prints the worker's sampled self time per function (top 25), by script.
// Run: `npx tsx bench/profile-worker.ts [lock|open] [sync|replay]` (both of each by default);
// BENCH_PROFILE_TIMELINE=1 prints every request of the replay by its start, with any line a worker
// logs as console.log(`[T] ${Date.now()} what`) in its place (temporary marks, to time steps);
// BENCH_SYNC_CONVERSATIONS, BENCH_LOCK_UPDATES (300), BENCH_LOCK_UPLOADS (20) size the work.
import type { CDPSession, Page } from 'playwright-core';
import { startApp, waitIdle } from './lib/app';
import { syncWorld, SYNC_CONVERSATIONS, timedInitialSync } from './lib/mirror';
import { installExitHooks, stopAll } from './lib/proc';
import { runToken } from './lib/seed';

const UPDATES = Number(process.env.BENCH_LOCK_UPDATES ?? 300);
const UPLOADS = Number(process.env.BENCH_LOCK_UPLOADS ?? 20);

interface Profile {
  nodes: { id: number; callFrame: { url: string; functionName: string; lineNumber: number; columnNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** The page's dedicated workers, reached through the page's CDP session (auto-attach, not flattened). */
class WorkerProfiler {
  private sessions: string[] = [];
  /** The page's main thread, profiled over the same span. */
  page: Profile | null = null;
  private next = 1;
  private pending = new Map<number, (result: unknown) => void>();
  constructor(private cdp: CDPSession) {
    cdp.on('Target.attachedToTarget', (e: any) => {
      if (e.targetInfo.type !== 'worker') return;
      this.sessions.push(e.sessionId);
      // A worker started while profiling (the sync worker, started at sign-in): profiled from now.
      if (this.running) void this.startOn(e.sessionId);
      // A worker started after runtime() (the replay restarts the sync worker): its console too.
      if (this.consoleOn) void this.send(e.sessionId, 'Runtime.enable');
    });
    cdp.on('Target.receivedMessageFromTarget', (e: any) => {
      const message = JSON.parse(e.message);
      if (message.method === 'Runtime.consoleAPICalled') {
        const text = message.params.args.map((a: any) => a.value ?? a.description).join(' ');
        if (text.startsWith('[T] ')) this.marks.push(text);
      }
      if (message.id && this.pending.has(message.id)) {
        this.pending.get(message.id)!(message.result ?? message.error);
        this.pending.delete(message.id);
      }
    });
  }
  static async attach(page: Page): Promise<WorkerProfiler> {
    const cdp = await page.context().newCDPSession(page);
    const profiler = new WorkerProfiler(cdp);
    await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
    return profiler;
  }
  private send(sessionId: string, method: string, params: object = {}): Promise<any> {
    const id = this.next++;
    const done = new Promise((resolve) => this.pending.set(id, resolve));
    void this.cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
    return done;
  }
  private running = false;
  /** The workers' console lines `[T] <Date.now()> <what>`, kept for the timeline (BENCH_PROFILE_TIMELINE). */
  readonly marks: string[] = [];
  private consoleOn = false;
  /** Reports the workers' console from now on (their `[T]` lines go to `marks`). */
  async runtime(): Promise<void> {
    this.consoleOn = true;
    for (const s of this.sessions) await this.send(s, 'Runtime.enable');
  }
  private async startOn(s: string): Promise<void> {
    await this.send(s, 'Profiler.enable');
    await this.send(s, 'Profiler.setSamplingInterval', { interval: 200 });
    await this.send(s, 'Profiler.start');
  }
  async start(): Promise<void> {
    this.running = true;
    await this.cdp.send('Profiler.enable');
    await this.cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await this.cdp.send('Profiler.start');
    for (const s of this.sessions) await this.startOn(s);
  }
  async stop(): Promise<Profile[]> {
    this.running = false;
    const out: Profile[] = [];
    this.page = ((await this.cdp.send('Profiler.stop')) as { profile: Profile }).profile;
    for (const s of this.sessions) {
      const result = await this.send(s, 'Profiler.stop');
      if (result?.profile) out.push(result.profile);
    }
    return out;
  }
}

function report(label: string, profiles: Profile[]): void {
  const self = new Map<string, number>();
  const perUrl = new Map<string, number>();
  let total = 0;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    profile.samples.forEach((id, i) => {
      const f = byId.get(id)!.callFrame;
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      if (f.functionName === '(idle)' || f.functionName === '(program)') return;
      total += dt;
      const url = f.url.split('/').pop() || '(native)';
      const key = `${f.functionName || '(anonymous)'} ${url}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + dt);
      perUrl.set(url, (perUrl.get(url) ?? 0) + dt);
    });
  }
  console.log(`\n== ${label}: ${total.toFixed(0)} ms busy`);
  // BENCH_PROFILE_CALLERS=<script name>: time in that script, by the first frame outside it (its caller).
  const focus = process.env.BENCH_PROFILE_CALLERS;
  if (focus) {
    const callers = new Map<string, number>();
    for (const profile of profiles) {
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const parent = new Map<number, number>();
      for (const n of profile.nodes as { id: number; children?: number[] }[]) for (const c of n.children ?? []) parent.set(c, n.id);
      profile.samples.forEach((id, i) => {
        if (!byId.get(id)!.callFrame.url.endsWith(focus)) return;
        let at: number | undefined = id;
        while (at !== undefined && byId.get(at)!.callFrame.url.endsWith(focus)) at = parent.get(at);
        const chain: string[] = [];
        for (let k = 0; k < 3 && at !== undefined; k++, at = parent.get(at)) {
          const f = byId.get(at)!.callFrame;
          chain.push(`${f.functionName || '(anon)'}@${f.url.split('/').pop()}:${f.lineNumber + 1}:${f.columnNumber + 1}`);
        }
        const key = chain.join(' < ');
        callers.set(key, (callers.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
      });
    }
    for (const [key, ms] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  caller ${ms.toFixed(1).padStart(7)} ms  ${key}`);
  }
  for (const [url, ms] of [...perUrl].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${ms.toFixed(0).padStart(6)} ms  ${url}`);
  for (const [key, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${ms.toFixed(1).padStart(7)} ms  ${key}`);
}

async function main() {
  installExitHooks();
  const args = process.argv.slice(2);
  const modes = args.filter((a) => a === 'lock' || a === 'open');
  const parts = args.filter((a) => a === 'sync' || a === 'replay');
  const w = await syncWorld((m) => console.log(m));
  let uploaded = 0;
  for (const mode of modes.length ? modes : ['open', 'lock']) {
    const locked = mode === 'lock';
    const app = await startApp(w.dataDir, { LOCK_AFTER_MINUTES: locked ? '5' : '0' });
    const expected = { conversations: SYNC_CONVERSATIONS, files: w.alice.files + uploaded };
    // The worker starts at sign-in: profiled from its start (attached before the click).
    const profileSync = (!parts.length || parts.includes('sync')) && process.env.BENCH_PROFILE !== '0';
    let syncProfiler: WorkerProfiler | null = null;
    const beforeSignIn = async (page: Page) => {
      syncProfiler = await WorkerProfiler.attach(page);
      await syncProfiler.start();
    };
    const { session, initial } = await timedInitialSync(w.browser, app.baseUrl, runToken('alice'), expected, { lock: locked, beforeSignIn: profileSync ? beforeSignIn : undefined });
    console.log(`${mode}: initial sync ${(initial.ms / 1000).toFixed(2)} s`);
    if (syncProfiler) {
      const sync = syncProfiler as WorkerProfiler;
      report(`${mode} initial sync (${(initial.ms / 1000).toFixed(2)} s): the workers`, await sync.stop());
      report(`${mode} initial sync: the page's main thread`, [sync.page!]);
    }
    const { page, context } = session;
    await waitIdle(page);
    const profiler = await WorkerProfiler.attach(page);
    if (!parts.length || parts.includes('replay')) {
      await context.setOffline(true);
      await page.evaluate(
        async ({ updates, uploads }) => {
          const p = (window as any).parley;
          await p.worker.stop();
          const ids = (await p.db.conversations.limit(Math.max(updates, uploads)).primaryKeys()) as string[];
          const bytes = new Uint8Array(1024 * 1024);
          for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
          for (const id of ids.slice(0, updates)) await p.client.updateConversation(id, { is_pinned: true });
          for (let j = 0; j < uploads; j++) await p.client.uploadFile({ conversationId: ids[j] }, { name: `profile-${j}.bin`, type: 'application/octet-stream', bytes });
        },
        { updates: UPDATES, uploads: UPLOADS },
      );
      await context.setOffline(false);
      const seen: { at: number; url: string; method: string; status: number; ms: number }[] = [];
      const t0 = Date.now();
      const onDone = async (request: import('playwright-core').Request) => {
        const response = await request.response().catch(() => null);
        const timing = request.timing();
        seen.push({ at: timing.startTime - t0, url: request.url().replace(/^https?:\/\/[^/]+/, '').slice(0, 40), method: request.method(), status: response?.status() ?? 0, ms: timing.responseEnd });
      };
      context.on('requestfinished', onDone);
      await profiler.runtime();
      if (process.env.BENCH_PROFILE !== '0') await profiler.start();
      const replayMs = await page.evaluate(async (token) => {
        const p = (window as any).parley;
        const t0 = performance.now();
        await p.restart(token);
        while ((await p.db.outbox.count()) > 0) await new Promise((r) => setTimeout(r, 25));
        return performance.now() - t0;
      }, runToken('alice'));
      uploaded += UPLOADS;
      context.off('requestfinished', onDone);
      seen.sort((a, b) => a.at - b.at);
      const byKind = new Map<string, { n: number; ms: number }>();
      for (const r of seen) {
        const key = `${r.method} ${r.url.replace(/[A-Z0-9]{16}/g, ':id').replace(/\?.*/, '')} ${r.status}`;
        const k = byKind.get(key) ?? { n: 0, ms: 0 };
        k.n++;
        k.ms += r.ms;
        byKind.set(key, k);
      }
      console.log(`requests during the replay: ${seen.length}, first at ${seen[0]?.at.toFixed(0)} ms, last at ${seen.at(-1)?.at.toFixed(0)} ms`);
      for (const [key, k] of byKind) console.log(`  ${String(k.n).padStart(4)} × ${key}: ${(k.ms / k.n).toFixed(1)} ms each`);
      // BENCH_PROFILE_TIMELINE=1: every request of the replay, when it started and how long it took.
      if (process.env.BENCH_PROFILE_TIMELINE === '1') {
        const lines = seen.map((r) => ({ at: r.at, text: `  at ${r.at.toFixed(0).padStart(6)} ms  ${r.ms.toFixed(1).padStart(6)} ms  ${r.method} ${r.url} ${r.status}` }));
        for (const mark of profiler.marks) {
          const [, ms, ...what] = mark.split(' ');
          lines.push({ at: Number(ms) - t0, text: `  at ${(Number(ms) - t0).toFixed(0).padStart(6)} ms  WORKER ${what.join(' ')}` });
        }
        lines.sort((a, b) => a.at - b.at);
        for (const l of lines) console.log(l.text);
      }
      console.log(`${mode} replay ${(replayMs / 1000).toFixed(2)} s`);
      if (process.env.BENCH_PROFILE !== '0') {
        report(`${mode} replay ${UPDATES} updates + ${UPLOADS} × 1 MiB (${(replayMs / 1000).toFixed(2)} s)`, await profiler.stop());
        report(`${mode} replay: the page's main thread`, [profiler.page!]);
      }
    }
    await context.close();
    await app.child.stop();
  }
  await stopAll();
  // The sync world's browser and servers are stopped: nothing more to wait for.
  process.exit(0);
}

main().catch(async (error) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
