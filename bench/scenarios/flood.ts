// 11. Flood: one user (alice; carol, … in later runs) floods writes (16 keep-alive connections
//     from a process of their own, POST /v1/conversations as fast as the answers come, ignoring
//     Retry-After) and holds open as many live streams as the server lets it; meanwhile another
//     user (bob) makes simple GETs (GET /v1/conversations/:id, one at a time, one every 12 ms:
//     within his own limit). Figure: bob's p95 during the flood over bob's p95 of the same
//     requests with the server quiet, in the same run (target: within 2×). The same flood against
//     a server with the rate limits off (RATE_LIMIT_PER_SECOND=0) is reported for comparison (one
//     run). The server: the /v1 core behind npm start's node:http front
//     (bench/lib/servers/core.ts), SQLite, the default limits (README, Configuration).
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FigureInput } from '../lib/figures';
import { BENCH, readyInfo, ROOT, startTsChild, tempDir, type Child } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { BENCH_TOKENS, createSchema, PARLEY_TOKENS, seedConversations } from '../lib/seed';
import { median, percentile, round, sleep } from '../lib/stats';

/**
 * How long bob measures, quiet and during the flood (which starts half a second before): long
 * enough for both phases of a flood, its reserve being spent (RATE_LIMIT_BURST at up to
 * RATE_LIMIT_PEAK_PER_SECOND: 2,000 at 500/s, about 5 s) and then the steady share.
 */
const SECONDS = Number(process.env.BENCH_FLOOD_SECONDS || 15);
/** The flood's first seconds, reported apart: the reserve being spent. */
const RESERVE_SECONDS = 5;
/** More than the server allows (MAX_STREAMS_PER_USER, default 10): the rest are refused. */
const STREAMS_TRIED = Number(process.env.BENCH_FLOOD_STREAMS ?? 20);
const FLOOD_CONNECTIONS = 16;
/** Bob's pace: ~80 requests a second, within his own limit (RATE_LIMIT_PER_SECOND, default 100). */
const GET_EVERY_MS = 12;

interface FloodResult {
  requests: number;
  rps: number;
  /** Answers other than 2xx (here: 429 rate_limited). */
  refused: number;
}

const THIS_FILE = fileURLToPath(import.meta.url);

/** The flooder, in a process of its own (its CPU is not the server's nor bob's): see the end of this file. */
function runFlood(url: string, token: string, seconds: number): Promise<FloodResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', THIS_FILE, '--flooder', url, token, String(seconds)], { cwd: ROOT, timeout: (seconds + 60) * 1000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`flooder failed: ${error.message}\n${stderr}`));
      const line = stdout.split('\n').find((l) => l.startsWith('FLOOD '));
      if (!line) return reject(new Error(`flooder said nothing:\n${stdout}${stderr}`));
      resolve(JSON.parse(line.slice(6)) as FloodResult);
    });
  });
}

/** FLOOD_CONNECTIONS keep-alive loops, each POSTing a new conversation as soon as the last answer came. */
async function flooder(url: string, token: string, seconds: number): Promise<FloodResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: FLOOD_CONNECTIONS });
  const prefix = Math.random().toString(36).slice(2, 10);
  let n = 0;
  let requests = 0;
  let refused = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: FLOOD_CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const body = JSON.stringify({ contact_id: `flood-${prefix}-${++n}` });
        const status = await new Promise<number>((resolve) => {
          const req = http.request(url, { method: 'POST', agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', () => resolve(0));
          req.end(body);
        });
        requests++;
        if (status < 200 || status >= 300) refused++;
      }
    }),
  );
  agent.destroy();
  return { requests, rps: requests / ((performance.now() - started) / 1000), refused };
}

