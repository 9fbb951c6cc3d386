// What the server writes about its work, for machines: one JSON line per request (request id,
// method, route template, status, duration, user) and one per error, carrying the request id when
// there is one. Start-up messages stay plain text for the person who started it (the demo token).
//
// Never logged: tokens, signatures, query strings, ids or file names in paths (only the route
// template), bodies. Errors carry their message and code; a stack only for unexpected ones.
import { randomUUID } from 'node:crypto';

/** What the service and its parts log through: console-shaped, so every part can take `console` too. */
export type Logger = Pick<Console, 'log' | 'error'>;

/** One finished (or abandoned) request. */
export interface RequestRecord {
  request_id: string;
  method: string;
  /** The route template (`/v1/conversations/:id`), never the id, the file name or the query. */
  route: string;
  /** The status sent; null when the client left before any was. */
  status: number | null;
  duration_ms: number;
  /** Who, when the request was authenticated. */
  user_id: string | null;
  /** The response did not finish (the client left, or the connection was cut). */
  aborted?: true;
}

export interface ServerLog extends Logger {
  request(record: RequestRecord): void;
}

/** The id of a request, kept with it while it is served (ApiRequest.context). */
export interface RequestContext {
  id: string;
  /** Set once the request is authenticated. */
  user: string | null;
  /**
   * The route table's path template of the request (`/v1/files/{id}`), set where the request is
   * matched against the table (service.ts, the proxy): the one list of /v1 paths is that table.
   */
  route?: string;
}

// Printable, no spaces or quotes, at most 128: what proxies (nginx $request_id, a UUID, a trace id) send.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@+=/-]{1,128}$/;

/** The incoming X-Request-Id when it is sane (a proxy's, to correlate), else a new one. */
export function requestId(incoming: string | string[] | null | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && SANE_REQUEST_ID.test(value) ? value : randomUUID();
}

/**
 * What a request is logged under: its route's template when the route table matched it
 * (`/v1/files/{id}` → `/v1/files/:id`); else `/files/<id>/<name>` → `/files/:id/:name`, a /v1 path
 * no route has → `/v1/*`, and the app's pages keep their path.
 */
export function routeTemplate(path: string, context?: RequestContext | null): string {
  if (context?.route) return context.route.replace(/\{([^}]+)\}/g, ':$1');
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const s = trimmed.split('/');
  if (trimmed === '/healthz' || trimmed === '/readyz') return trimmed;
  if (s[1] === 'files') return '/files/:id/:name';
  if (s[1] === 'v1') return s.length === 2 ? '/v1' : '/v1/*';
  // The app's own pages and assets: no user data in these paths. Long probes are cut.
  if (s[1] === '_next') return '/_next/*';
  return trimmed.length > 100 ? `${trimmed.slice(0, 100)}…` : trimmed;
}

type Fields = Record<string, unknown>;

function describeError(error: Error): Fields {
  const e: Error & { code?: unknown; cause?: unknown } = error;
  return {
    name: e.name,
    message: e.message,
    ...(typeof e.code === 'string' || typeof e.code === 'number' ? { code: e.code } : {}),
    ...(e.stack ? { stack: e.stack } : {}),
  };
}

/**
 * A console-shaped call as one record: strings make the message (a leading "[parley] " tag is
 * dropped), an Error becomes `error`, a plain object's fields are merged in (request_id, route …).
 */
export function toRecord(level: 'info' | 'error', args: unknown[]): Fields {
  const words: string[] = [];
  const fields: Fields = {};
  for (const arg of args) {
    if (arg instanceof Error) fields.error = describeError(arg);
    else if (arg !== null && typeof arg === 'object' && Object.getPrototypeOf(arg) === Object.prototype) Object.assign(fields, arg);
    else words.push(String(arg));
  }
  const msg = words.join(' ').replace(/^\[parley\]\s*/, '').replace(/:$/, '');
  return { time: new Date().toISOString(), level, msg, ...fields };
}

export interface JsonLogOptions {
  /** Where request records and start-up text go (default: stdout). */
  out?: (line: string) => void;
  /** Where error records go (default: stderr). */
  err?: (line: string) => void;
}

/**
 * The server's log: `log()` is plain text (start-up, for people), `error()` a JSON record on
 * stderr, `request()` a JSON record on stdout.
 */
export function jsonLog(options: JsonLogOptions = {}): ServerLog {
  const out = options.out ?? ((line) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line) => process.stderr.write(`${line}\n`));
  const json = (record: Fields) => {
    try {
      return JSON.stringify(record);
    } catch {
      return JSON.stringify({ time: record.time, level: record.level, msg: String(record.msg) });
    }
  };
  return {
    log: (...args: unknown[]) => out(args.map(String).join(' ')),
    error: (...args: unknown[]) => err(json(toRecord('error', args))),
    request: (record) => out(json({ time: new Date().toISOString(), level: 'info', msg: 'request', ...record })),
  };
}

/** No request records (tests that only care about the service, and the route handlers' default). */
export function withoutRequests(log: Logger): ServerLog {
  return { log: (...a) => log.log(...a), error: (...a) => log.error(...a), request: () => {} };
}
