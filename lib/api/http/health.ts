// GET /healthz: the process is alive and serving. GET /readyz: it can do its work — each
// dependency (the database, the blob store) answers a cheap call within a short time. Neither
// needs a token or tells anything about data; 503 names the dependency that failed, never how
// (that goes to the log), and a dependency that hangs is reported as such instead of hanging the probe.
import type { ApiReply, ApiRequest } from './exchange';
import type { Logger } from './log';

/** A cheap call to one dependency; rejects (or never settles) when it is not usable. */
export type Check = () => Promise<unknown>;

/** How long one dependency may take to answer a readiness check. */
export const READINESS_TIMEOUT_MS = 2_000;

const HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

export function isHealthPath(path: string): boolean {
  return path === '/healthz' || path === '/readyz' || path === '/healthz/' || path === '/readyz/';
}

function answer(status: number, body: unknown, extra: Record<string, string> = {}): ApiReply {
  return { status, headers: { ...HEADERS, ...extra }, body: JSON.stringify(body) };
}

async function run(check: Check, timeoutMs: number): Promise<'ok' | 'failed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      check().then(() => 'ok' as const),
      new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Answers /healthz and /readyz. `checks` are the dependencies of readiness (none in proxy mode:
 * an upstream that is down is answered 502 by every instance alike, so taking instances out of
 * rotation for it would only turn 502 into no answer at all).
 */
export async function serveHealth(
  request: ApiRequest,
  checks: Record<string, Check>,
  log: Logger,
  options: { shuttingDown?: boolean; timeoutMs?: number } = {},
): Promise<ApiReply> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return answer(405, { type: 'invalid_request', code: 'method_not_allowed', message: 'Method not allowed; use GET' }, { Allow: 'GET, HEAD' });
  }
  const live = request.path.startsWith('/healthz');
  if (live) return answer(200, { status: 'ok' });
  if (options.shuttingDown) return answer(503, { status: 'shutting_down' });
  const names = Object.keys(checks);
  const results = await Promise.all(
    names.map(async (name) =>
      run(checks[name], options.timeoutMs ?? READINESS_TIMEOUT_MS).catch((error: unknown) => {
        log.error(`[parley] readiness: ${name} is not usable`, { check: name, request_id: request.context?.id }, error);
        return 'failed' as const;
      }),
    ),
  );
  const report = Object.fromEntries(names.map((name, i) => [name, results[i]]));
  for (const name of names) {
    if (report[name] === 'timeout') log.error(`[parley] readiness: ${name} did not answer in time`, { check: name, request_id: request.context?.id });
  }
  const ready = results.every((r) => r === 'ok');
  return answer(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks: report });
}