/** Bob's GETs, one at a time, one every GET_EVERY_MS, for `seconds`: each one's latency (ms), and when it was sent (ms from the start). */
async function paced(url: string, token: string, seconds: number): Promise<Array<{ at: number; ms: number }>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: Array<{ at: number; ms: number }> = [];
  const t0 = performance.now();
  const end = performance.now() + seconds * 1000;
  try {
    while (performance.now() < end) {
      const started = performance.now();
      const status = await new Promise<number>((resolve, reject) => {
        http
          .get(url, { agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      });
      const ms = performance.now() - started;
      if (status !== 200) throw new Error(`bob's GET answered ${status}`);
      latencies.push({ at: started - t0, ms });
      const wait = GET_EVERY_MS - ms;
      if (wait > 0) await sleep(wait);
    }
  } finally {
    agent.destroy();
  }
  return latencies;
}

/** Opens `count` live streams for the token; the open ones are held (and read) until close(). */
async function openStreams(base: string, token: string, count: number) {
  const held: http.ClientRequest[] = [];
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.get(`${base}/v1/events/stream`, { agent: false, headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode === 200) {
          held.push(req);
          res.resume(); // read what it sends, as a client would
          res.on('error', () => {});
        } else res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (error) => (held.includes(req) ? undefined : reject(error)));
    });
    statuses.push(status);
  }
  return {
    open: statuses.filter((s) => s === 200).length,
    refused: statuses.filter((s) => s === 429).length,
    close: () => held.forEach((req) => req.destroy()),
  };
}

async function startCore(dataDir: string, env: Record<string, string> = {}): Promise<{ child: Child; base: string }> {
  const child = await startTsChild(path.join(BENCH, 'lib/servers/core.ts'), [], { name: 'core server', env: { DATA_DIR: dataDir, PARLEY_TOKENS, ...env } });
  return { child, base: `http://127.0.0.1:${readyInfo<{ port: number }>(child).port}` };
}

interface Round {
  quietP95: number;
  floodP95: number;
  /** Bob's p95 in the flood's first second, while alice spends her reserve (RATE_LIMIT_BURST). */
  reserveP95: number;
  /** After the reserve: the steady share only. */
  steadyP95: number;
  ratio: number;
  flood: FloodResult;
  streams: { open: number; refused: number };
}

/** Who floods, round by round: a user whose bucket is full (a reserve refills only after RATE_LIMIT_BURST_SECONDS). */
const FLOODERS = [BENCH_TOKENS.alice, BENCH_TOKENS.carol, BENCH_TOKENS.grow1k, BENCH_TOKENS.grow50k];

async function oneRound(base: string, bobUrl: string, flooderToken: string): Promise<Round> {
  const quiet = await paced(bobUrl, BENCH_TOKENS.bob, SECONDS);
  const streams = await openStreams(base, flooderToken, STREAMS_TRIED);
  try {
    const flooding = runFlood(`${base}/v1/conversations`, flooderToken, SECONDS + 1);
    await sleep(500); // the flooder's process started and flooding
    const during = await paced(bobUrl, BENCH_TOKENS.bob, SECONDS);
    const second = (n: number) => during.filter((x) => Math.floor(x.at / 1000) === n).map((x) => x.ms);
    if (process.env.BENCH_FLOOD_DEBUG) {
      for (let n = 0; n < SECONDS; n++) console.log(`  second ${n}: p50 ${percentile(second(n), 50).toFixed(2)} p95 ${percentile(second(n), 95).toFixed(2)} (${second(n).length})`);
    }
    const result = await flooding;
    const ms = (list: Array<{ ms: number }>) => list.map((x) => x.ms);
    const quietP95 = percentile(ms(quiet), 95);
    const floodP95 = percentile(ms(during), 95);
    const reserveP95 = percentile(ms(during.filter((x) => x.at < RESERVE_SECONDS * 1000)), 95);
    const steadyP95 = percentile(ms(during.filter((x) => x.at >= RESERVE_SECONDS * 1000)), 95);
    return { quietP95, floodP95, reserveP95, steadyP95, ratio: floodP95 / quietP95, flood: result, streams };
  } finally {
    streams.close();
  }
}

