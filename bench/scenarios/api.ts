// 1. The /v1 core behind npm start's node:http front vs a bare node:http server (the floor) and a
//    no-op Next.js route handler (the reference). wrk -t1 -c16, keep-alive, each server in its
//    own process so its CPU is separate from wrk's.
import fs from 'node:fs';
import path from 'node:path';
import type { FigureInput } from '../lib/figures';
import { BENCH, freePort, readyInfo, ROOT, startChild, startTsChild, tempDir, type Child } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { BENCH_RATE_LIMITS, BENCH_TOKENS, createSchema, PARLEY_TOKENS, seedConversations } from '../lib/seed';
import { median, round } from '../lib/stats';
import { PUT_ALTERNATING_LUA, runWrk, wrkScript, type WrkResult } from '../lib/wrk';

const SECONDS = Number(process.env.BENCH_WRK_SECONDS || 5);
const NOOP_DIR = path.join(BENCH, 'next-noop');
const NEXT_BIN = path.join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');

async function bodySize(url: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(url, init);
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${body}`);
  return body.length;
}

function ensureNoopBuild(log: (m: string) => void) {
  if (fs.existsSync(path.join(NOOP_DIR, '.next', 'BUILD_ID'))) return;
  log('building bench/next-noop (cached in bench/next-noop/.next)…');
  return new Promise<void>((resolve, reject) => {
    import('node:child_process').then(({ execFile }) =>
      execFile(process.execPath, [NEXT_BIN, 'build', NOOP_DIR], { cwd: ROOT, env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' }, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
        error ? reject(new Error(`next build bench/next-noop failed:\n${stdout}${stderr}`)) : resolve(),
      ),
    );
  });
}

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
      const floorOne = await startTsChild(floorTs, ['json', String(oneSize)], { name: 'floor (one)' });
      const floorPut = await startTsChild(floorTs, ['json', String(putSize)], { name: 'floor (update)' });
      // The list's floor reads the same rows from the same SQLite file before answering.
      const floorList = await startTsChild(floorTs, ['list', dataDir, 'alice'], { name: 'floor (list)' });
      children.push(floorOne, floorPut, floorList);
      const floorUrl = (c: Child & { match: RegExpMatchArray }, p: string) => `http://127.0.0.1:${readyInfo<{ port: number }>(c).port}${p}`;

      const noopPort = await freePort();
      const noop = await startChild(process.execPath, [NEXT_BIN, 'start', NOOP_DIR, '-p', String(noopPort), '-H', '127.0.0.1'], {
        name: 'next start bench/next-noop',
        env: { NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
        ready: /Ready in|✓ Ready/,
      });
      children.push(noop);
      const noopUrl = `http://127.0.0.1:${noopPort}/noop`;
      await bodySize(noopUrl);

      const put = wrkScript('put.lua', PUT_ALTERNATING_LUA);
      const one = `/v1/conversations/${id}`;
      const cases: Record<string, { url: string; script?: string; headers?: Record<string, string> }> = {
        floorOne: { url: floorUrl(floorOne, one), headers: auth },
        retrieve: { url: urls.retrieve, headers: auth },
        floorPut: { url: floorUrl(floorPut, one), headers: auth, script: put },
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
      const endpoint = (label: string, name: string, floor: string, target: number) => {
        out.push({ name: `${label}: throughput`, value: round(rps(name), 0), unit: 'req/s' });
        out.push({ name: `${label}: floor (bare node:http, ${floor === 'floorList' ? 'same rows read from SQLite' : 'same body size'})`, value: round(rps(floor), 0), unit: 'req/s' });
        out.push({ name: `${label}: vs floor`, value: round(ratio(name, floor), 3), unit: '×', target: { op: '>=', value: target } });
        out.push({ name: `${label}: latency p50`, value: round(lat(name, 'p50Ms'), 3), unit: 'ms' });
        out.push({ name: `${label}: latency p99`, value: round(lat(name, 'p99Ms'), 3), unit: 'ms' });
      };
      endpoint('GET /v1/conversations/:id', 'retrieve', 'floorOne', 0.5);
      endpoint('PUT /v1/conversations/:id', 'update', 'floorPut', 0.3);
      endpoint('GET /v1/conversations?limit=100', 'list', 'floorList', 0.15);
      out.push({ name: 'GET /v1/conversations?limit=100: floor body (rows as SQLite returns them)', value: await bodySize(floorUrl(floorList, '/'), { headers: auth }), unit: 'B' });
      out.push({ name: 'no-op Next.js route handler (next start)', value: round(rps('nextNoop'), 0), unit: 'req/s' });
      out.push({ name: 'no-op Next route: latency p50', value: round(lat('nextNoop', 'p50Ms'), 3), unit: 'ms' });
      out.push({ name: 'retrieve vs no-op Next route', value: round(ratio('retrieve', 'nextNoop'), 2), unit: '×', target: { op: '>=', value: 10 } });
      return out;
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  },
};
