// A diagnostic, not a benchmark: what the main thread does during a cold, signed-in load of the
// conversations screen (carol: 60 conversations), with the CPU slowed 4× as Lighthouse's mobile
// preset assumes. Counts React commits (through the DevTools hook React calls when one is
// present), long tasks and their total blocking time (the part of each task over 50 ms), and the
// sampled self time per script, until the list is shown, the mirror is complete and 3 s have passed.
// Median of BENCH_PROFILE_RUNS (5). Run: `BENCH_SYNC_CONVERSATIONS=100 npx tsx bench/profile-first-screen.ts`
// (alice's seed is not used here; 100 keeps it short). BENCH_PROFILE_STRETCHES=1 prints what ran in
// the three longest stretches of work (functions by chunk:line:column, self and inclusive ms);
// BENCH_PROFILE_COMMITS=1 prints each React commit with how many components rendered in it.
// Timings include the profiler's overhead: compare runs of this script with each other only.
import { releaseAliceMirror, syncWorld } from './lib/mirror';
import { installExitHooks, stopAll } from './lib/proc';
import { BENCH_TOKENS } from './lib/seed';
import { median } from './lib/stats';

const RUNS = Number(process.env.BENCH_PROFILE_RUNS || 5);

async function main() {
  installExitHooks();
  await releaseAliceMirror();
  const w = await syncWorld((m) => console.log(m));
  const results: { commits: number; longTasks: number; blockingMs: number }[] = [];
  for (let r = 0; r < RUNS; r++) {
    const context = await w.browser.newContext({ baseURL: w.app.baseUrl, viewport: { width: 390, height: 844 } });
    // tsx compiles page callbacks with esbuild's keepNames: give pages its helper.
    await context.addInitScript('globalThis.__name = globalThis.__name || ((f) => f)');
    await context.addInitScript((t) => {
      localStorage.setItem('parley:token', t);
      const state = { commits: 0, tasks: [] as { start: number; duration: number }[], log: [] as string[] };
      Object.assign(globalThis, { __profile: state });
      // React (production too) reports every commit to a DevTools hook when one is installed.
      Object.assign(globalThis, {
        __REACT_DEVTOOLS_GLOBAL_HOOK__: {
          supportsFiber: true,
          renderers: new Map(),
          inject() {
            return 1;
          },
          onCommitFiberRoot(_id: number, root: any) {
            state.commits++;
            // Which components rendered in this commit (PerformedWork flag), by the names of
            // their props, since production names are minified.
            const rendered: string[] = [];
            // As React DevTools does: a subtree whose children were reused did not render.
            const walk = (f: any) => {
              for (let c = f; c; c = c.sibling) {
                const changed = !c.alternate || c.memoizedProps !== c.alternate.memoizedProps || c.memoizedState !== c.alternate.memoizedState;
                if ((c.tag === 0 || c.tag === 11 || c.tag === 15) && c.flags & 1 && changed) rendered.push(Object.keys(c.memoizedProps ?? {}).slice(0, 3).join('+') || '()');
                if (c.child && !(c.alternate && c.alternate.child === c.child)) walk(c.child);
              }
            };
            walk(root.current.child);
            state.log.push(`${performance.now().toFixed(0)}: ${rendered.length} [${[...new Set(rendered)].slice(0, 8).join(' ; ')}]`);
          },
          onCommitFiberUnmount() {},
          onPostCommitFiberRoot() {},
          checkDCE() {},
        },
      });
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) state.tasks.push({ start: e.startTime, duration: e.duration });
      }).observe({ type: 'longtask', buffered: true });
    }, BENCH_TOKENS.carol);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.start');
    await page.goto('/');
    await page.getByRole('heading', { name: 'Conversations' }).waitFor({ timeout: 60_000 });
    await page.getByTestId('sync-status').filter({ hasText: 'All synced' }).waitFor({ timeout: 120_000 });
    await page.waitForTimeout(3_000);
    const { profile } = (await cdp.send('Profiler.stop')) as { profile: { nodes: { id: number; callFrame: { url: string; functionName: string }; hitCount?: number }[]; samples: number[]; timeDeltas: number[] } };
    const state = (await page.evaluate(() => (globalThis as any).__profile)) as { commits: number; tasks: { start: number; duration: number }[]; log: string[] };
    // Self time per script (sampled), to tell React from Dexie from the app.
    const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
    const perUrl = new Map<string, number>();
    profile.samples.forEach((id, i) => {
      const url = byNode.get(id)?.callFrame.url.split('/').pop() || byNode.get(id)?.callFrame.functionName || '?';
      perUrl.set(url, (perUrl.get(url) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
    });
    // The longest stretches of work (no idle sample between): what ran in them, by function.
    if (process.env.BENCH_PROFILE_STRETCHES) {
      const parent = new Map<number, number>();
      for (const n of profile.nodes as { id: number; children?: number[] }[]) for (const c of n.children ?? []) parent.set(c, n.id);
      const isIdle = (id: number) => ['(idle)', '(program)'].includes(byNode.get(id)?.callFrame.functionName ?? '');
      const stretches: { from: number; to: number; ms: number }[] = [];
      let cur: { from: number; to: number; ms: number } | null = null;
      profile.samples.forEach((id, i) => {
        const dt = (profile.timeDeltas[i] ?? 0) / 1000;
        if (isIdle(id)) {
          if (cur) stretches.push(cur);
          cur = null;
        } else if (cur) {
          cur.to = i;
          cur.ms += dt;
        } else cur = { from: i, to: i, ms: dt };
      });
      for (const st of stretches.sort((a, b) => b.ms - a.ms).slice(0, 3)) {
        const self = new Map<string, number>();
        const inclusive = new Map<string, number>();
        for (let i = st.from; i <= st.to; i++) {
          const dt = (profile.timeDeltas[i] ?? 0) / 1000;
          const frame = (id: number) => {
            const n = byNode.get(id) as unknown as { callFrame: { url: string; functionName: string; lineNumber: number; columnNumber: number } };
            return `${n.callFrame.functionName || '(anon)'}@${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}:${n.callFrame.columnNumber}`;
          };
          self.set(frame(profile.samples[i]!), (self.get(frame(profile.samples[i]!)) ?? 0) + dt);
          const seen = new Set<string>();
          for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
            const f = frame(id);
            if (!seen.has(f)) inclusive.set(f, (inclusive.get(f) ?? 0) + dt);
            seen.add(f);
          }
        }
        const fmt = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([f, ms]) => `${f} ${ms.toFixed(0)}`).join(' | ');
        console.log(`  stretch ${st.ms.toFixed(0)} ms: self: ${fmt(self, 8)}`);
        console.log(`    inclusive: ${fmt(inclusive, 25)}`);
      }
    }
    const top = [...perUrl].filter(([u]) => !['(idle)', '(program)', '(garbage collector)'].includes(u)).sort((a, b) => b[1] - a[1]).slice(0, 6);
    const blockingMs = state.tasks.reduce((s, t) => s + Math.max(0, t.duration - 50), 0);
    results.push({ commits: state.commits, longTasks: state.tasks.length, blockingMs });
    console.log(`run ${r + 1}: ${state.commits} React commits, ${state.tasks.length} long tasks, blocking ${blockingMs.toFixed(0)} ms; self time: ${top.map(([u, ms]) => `${u} ${ms.toFixed(0)} ms`).join(', ')}`);
    if (process.env.BENCH_PROFILE_COMMITS) console.log(state.log.join('\n'));
    console.log(`  long tasks: ${state.tasks.map((t) => `${t.start.toFixed(0)}+${t.duration.toFixed(0)}`).join(' ')}`);
    await context.close();
  }
  console.log(`median: ${median(results.map((r) => r.commits))} commits, ${median(results.map((r) => r.longTasks))} long tasks, blocking ${median(results.map((r) => r.blockingMs)).toFixed(0)} ms`);
  await w.browser.close();
  await stopAll();
  process.exit(0);
}

void main();