export const flood: Scenario = {
  name: 'flood',
  title: `Flood: another user's GET p95 while one user floods writes (${FLOOD_CONNECTIONS} connections) and holds its live streams open, vs quiet`,
  async run({ runs, log }) {
    const dataDir = tempDir('flood');
    await createSchema(dataDir);
    const bobIds = seedConversations(dataDir, { alice: 1000, bob: 1000 }).bob;
    const children: Child[] = [];
    try {
      const limited = await startCore(dataDir);
      children.push(limited.child);
      const bobUrl = (base: string) => `${base}/v1/conversations/${bobIds[500]}`;
      await paced(bobUrl(limited.base), BENCH_TOKENS.bob, 1); // warm-up (JIT, SQLite page cache)
      const rounds: Round[] = [];
      for (let r = 0; r < runs; r++) {
        const round = await oneRound(limited.base, bobUrl(limited.base), FLOODERS[r % FLOODERS.length]!);
        rounds.push(round);
        log(
          `run ${r + 1}/${runs}: bob p95 quiet ${round.quietP95.toFixed(3)} ms, flood ${round.floodP95.toFixed(3)} ms (${round.ratio.toFixed(2)}×; first ${RESERVE_SECONDS} s ${round.reserveP95.toFixed(3)} ms, after ${round.steadyP95.toFixed(3)} ms); ` +
            `flood ${Math.round(round.flood.rps)} req/s, ${round.flood.requests - round.flood.refused} served, ${round.flood.refused} refused; streams open ${round.streams.open}, refused ${round.streams.refused}`,
        );
      }
      await limited.child.stop();

      // The same flood with the limits off, for comparison (a copy of nothing: a fresh DATA_DIR).
      const offDir = tempDir('flood-off');
      await createSchema(offDir);
      const offIds = seedConversations(offDir, { alice: 1000, bob: 1000 }).bob;
      const off = await startCore(offDir, { RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_ANONYMOUS_PER_SECOND: '0' });
      children.push(off.child);
      const offUrl = `${off.base}/v1/conversations/${offIds[500]}`;
      await paced(offUrl, BENCH_TOKENS.bob, 1);
      const unlimited = await oneRound(off.base, offUrl, BENCH_TOKENS.alice);
      log(`limits off: bob p95 quiet ${unlimited.quietP95.toFixed(3)} ms, flood ${unlimited.floodP95.toFixed(3)} ms (${unlimited.ratio.toFixed(2)}×); flood ${Math.round(unlimited.flood.rps)} req/s served`);

      const med = (f: (r: Round) => number) => median(rounds.map(f));
      const out: FigureInput[] = [
        { name: "other user's GET p95, server quiet", value: round(med((r) => r.quietP95), 3), unit: 'ms' },
        { name: "other user's GET p95, during the flood", value: round(med((r) => r.floodP95), 3), unit: 'ms' },
        { name: "other user's GET p95: flood vs quiet", value: round(med((r) => r.ratio), 2), unit: '×', target: { op: '<=', value: 2 } },
        { name: `other user's GET p95, flood's first ${RESERVE_SECONDS} s (its reserve being spent)`, value: round(med((r) => r.reserveP95), 3), unit: 'ms' },
        { name: `other user's GET p95, flood after ${RESERVE_SECONDS} s (steady share only)`, value: round(med((r) => r.steadyP95), 3), unit: 'ms' },
        { name: `other user's GET p95: flood after ${RESERVE_SECONDS} s vs quiet`, value: round(med((r) => r.steadyP95 / r.quietP95), 2), unit: '×' },
        { name: 'flood: requests answered', value: round(med((r) => r.flood.rps), 0), unit: 'req/s' },
        { name: 'flood: writes served (2xx)', value: round(med((r) => (r.flood.requests - r.flood.refused) / (SECONDS + 1)), 0), unit: 'req/s' },
        { name: 'flood: live streams held open (of 20 tried)', value: med((r) => r.streams.open), unit: '' },
        { name: "limits off (1 run): other user's GET p95, flood vs quiet", value: round(unlimited.ratio, 2), unit: '×' },
        { name: 'limits off (1 run): flood writes served', value: round(unlimited.flood.rps, 0), unit: 'req/s' },
      ];
      return out;
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  },
};

if (process.argv[2] === '--flooder' && process.argv[1] && path.resolve(process.argv[1]) === THIS_FILE) {
  const [url, token, seconds] = process.argv.slice(3) as [string, string, string];
  const result = await flooder(url, token, Number(seconds));
  console.log(`FLOOD ${JSON.stringify(result)}`);
  process.exit(0);
}
