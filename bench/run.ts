// npm run bench [-- scenario ...]: starts what each scenario needs on 127.0.0.1, runs it, prints
// one table (each target and whether it is met), writes bench/results/latest.json, and stops
// everything it started (also on failure or Ctrl-C).
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { figure, formatTable, type Figure } from './lib/figures';
import { disposeSyncWorld } from './lib/mirror';
import { BENCH, installExitHooks, stopAll } from './lib/proc';
import type { Scenario } from './lib/scenario';
import { api } from './scenarios/api';
import { app } from './scenarios/app';
import { audit } from './scenarios/audit';
import { deepPages } from './scenarios/deep-pages';
import { firstScreen } from './scenarios/first-screen';
import { flood } from './scenarios/flood';
import { initialSync } from './scenarios/initial-sync';
import { live } from './scenarios/live';
import { lock } from './scenarios/lock';
import { reconnect } from './scenarios/reconnect';
import { replay } from './scenarios/replay';
import { resumable } from './scenarios/resumable';
import { search } from './scenarios/search';
import { steadySync } from './scenarios/steady-sync';
import { syncGrowth } from './scenarios/sync-growth';
import { uploads, uploadsS3 } from './scenarios/uploads';

const ALL: Scenario[] = [api, audit, deepPages, uploads, uploadsS3, resumable, initialSync, steadySync, syncGrowth, replay, reconnect, app, firstScreen, flood, search, lock];
/** Parts of a scenario above, to be run alone by name (the whole run measures them in their scenario). */
const PARTS: Scenario[] = [live];
const RUNS = Number(process.env.BENCH_RUNS || 3);

function machine() {
  const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  let memory = `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`;
  try {
    memory = execSync('free -h', { encoding: 'utf8' }).split('\n')[1]!.trim().split(/\s+/)[1]!;
  } catch {
    /* keep os.totalmem */
  }
  let chromium = '';
  try {
    chromium = execSync('/usr/bin/chromium --version 2>/dev/null', { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    /* not installed */
  }
  let wrk = '';
  try {
    wrk = execSync('wrk -v 2>&1 || true', { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    /* none */
  }
  return { nproc: os.availableParallelism(), memory, cpu, node: process.version, platform: `${os.type()} ${os.release()}`, chromium, wrk };
}

async function main() {
  installExitHooks();
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const known = [...ALL, ...PARTS];
  const unknown = wanted.filter((w) => !known.some((s) => s.name === w));
  if (unknown.length) {
    console.error(`unknown scenario(s): ${unknown.join(', ')}; choose from: ${known.map((s) => s.name).join(' ')}`);
    process.exit(2);
  }
  const selected = wanted.length ? known.filter((s) => wanted.includes(s.name)) : ALL;
  const started = Date.now();
  const figures: Figure[] = [];
  const failures: { scenario: string; error: string }[] = [];
  const durations: Record<string, number> = {};
  for (const scenario of selected) {
    const t0 = Date.now();
    const log = (m: string) => console.log(`[bench ${scenario.name} ${((Date.now() - started) / 1000).toFixed(0)}s] ${m}`);
    log(scenario.title);
    try {
      for (const f of await scenario.run({ runs: RUNS, log })) figures.push(figure(scenario.name, f));
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      console.error(`[bench ${scenario.name}] FAILED: ${message}`);
      failures.push({ scenario: scenario.name, error: message.split('\n').slice(0, 6).join('\n') });
    }
    durations[scenario.name] = Math.round((Date.now() - t0) / 1000);
  }
  await disposeSyncWorld();
  await stopAll(); // anything a failed scenario left running
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`\nParley benchmarks — medians of ${RUNS} runs; ratios are against a floor measured in the same run\n`);
  console.log(formatTable(figures));
  const targets = figures.filter((f) => f.met !== undefined);
  console.log(`\n${targets.filter((f) => f.met).length}/${targets.length} targets met; ${failures.length} scenario(s) failed; ${seconds} s in all`);
  for (const f of failures) console.log(`FAILED ${f.scenario}: ${f.error.split('\n')[0]}`);

  const result = { date: new Date().toISOString(), runs: RUNS, scenarios: selected.map((s) => s.name), durationsSeconds: durations, totalSeconds: seconds, machine: machine(), figures, failures };
  const dir = path.join(BENCH, 'results');
  fs.mkdirSync(dir, { recursive: true });
  // A subset run does not overwrite the full figures: it goes next to them.
  const file = path.join(dir, wanted.length && wanted.length < ALL.length ? `partial-${wanted.join('-')}.json` : 'latest.json');
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  console.log(`figures written to ${path.relative(process.cwd(), file)}`);
  process.exitCode = failures.length ? 1 : 0;
}

main().catch(async (error) => {
  console.error(error);
  await disposeSyncWorld().catch(() => {});
  await stopAll();
  process.exit(1);
});
