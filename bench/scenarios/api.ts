// 1. The /v1 core behind npm start's node:http front vs a bare node:http server doing the same
//    storage and serialisation work (the floor: the same row read, the same row written, the same
//    101 rows read and mapped, from the same SQLite file — bench/lib/servers/floor.ts), a bare
//    node:http server answering a constant body of the same size (HTTP alone, a reference), and a
//    no-op Next.js route handler (the reference). wrk -t1 -c16, keep-alive, each server in its own
//    process so its CPU is separate from wrk's.
import path from 'node:path';
import type { FigureInput } from '../lib/figures';
import { ensureNoopBuild, startNoop } from '../lib/next-noop';
import { BENCH, readyInfo, startTsChild, tempDir, type Child } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { BENCH_RATE_LIMITS, BENCH_TOKENS, createSchema, PARLEY_TOKENS, seedConversations } from '../lib/seed';
import { median, round } from '../lib/stats';
import { PUT_ALTERNATING_LUA, runWrk, wrkScript, type WrkResult } from '../lib/wrk';

const SECONDS = Number(process.env.BENCH_WRK_SECONDS || 5);

async function body(url: string, init: RequestInit = {}): Promise<Buffer> {
  const res = await fetch(url, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${bytes}`);
  return bytes;
}
const bodySize = async (url: string, init: RequestInit = {}) => (await body(url, init)).length;

export const api: Scenario = {
  name: 'api',
  title: 'API vs the physical floor (wrk -t1 -c16 keep-alive)',
  async run({ runs, log }) {
    await ensureNoopBuild(log);
    const dataDir = tempDir('api');
    await createSchema(dataDir);
    const ids = seedConversations(dataDir, { alice: 1000, bob: 1000 }).alice;
    const id = ids[500]!;
    const children: Child[] = [];
    try {
      const core = await startTsChild(path.join(BENCH, 'lib/servers/core.ts'), [], { name: 'core server', env: { DATA_DIR: dataDir, PARLEY_TOKENS, ...BENCH_RATE_LIMITS } });
      children.push(core);
      const base = `http://127.0.0.1:${readyInfo<{ port: number }>(core).port}`;
      const auth = { Authorization: `Bearer ${BENCH_TOKENS.alice}` };
      const urls = { retrieve: `${base}/v1/conversations/${id}`, list: `${base}/v1/conversations?limit=100` };
      const oneSize = await bodySize(urls.retrieve, { headers: auth });
      const putSize = await bodySize(urls.retrieve, { method: 'PUT', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{"is_pinned":true,"is_muted":false}' });
      const listSize = await bodySize(urls.list, { headers: auth });
      log(`response bodies: retrieve ${oneSize} B, update ${putSize} B, list(100) ${listSize} B`);

      const floorTs = path.join(BENCH, 'lib/servers/floor.ts');
      // Floors doing the service's storage work on the same SQLite file (the same row, the same
      // write, the same 101 rows), and constant bodies of the same sizes (HTTP alone).
      const floorOne = await startTsChild(floorTs, ['one', dataDir, 'alice'], { name: 'floor (one row)' });
      const floorPut = await startTsChild(floorTs, ['put', dataDir, 'alice'], { name: 'floor (update)' });
      const floorList = await startTsChild(floorTs, ['list', dataDir, 'alice'], { name: 'floor (list)' });
      const httpOne = await startTsChild(floorTs, ['json', String(oneSize)], { name: 'HTTP only (one)' });
      const httpPut = await startTsChild(floorTs, ['json', String(putSize)], { name: 'HTTP only (update)' });
      children.push(floorOne, floorPut, floorList, httpOne, httpPut);
      const floorUrl = (c: Child & { match: RegExpMatchArray }, p: string) => `http://127.0.0.1:${readyInfo<{ port: number }>(c).port}${p}`;
      // The floors must answer what the service answers (same bytes, or the ratio compares
      // different work). Order of keys and values: the same mapping.
      const one = `/v1/conversations/${id}`;
      const same = async (label: string, real: Buffer, floor: Buffer) => {
        if (!real.equals(floor)) throw new Error(`${label}: the floor's body differs from the service's:\n${floor.toString().slice(0, 300)}\n${real.toString().slice(0, 300)}`);
      };
      await same('retrieve', await body(urls.retrieve, { headers: auth }), await body(floorUrl(floorOne, one)));
      await same('list', await body(urls.list, { headers: auth }), await body(floorUrl(floorList, '/v1/conversations?limit=100')));
      const putInit = (v: boolean) => ({ method: 'PUT', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ is_pinned: v, is_muted: !v }) });
      await same('update', await body(urls.retrieve, putInit(false)), await body(floorUrl(floorPut, one), putInit(false)));

      const noop = await startNoop();
      children.push(noop.child);
      const noopUrl = `${noop.baseUrl}/noop`;
      await bodySize(noopUrl);

      const put = wrkScript('put.lua', PUT_ALTERNATING_LUA);
      const cases: Record<string, { url: string; script?: string; headers?: Record<string, string> }> = {
        floorOne: { url: floorUrl(floorOne, one), headers: auth },
        retrieve: { url: urls.retrieve, headers: auth },
        httpOne: { url: floorUrl(httpOne, one), headers: auth },
        floorPut: { url: floorUrl(floorPut, one), headers: auth, script: put },
        httpPut: { url: floorUrl(httpPut, one), headers: auth, script: put },
        update: { url: urls.retrieve, headers: auth, script: put },
        floorList: { url: floorUrl(floorList, '/v1/conversations?limit=100'), headers: auth },
        list: { url: urls.list, headers: auth },
        nextNoop: { url: noopUrl },
      };
      // Warm-up (JIT, SQLite page cache), not counted.
      for (const c of Object.values(cases)) await runWrk(c.url, { ...c, seconds: 1 });
      const results: Record<string, WrkResult[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
      for (let r = 0; r < runs; r++) {
        for (const [name, c] of Object.entries(cases)) {
          const result = await runWrk(c.url, { ...c, seconds: SECONDS });
          results[name]!.push(result);
          log(`run ${r + 1}/${runs} ${name}: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`);
        }
      }
      const rps = (name: string) => median(results[name]!.map((x) => x.rps));
      const ratio = (a: string, b: string) => median(results[a]!.map((x, i) => x.rps / results[b]![i]!.rps));
      const lat = (name: string, which: 'p50Ms' | 'p99Ms') => median(results[name]!.map((x) => x[which]));
      const out: FigureInput[] = [];
      const floorWork: Record<string, string> = {
        floorOne: 'the same row read from SQLite, mapped',
        floorPut: 'the same UPDATE … RETURNING, mapped',
        floorList: 'the same 101 rows read from SQLite, 100 mapped',
      };
      const endpoint = (label: string, name: string, floor: string, target: number, http?: string) => {
        out.push({ name: `${label}: throughput`, value: round(rps(name), 0), unit: 'req/s' });
        out.push({ name: `${label}: floor (bare node:http, ${floorWork[floor]})`, value: round(rps(floor), 0), unit: 'req/s' });
        out.push({ name: `${label}: vs floor`, value: round(ratio(name, floor), 3), unit: '×', target: { op: '>=', value: target } });
        if (http) {
          out.push({ name: `${label}: bare node:http, constant body of the same size (HTTP only)`, value: round(rps(http), 0), unit: 'req/s' });
          out.push({ name: `${label}: vs HTTP only`, value: round(ratio(name, http), 3), unit: '×' });
        }
        out.push({ name: `${label}: latency p50`, value: round(lat(name, 'p50Ms'), 3), unit: 'ms' });
        out.push({ name: `${label}: latency p99`, value: round(lat(name, 'p99Ms'), 3), unit: 'ms' });
      };
      endpoint('GET /v1/conversations/:id', 'retrieve', 'floorOne', 0.5, 'httpOne');
      endpoint('PUT /v1/conversations/:id', 'update', 'floorPut', 0.3, 'httpPut');
      endpoint('GET /v1/conversations?limit=100', 'list', 'floorList', 0.5);
      out.push({ name: 'no-op Next.js route handler (next start)', value: round(rps('nextNoop'), 0), unit: 'req/s' });
      out.push({ name: 'no-op Next route: latency p50', value: round(lat('nextNoop', 'p50Ms'), 3), unit: 'ms' });
      out.push({ name: 'retrieve vs no-op Next route', value: round(ratio('retrieve', 'nextNoop'), 2), unit: '×', target: { op: '>=', value: 10 } });
      return out;
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  },
};
