// wrk (Debian's) as the load generator: one thread, 16 keep-alive connections.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './proc';

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function toMs(text: string): number {
  const m = text.match(/^([\d.]+)(us|ms|s|m)$/);
  if (!m) throw new Error(`wrk: unreadable latency ${text}`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

export function parseWrk(output: string): WrkResult {
  const rps = output.match(/Requests\/sec:\s+([\d.]+)/);
  const p50 = output.match(/^\s+50%\s+(\S+)/m);
  const p99 = output.match(/^\s+99%\s+(\S+)/m);
  const total = output.match(/(\d+) requests in/);
  if (!rps || !p50 || !p99 || !total) throw new Error(`wrk: unreadable output:\n${output}`);
  // BENCH_WRK_DEBUG=1: every run's whole output on stderr (what a figure was read from).
  if (process.env.BENCH_WRK_DEBUG) console.error(output);
  const non2xx = Number(output.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0);
  const socket = output.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { rps: Number(rps[1]), p50Ms: toMs(p50[1]!), p99Ms: toMs(p99[1]!), requests: Number(total[1]), errors: non2xx + socketErrors };
}

let scriptDir: string | null = null;
/** A Lua script file for wrk (kept in a temp dir for the run). */
export function wrkScript(name: string, lua: string): string {
  scriptDir ??= tempDir('wrk');
  const file = path.join(scriptDir, name);
  fs.writeFileSync(file, lua);
  return file;
}

export function runWrk(url: string, options: { seconds?: number; connections?: number; headers?: Record<string, string>; script?: string } = {}): Promise<WrkResult> {
  const args = ['-t1', `-c${options.connections ?? 16}`, `-d${options.seconds ?? 5}s`, '--latency', '--timeout', '10s'];
  for (const [k, v] of Object.entries(options.headers ?? {})) args.push('-H', `${k}: ${v}`);
  if (options.script) args.push('-s', options.script);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: ((options.seconds ?? 5) + 30) * 1000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`wrk failed: ${error.message}\n${stderr}`));
      try {
        const result = parseWrk(stdout);
        if (result.errors > 0) return reject(new Error(`wrk ${url}: ${result.errors} errors/non-2xx of ${result.requests}\n${stdout}`));
        // No answer at all is no figure: a server that stopped answering (its requests outlive the
        // run's --timeout, so wrk counts no error) printed 0 req/s as a result once (2026-11-28).
        if (result.requests === 0) return reject(new Error(`wrk ${url}: not one request answered in ${options.seconds ?? 5} s\n${stdout}`));
        resolve(result);
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** PUT with a JSON body whose value alternates, so every request really changes the row. */
export const PUT_ALTERNATING_LUA = `
wrk.method = "PUT"
wrk.headers["Content-Type"] = "application/json"
local n = 0
local bodies = { '{"is_pinned":true,"is_muted":false}', '{"is_pinned":false,"is_muted":true}' }
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, bodies[(n % 2) + 1])
end
`;
