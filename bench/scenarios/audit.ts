// What the audit trail costs: the same /v1 core (bench/lib/servers/core.ts) with the trail on (the
// default) and off (AUDIT=off, which only the bench sets), each on its own copy of the same seed,
// measured by wrk -t1 -c16 keep-alive in alternation — on, off, on, off … — so that whatever else
// loads the machine falls on both alike. Every retrieve and list is a queued read record (written
// by group commit, off the request thread, before its answer is sent); the target: at most 10 % of
// retrieve throughput. Throughput on a machine shared with other work moves by more than that from
// one run to the next, so each run also measures the CPU time of the server's main thread per
// request (bench/lib/thread-cpu.ts): its on/off ratio is the cost the trail puts on the thread
// that answers requests, whatever else the machine is doing.
import path from 'node:path';
import type { FigureInput } from '../lib/figures';
import { BENCH, readyInfo, startTsChild, tempDir, type Child } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { BENCH_RATE_LIMITS, BENCH_TOKENS, createSchema, PARLEY_TOKENS, seedConversations } from '../lib/seed';
import { median, round } from '../lib/stats';
import { mainThreadCpuMs } from '../lib/thread-cpu';
import { runWrk, type WrkResult } from '../lib/wrk';

const SECONDS = Number(process.env.BENCH_WRK_SECONDS || 5);

export const audit: Scenario = {
  name: 'audit',
  title: 'Audit trail on vs off (AUDIT=off): retrieve and list throughput, wrk -t1 -c16, alternating',
  async run({ runs, log }) {
    const children: Child[] = [];
    const auth = { Authorization: `Bearer ${BENCH_TOKENS.alice}` };
    try {
      const servers: Record<'on' | 'off', { retrieve: string; list: string; pid: number }> = {} as never;
      for (const mode of ['on', 'off'] as const) {
        const dataDir = tempDir(`audit-${mode}`);
        await createSchema(dataDir);
        const id = seedConversations(dataDir, { alice: 1000, bob: 1000 }).alice[500]!;
        const core = await startTsChild(path.join(BENCH, 'lib/servers/core.ts'), [], {
          name: `core server (audit ${mode})`,
          env: { DATA_DIR: dataDir, PARLEY_TOKENS, ...BENCH_RATE_LIMITS, AUDIT: mode },
        });
        children.push(core);
        const { port, pid } = readyInfo<{ port: number; pid: number }>(core);
        const base = `http://127.0.0.1:${port}`;
        servers[mode] = { retrieve: `${base}/v1/conversations/${id}`, list: `${base}/v1/conversations?limit=100`, pid };
        const r = await fetch(servers[mode].retrieve, { headers: auth });
        if (!r.ok) throw new Error(`audit ${mode}: ${r.status} ${await r.text()}`);
      }
      const cases = ['retrieve', 'list'] as const;
      // Warm-up (JIT, SQLite page cache), not counted.
      for (const c of cases) for (const mode of ['on', 'off'] as const) await runWrk(servers[mode][c], { headers: auth, seconds: 1 });
      const results: Record<string, WrkResult[]> = {};
      /** Main-thread CPU µs per answered request, by case and mode. */
      const cpu: Record<string, number[]> = {};
      for (let r = 0; r < runs; r++) {
        for (const c of cases) {
          // Alternate which goes first, so neither always follows the other's run.
          for (const mode of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
            const before = mainThreadCpuMs(servers[mode].pid);
            const result = await runWrk(servers[mode][c], { headers: auth, seconds: SECONDS });
            const perRequest = ((mainThreadCpuMs(servers[mode].pid) - before) * 1000) / Math.max(1, result.requests);
            (results[`${c}-${mode}`] ??= []).push(result);
            (cpu[`${c}-${mode}`] ??= []).push(perRequest);
            log(`run ${r + 1}/${runs} ${c} audit ${mode}: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, main thread ${perRequest.toFixed(1)} µs CPU/request`);
          }
        }
      }
      const rps = (name: string) => median(results[name]!.map((x) => x.rps));
      const ratio = (c: string) => median(results[`${c}-on`]!.map((x, i) => x.rps / results[`${c}-off`]![i]!.rps));
      const out: FigureInput[] = [];
      for (const [c, label] of [['retrieve', 'GET /v1/conversations/:id'], ['list', 'GET /v1/conversations?limit=100']] as const) {
        out.push({ name: `${label}: throughput, audit on`, value: round(rps(`${c}-on`), 0), unit: 'req/s' });
        out.push({ name: `${label}: throughput, audit off`, value: round(rps(`${c}-off`), 0), unit: 'req/s' });
        out.push({ name: `${label}: audit on vs off`, value: round(ratio(c), 3), unit: '×', ...(c === 'retrieve' ? { target: { op: '>=' as const, value: 0.9 } } : {}) });
        out.push({ name: `${label}: latency p99, audit on`, value: round(median(results[`${c}-on`]!.map((x) => x.p99Ms)), 3), unit: 'ms' });
        out.push({ name: `${label}: main-thread CPU per request, audit on`, value: round(median(cpu[`${c}-on`]!), 1), unit: 'µs' });
        out.push({ name: `${label}: main-thread CPU per request, audit off`, value: round(median(cpu[`${c}-off`]!), 1), unit: 'µs' });
        // off/on: the throughput a thread-bound server keeps with the trail on (1 = no cost).
        out.push({ name: `${label}: main-thread CPU, audit off vs on`, value: round(median(cpu[`${c}-off`]!) / median(cpu[`${c}-on`]!), 3), unit: '×' });
      }
      return out;
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  },
};
