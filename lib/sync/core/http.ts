// The thin edge to /v1: builds requests, sorts every outcome into one of a few kinds the
// engine acts on (an answer through classify.ts), and validates response bodies with the shared
// schemas. The fetch is injected.
// zod/mini's parse takes any zod schema (the objects are zod/mini's: lib/objects.ts).
import { safeParse, type core } from 'zod/mini';
import { classify, type Outcome } from './classify';
import { errorField } from './errors';
import type { Pacer } from './pace';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

// The outcome kinds, and the one reading of an answer, are classify.ts's.
export type { Outcome } from './classify';

export interface HttpDeps {
  fetch: FetchLike;
  baseUrl: string;
  getToken: () => string | null | Promise<string | null>;
  /** Give up on a request after this long (its outcome is then unknown). Default: no limit. */
  requestTimeoutMs?: number;
  /** The device's own idea of connectivity (navigator.onLine, forwarded by the page): true = offline. */
  isOffline?: () => boolean;
  /** Called with every response's headers, before the body is read (e.g. to learn the server's extensions). */
  onResponse?: (headers: Headers) => void | Promise<void>;
  /**
   * Spreads requests under the server's rate limit as its answers tell it (pace.ts): each request
   * waits its turn, each answer is shown to it. Without it requests go as fast as they come.
   */
  pacer?: Pacer;
  /**
   * Sends a multipart upload and reports bytes sent (fetch cannot report upload progress; the
   * worker passes an XMLHttpRequest-based one). Default: `fetch`, with no progress.
   */
  upload?: UploadLike;
}

export type UploadLike = (input: string, init: RequestInit, onProgress: (sent: number, total: number) => void) => Promise<Response>;

/** Error codes (Node's fetch puts them on `cause`) that mean no connection was ever made. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN', 'UND_ERR_CONNECT_TIMEOUT']);

function couldNotConnect(error: unknown): boolean {
  const code = errorField(errorField(error, 'cause'), 'code');
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: Record<string, unknown>;
  form?: FormData;
  idempotencyKey?: string;
  /** Bytes of a `form` body sent so far (only when `HttpDeps.upload` can tell). */
  onUploadProgress?: (sent: number, total: number) => void;
  /**
   * A transfer (a `form` body sent through `HttpDeps.upload`, which reports bytes sent): abandoned
   * when nothing has moved — no byte sent, no answer — for this long, instead of after the fixed
   * `requestTimeoutMs`: a slow upload that keeps moving is never cut, a stalled one is (its outcome
   * unknown; it is sent again with the same Idempotency-Key). Over a plain fetch, which cannot
   * tell bytes sent, `requestTimeoutMs` applies.
   */
  stallMs?: number;
}

function urlFor(baseUrl: string, spec: RequestSpec): string {
  const url = new URL(spec.path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [key, value] of Object.entries(spec.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** Sends one request and classifies the result. `schema` null = no body expected (204). */
export async function call<T>(deps: HttpDeps, spec: RequestSpec, schema: core.$ZodType<T> | null): Promise<Outcome<T>> {
  const token = await deps.getToken();
  if (!token) return { kind: 'unauthenticated', message: 'not signed in' };
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  let body: BodyInit | undefined;
  if (spec.json) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(spec.json);
  } else if (spec.form) {
    body = spec.form; // fetch sets the multipart boundary itself
  }
  if (spec.idempotencyKey) headers['Idempotency-Key'] = spec.idempotencyKey;

  // The server's limit leaves nothing for a while yet: not sent, answered as the server would.
  const heldMs = deps.pacer ? await deps.pacer.turn() : 0;
  if (heldMs > 0) {
    const seconds = Math.ceil(heldMs / 1000);
    return { kind: 'rate_limited', retryAfter: String(seconds), message: `The server's rate limit leaves nothing for ${seconds} s` };
  }

  const stall = spec.form && deps.upload && spec.stallMs ? new StallTimer(spec.stallMs) : null;
  let response: Response;
  let text: string;
  try {
    try {
      const signal = stall ? stall.signal : deps.requestTimeoutMs ? AbortSignal.timeout(deps.requestTimeoutMs) : undefined;
      const url = urlFor(deps.baseUrl, spec);
      const init: RequestInit = { method: spec.method, headers, body, signal };
      response =
        spec.form && deps.upload
          ? await deps.upload(url, init, (sent, total) => {
              stall?.moved();
              spec.onUploadProgress?.(sent, total);
            })
          : await deps.fetch(url, init);
    } catch (error) {
      const cause = stall?.reason() ?? error;
      const message = cause instanceof Error ? cause.message : String(cause);
      return { kind: 'network', message, unreachable: !stall?.reason() && (couldNotConnect(error) || deps.isOffline?.() === true) };
    }
    deps.pacer?.observe(response.status, response.headers);
    await deps.onResponse?.(response.headers);

    try {
      text = await response.text();
    } catch (error) {
      // The head arrived but the body did not: as unknown as no answer at all.
      const cause = stall?.reason() ?? error;
      return { kind: 'network', message: `response body lost: ${cause instanceof Error ? cause.message : String(cause)}` };
    }
  } finally {
    stall?.clear();
  }

  const answer = classify(response.status, response.headers, text);
  if (answer.kind !== 'ok') return answer;
  const { replayed, serverTime } = answer;
  if (schema === null) return { kind: 'ok', value: undefined as T, replayed, serverTime };
  const parsed = safeParse(schema, safeJson(text));
  if (!parsed.success) return { kind: 'network', message: `unreadable ${response.status} response` };
  return { kind: 'ok', value: parsed.data, replayed, serverTime };
}

/** Aborts its signal when `moved()` has not been called for `ms` (armed at once). */
class StallTimer {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  readonly signal = this.controller.signal;

  constructor(private readonly ms: number) {
    this.moved();
  }

  moved(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(new Error(`no progress for ${this.ms >= 1000 ? `${Math.round(this.ms / 1000)} s` : `${this.ms} ms`}: the transfer stalled`)), this.ms);
  }

  /** Why it aborted (the stall), if it did. */
  reason(): Error | null {
    return this.signal.aborted && this.signal.reason instanceof Error ? this.signal.reason : null;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** The server honours Idempotency-Key (the embedded server says so on every /v1 response). */
export function advertisesIdempotency(headers: Headers): boolean {
  return headers.get('idempotency')?.trim().toLowerCase() === 'supported';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
