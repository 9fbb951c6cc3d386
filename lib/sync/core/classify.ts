// What an HTTP answer of /v1 (and of its tus uploads at /v1/uploads) means: status, headers and
// body → one of the few kinds of outcome the engine acts on. Pure, and the only place that reads a
// status code for its meaning: http.ts (`call`), the tus uploads (resumable-upload.ts), the
// replay's plain tus requests (outbox/tus-requests.ts) and the live stream (live.ts) all ask it.
// A caller adds only what its request alone knows (e.g. "404 of an upload's URL: start a new
// upload"), from the classified outcome (`gone`, `code`), never from the status again.
//
//   2xx ............................................. ok (replayed: Idempotent-Replayed; serverTime: Date)
//   401 device_wiped ................................ unauthenticated, wiped: the device must erase its data
//   401 (any other body) ............................ unauthenticated: stop, ask for a sign-in
//   429 ............................................. rate_limited (Retry-After)
//   409 idempotency_in_progress, upload_in_progress . in_progress (Retry-After): not a refusal, same key again
//   408, 5xx (507 insufficient_storage included) .... server: retry later, the server may have acted
//   any other (409 upload_offset_mismatch, 409 conversation_exists, 409 idempotency_conflict,
//   404, 410, 400, 413, a bare 409, 3xx …) .......... refused, with the status and the body's code
//
// The body: the contract's error shape (`ApiErrorBody`, strict) gives `error` (with existing_id,
// param); the `code` and `message` are read from any JSON object that has them as strings (a
// proxy's or another tus server's body, a code newer than the schema's list: `device_wiped`).
// Anything else (HTML, text, empty, JSON of another shape) classifies by status alone, with the
// message `HTTP <status>`.
import { ApiErrorBody } from '../../objects';

export type Outcome<T> =
  /** 2xx with a valid body. */
  | { kind: 'ok'; value: T; replayed: boolean; serverTime: number | null }
  /**
   * Never got a usable answer: network error, or a 2xx body we could not read. Server may have acted.
   * `unreachable`: the failure looks like "could not reach the server" (no connection could be
   * made, or the device says it is offline) rather than "sent, answer lost". Only for pacing
   * retries: it is a guess in a browser (a request may leave just before the link drops), so it
   * never makes the outcome known; replay still verifies a sent operation as for any lost answer.
   */
  | { kind: 'network'; message: string; unreachable?: boolean }
  /**
   * 5xx (507 insufficient_storage included) and 408: try again later. The server may have acted
   * (a proxy's 502/504 says nothing).
   */
  | { kind: 'server'; status: number; message: string }
  /** 429: try again after Retry-After. */
  | { kind: 'rate_limited'; retryAfter: string | null; message: string }
  /**
   * 409 idempotency_in_progress: the first request with this Idempotency-Key is still running (or
   * was abandoned by a crashed server process); 409 upload_in_progress: another request is writing
   * to this upload. Not a refusal: retry after Retry-After with the SAME key, which then gets the
   * first request's answer.
   */
  | { kind: 'in_progress'; retryAfter: string | null; message: string }
  /**
   * 401: the token is no good; stop and ask the user to sign in again. `wiped`: the answer was 401
   * `device_wiped` — the organisation wiped this device, whose data must be erased (the engine
   * still treats it as any 401 for now; it is kept apart so that it can act on it).
   */
  | { kind: 'unauthenticated'; message: string; wiped?: true }
  /**
   * Any other answer (4xx, and the odd 3xx): the server refused this request and did not act.
   * `code`: the body's error code where it has one (even outside the contract's shape), else null;
   * `error`: the body when it is exactly the contract's error shape.
   */
  | { kind: 'refused'; status: number; code: string | null; error: ApiErrorBody | null; message: string };

/** Every outcome but success. */
export type Failure = Exclude<Outcome<unknown>, { kind: 'ok' }>;

/** A 2xx, classified: the caller reads the value from the body (http.ts with its schema). */
export interface Answered {
  kind: 'ok';
  status: number;
  /** `Idempotent-Replayed: true`: an idempotent server replayed the answer it stored. */
  replayed: boolean;
  /** The server's clock (the Date header), in seconds. */
  serverTime: number | null;
}

/** 409 codes that say "retry later with the same key", not "refused". */
const IN_PROGRESS_CODES: ReadonlySet<string> = new Set(['idempotency_in_progress', 'upload_in_progress']);

/** The one classification of an HTTP answer (see the table at the head of this file). Pure. */
export function classify(status: number, headers: Headers, bodyText: string): Answered | Failure {
  if (status >= 200 && status < 300) {
    return { kind: 'ok', status, replayed: headers.get('idempotent-replayed') === 'true', serverTime: serverTimeOf(headers) };
  }
  const json = parseJson(bodyText);
  const strict = ApiErrorBody.safeParse(json);
  const error = strict.success ? strict.data : null;
  const loose = looseError(json);
  const code = error?.code ?? loose.code;
  const message = error?.message ?? loose.message ?? `HTTP ${status}`;
  if (status === 401) return code === 'device_wiped' ? { kind: 'unauthenticated', message, wiped: true } : { kind: 'unauthenticated', message };
  if (status === 429) return { kind: 'rate_limited', retryAfter: headers.get('retry-after'), message };
  if (status === 409 && code !== null && IN_PROGRESS_CODES.has(code)) {
    return { kind: 'in_progress', retryAfter: headers.get('retry-after'), message };
  }
  if (status >= 500 || status === 408) return { kind: 'server', status, message };
  return { kind: 'refused', status, code, error, message };
}

/**
 * What the request addressed is not there (404) or no longer (410): a deleted object, an upload
 * the server forgot or let expire, an expired cursor. The caller says what that means for its
 * request (a delete: done; an upload's URL: a new upload; a feed cursor: list again).
 */
export function gone(outcome: Outcome<unknown> | Answered): outcome is Extract<Failure, { kind: 'refused' }> {
  return outcome.kind === 'refused' && (outcome.status === 404 || outcome.status === 410);
}

function serverTimeOf(headers: Headers): number | null {
  const date = headers.get('date');
  const ms = date ? Date.parse(date) : NaN;
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `code` and `message` of a JSON object that has them as non-empty strings, whatever else it holds. */
function looseError(json: unknown): { code: string | null; message: string | null } {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { code: null, message: null };
  const { code, message }: { code?: unknown; message?: unknown } = json;
  return {
    code: typeof code === 'string' && code !== '' ? code : null,
    message: typeof message === 'string' && message !== '' ? message : null,
  };
}
