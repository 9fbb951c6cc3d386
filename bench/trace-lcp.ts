// A diagnostic, not a benchmark: which element is the largest contentful paint of the signed-in
// conversations screen (dave, 1,000 mirrored), and when, on a phone's and a desktop's viewport —
// every LCP candidate the browser reported, in order. Lighthouse's simulated LCP follows the
// observed one: a candidate painted only after the scripts ran makes it wait for all of them.
// Run: `npx tsx bench/trace-lcp.ts`.
import { runDiagnostic } from './lib/diagnostic';
import { sleep } from './lib/stats';

void runDiagnostic(async (w, context) => {
  await context.addInitScript(() => {
    (globalThis as any).__lcp = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries() as any[]) (globalThis as any).__lcp.push({ t: Math.round(e.startTime), size: e.size, el: e.element ? `${e.element.tagName}.${e.element.className} "${(e.element.textContent || '').slice(0, 40)}" ${Math.round(e.element.getBoundingClientRect().width)}x${Math.round(e.element.getBoundingClientRect().height)}` : null });
    }).observe({ type: 'largest-contentful-paint', buffered: true });
  });
  for (const vp of [{ width: 412, height: 823 }, { width: 1280, height: 800 }]) {
    const page = await context.newPage();
    await page.setViewportSize(vp);
    await page.goto(`${w.app.baseUrl}/`);
    await page.waitForSelector('[role=row][aria-rowindex]');
    await sleep(2000);
    console.log(vp.width, JSON.stringify(await page.evaluate(() => (globalThis as any).__lcp), null, 1));
    await page.close();
  }
});
