// Peak resident memory of another process, sampled from /proc/<pid>/status.
import fs from 'node:fs';

export function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = status.match(/^VmRSS:\s+(\d+) kB/m);
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb[1]) * 1024;
}

export function sampleRss(pid: number, everyMs = 10) {
  const baseline = rssBytes(pid);
  let peak = baseline;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      /* process gone */
    }
  }, everyMs);
  return {
    baseline,
    stop(): { baseline: number; peak: number; growth: number } {
      clearInterval(timer);
      try {
        peak = Math.max(peak, rssBytes(pid));
      } catch {
        /* gone */
      }
      return { baseline, peak, growth: peak - baseline };
    },
  };
}
