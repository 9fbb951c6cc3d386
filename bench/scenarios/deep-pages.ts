// 2. Deep pages: 100,000 conversations for one user (and 100,000 for another, interleaved), the
//    last page reached by starting_after vs the first page. Keyset pagination: should cost the same.
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BENCH, readyInfo, startTsChild, tempDir } from '../lib/proc';
import type { Scenario } from '../lib/scenario';
import { BENCH_RATE_LIMITS, BENCH_TOKENS, createSchema, PARLEY_TOKENS, seedConversations } from '../lib/seed';
import { median, percentile, round } from '../lib/stats';

const PER_USER = 100_000;
const LIMIT = 100;
const SAMPLES = Number(process.env.BENCH_DEEP_SAMPLES || 300);

function timedGet(agent: http.Agent, port: number, pathAndQuery: string): Promise<{ ms: number; body: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get({ host: '127.0.0.1', port, path: pathAndQuery, agent, headers: { Authorization: `Bearer ${BENCH_TOKENS.alice}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        const ms = performance.now() - t0;
        if (res.statusCode !== 200) reject(new Error(`GET ${pathAndQuery}: ${res.statusCode} ${body.slice(0, 200)}`));
        else resolve({ ms, body });
      });
    });
    req.on('error', reject);
  });
}

export const deepPages: Scenario = {
  name: 'deep-pages',
  title: `Deep pages: ${PER_USER.toLocaleString('en-US')} conversations per user, last page vs first (limit=${LIMIT})`,
  async run({ log }) {
    const dataDir = tempDir('deep');
    await createSchema(dataDir);
    const t0 = Date.now();
    seedConversations(dataDir, { alice: PER_USER, bob: PER_USER });
    log(`seeded ${2 * PER_USER} conversations through SQLite in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // The cursor of the last page: the item just before the last LIMIT items in list order
    // (newest first by seq), i.e. the page a client reaches by walking starting_after to the end.
    const db = new Database(path.join(dataDir, 'parley.sqlite'), { readonly: true });
    const cursor = (db.prepare(`select id from conversations where user_id = 'alice' order by seq desc limit 1 offset ?`).get(PER_USER - LIMIT - 1) as { id: string }).id;
    db.close();
    const core = await startTsChild(path.join(BENCH, 'lib/servers/core.ts'), [], { name: 'core server', env: { DATA_DIR: dataDir, PARLEY_TOKENS, ...BENCH_RATE_LIMITS } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const port = readyInfo<{ port: number }>(core).port;
      const first = `/v1/conversations?limit=${LIMIT}`;
      const last = `/v1/conversations?limit=${LIMIT}&starting_after=${cursor}`;
      const check = JSON.parse((await timedGet(agent, port, last)).body);
      if (check.data.length !== LIMIT || check.has_more !== false) throw new Error(`last page: ${check.data.length} items, has_more ${check.has_more}`);
      for (let i = 0; i < 50; i++) {
        await timedGet(agent, port, first);
        await timedGet(agent, port, last);
      }
      const firstMs: number[] = [];
      const lastMs: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        // Alternate so drift (GC, page cache) hits both alike.
        firstMs.push((await timedGet(agent, port, first)).ms);
        lastMs.push((await timedGet(agent, port, last)).ms);
      }
      const f = median(firstMs);
      const l = median(lastMs);
      log(`first page median ${f.toFixed(3)} ms, last page median ${l.toFixed(3)} ms (${SAMPLES} each)`);
      return [
        { name: 'first page latency (median)', value: round(f, 3), unit: 'ms' },
        { name: `last page latency (median, ${SAMPLES} requests)`, value: round(l, 3), unit: 'ms' },
        { name: 'last page p99', value: round(percentile(lastMs, 99), 3), unit: 'ms' },
        { name: 'last page vs first page', value: round(l / f, 3), unit: '×', target: { op: '<=', value: 1.2 } },
      ];
    } finally {
      agent.destroy();
      await core.stop();
    }
  },
};
