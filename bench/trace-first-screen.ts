// A diagnostic, not a benchmark: where the main thread's time goes in a cold load of the signed-in
// conversations screen with 1,000 conversations mirrored (dave), CPU slowed 4×, as the first-screen
// scenario loads it. Prints, in order, every stretch of main-thread work over 20 ms (no idle sample
// between) with its start, its length and what ran in it (inclusive time by function@chunk), and
// where first paint and the first rows fell. Run: `npx tsx bench/trace-first-screen.ts` (BENCH_TRACE_RUNS, 2;
// BENCH_TRACE_SELF=1 adds, for stretches over 100 ms, the functions their own time went to).
import { runDiagnostic } from './lib/diagnostic';
import { CPU_RATE } from './lib/first-screen';
import { sleep } from './lib/stats';

type Frame = { url: string; functionName: string; lineNumber: number; columnNumber: number };
type Profile = { startTime: number; nodes: { id: number; callFrame: Frame; children?: number[] }[]; samples: number[]; timeDeltas: number[] };

void runDiagnostic(async (w, context) => {
  for (let r = 0; r < Number(process.env.BENCH_TRACE_RUNS || 2); r++) {
    for (const p of context.pages()) await p.close();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.clearBrowserCache');
    await cdp.send('Storage.clearDataForOrigin', { origin: w.app.baseUrl, storageTypes: 'service_workers,cache_storage' });
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_RATE });
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
    await cdp.send('Profiler.start');
    await page.goto(`${w.app.baseUrl}/`, { waitUntil: 'commit' });
    await page.waitForFunction(() => (globalThis as any).__firstScreen?.rowsAt > 0, null, { timeout: 60_000 });
    await sleep(3_000);
    const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
    const s = await page.evaluate(() => {
      const f = (globalThis as any).__firstScreen;
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      return { rows: document.querySelectorAll('[role=row]').length, elements: document.querySelectorAll('*').length, fcp: f.fcp, rowsAt: f.rowsAt, domInteractive: nav.domInteractive, resources: (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((e) => `${e.name.split('/').pop()} ${e.startTime.toFixed(0)}→${e.responseEnd.toFixed(0)}`) };
    });
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    console.log(`\nrun ${r + 1}: ${s.rows} rows, ${s.elements} elements; FCP ${s.fcp?.toFixed(0)} ms, rows ${s.rowsAt.toFixed(0)} ms, domInteractive ${s.domInteractive.toFixed(0)} ms (page clock)`);
    console.log(`  resources: ${s.resources.join(', ')}`);
    const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const name = (id: number) => {
      const f = byNode.get(id)!.callFrame;
      return `${f.functionName || '(anon)'}@${f.url.split('/').pop()}:${f.lineNumber}`;
    };
    const idle = (id: number) => ['(idle)', '(program)'].includes(byNode.get(id)?.callFrame.functionName ?? '');
    type Stretch = { start: number; ms: number; incl: Map<string, number>; self: Map<string, number> };
    let t = 0;
    let cur = null as Stretch | null;
    const stretches: Stretch[] = [];
    profile.samples.forEach((id, i) => {
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      t += dt;
      if (idle(id)) {
        if (cur) stretches.push(cur);
        cur = null;
        return;
      }
      cur ??= { start: t, ms: 0, incl: new Map(), self: new Map() };
      cur.ms += dt;
      cur.self.set(name(id), (cur.self.get(name(id)) ?? 0) + dt);
      const seen = new Set<string>();
      for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
        const k = name(n);
        if (k.startsWith('(root)')) continue;
        if (!seen.has(k)) cur.incl.set(k, (cur.incl.get(k) ?? 0) + dt);
        seen.add(k);
      }
    });
    for (const st of stretches.filter((x) => x.ms > 20)) {
      const top = [...st.incl].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, ms]) => `${k} ${ms.toFixed(0)}`).join(' | ');
      console.log(`  +${st.start.toFixed(0)} ms (profile clock): ${st.ms.toFixed(0)} ms: ${top}`);
      // Where a long stretch spends its own time (BENCH_TRACE_SELF=1): the work itself, not its callers.
      if (process.env.BENCH_TRACE_SELF === '1' && st.ms > 100) console.log(`    self: ${[...st.self].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, ms]) => `${k} ${ms.toFixed(0)}`).join(' | ')}`);
    }
    await page.close();
  }
});
