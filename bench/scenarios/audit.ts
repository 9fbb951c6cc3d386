// What the audit trail costs: the same /v1 core (bench/lib/servers/core.ts) with the trail on (the
// default) and off (AUDIT=off, which only the bench sets), each on its own copy of the same seed,
// measured by wrk -t1 -c16 keep-alive in alternation — on, off, on, off … — so that whatever else
// loads the machine falls on both alike. Every retrieve and list is a queued read record (written
// in batches of up to 500 rows, every 100 ms); the target: at most 10 % of retrieve throughput.
import path from 'node:path';
import type { FigureInput } from '../lib/figures';
import { BENCH, readyInfo, startTsChild, tempDir, type Child } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { BENCH_RATE_LIMITS, BENCH_TOKENS, createSchema, PARLEY_TOKENS, seedConversations } from '../lib/seed';
import { median, round } from '../lib/stats';
import { runWrk, type WrkResult } from '../lib/wrk';

const SECONDS = Number(process.env.BENCH_WRK_SECONDS || 5);

export const audit: Scenario = {
  name: 'audit',
  title: 'Audit trail on vs off (AUDIT=off): retrieve and list throughput, wrk -t1 -c16, alternating',
  async run({ runs, log }) {
    const children: Child[] = [];
    const auth = { Authorization: `Bearer ${BENCH_TOKENS.alice}` };
    try {
      const servers: Record<'on' | 'off', { retrieve: string; list: string }> = {} as never;
      for (const mode of ['on', 'off'] as const) {
        const dataDir = tempDir(`audit-${mode}`);
        await createSchema(dataDir);
        const id = seedConversations(dataDir, { alice: 1000, bob: 1000 }).alice[500]!;
        const core = await startTsChild(path.join(BENCH, 'lib/servers/core.ts'), [], {
          name: `core server (audit ${mode})`,
          env: { DATA_DIR: dataDir, PARLEY_TOKENS, ...BENCH_RATE_LIMITS, AUDIT: mode },
        });
        children.push(core);
        const base = `http://127.0.0.1:${readyInfo<{ port: number }>(core).port}`;
        servers[mode] = { retrieve: `${base}/v1/conversations/${id}`, list: `${base}/v1/conversations?limit=100` };
        const r = await fetch(servers[mode].retrieve, { headers: auth });
        if (!r.ok) throw new Error(`audit ${mode}: ${r.status} ${await r.text()}`);
      }
      const cases = ['retrieve', 'list'] as const;
      // Warm-up (JIT, SQLite page cache), not counted.
      for (const c of cases) for (const mode of ['on', 'off'] as const) await runWrk(servers[mode][c], { headers: auth, seconds: 1 });
      const results: Record<string, WrkResult[]> = {};
      for (let r = 0; r < runs; r++) {
        for (const c of cases) {
          // Alternate which goes first, so neither always follows the other's run.
          for (const mode of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
            const result = await runWrk(servers[mode][c], { headers: auth, seconds: SECONDS });
            (results[`${c}-${mode}`] ??= []).push(result);
            log(`run ${r + 1}/${runs} ${c} audit ${mode}: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`);
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
      }
      return out;
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  },
};
