// The one reading of an HTTP answer (lib/sync/core/classify.ts), as a table: status, headers,
// body → the outcome the engine acts on. Every caller (http.ts `call`, the tus uploads, the
// replay's tus requests, the live stream) gets exactly this; what a 404 or a 409 means beyond it
// for one request (an upload's URL gone, an offset mismatch) is that caller's, from these fields.
import { describe, expect, it } from 'vitest';
import { classify, gone, type Answered, type Failure } from '../../lib/sync/core/classify';

type Row = [name: string, status: number, headers: Record<string, string>, body: string, expected: Answered | Failure];

/** The contract's error body. */
const err = (type: 'invalid_request' | 'api_error', code: string, message: string, extra: Record<string, string> = {}) =>
  JSON.stringify({ type, code, message, ...extra });
const bad = (code: string, message: string, extra: Record<string, string> = {}) => err('invalid_request', code, message, extra);
const contract = (code: string, message: string, extra: Record<string, string> = {}) => ({ type: 'invalid_request', code, message, ...extra }) as never;
const refused = (status: number, code: string | null, message: string, error: unknown = null): Failure =>
  ({ kind: 'refused', status, code, error, message }) as Failure;

const DATE = 'Tue, 14 Nov 2023 22:13:20 GMT'; // 1_700_000_000 s

const table: Row[] = [
  // 2xx: an answer; the caller reads the body
  ['200 → ok', 200, {}, '{"id":"x"}', { kind: 'ok', status: 200, replayed: false, serverTime: null }],
  ['201 replayed (Idempotent-Replayed: true) → ok, replayed', 201, { 'idempotent-replayed': 'true' }, '{}', { kind: 'ok', status: 201, replayed: true, serverTime: null }],
  ['204, no body, Date → ok with the server time', 204, { date: DATE }, '', { kind: 'ok', status: 204, replayed: false, serverTime: 1_700_000_000 }],
  ['200 with an error-shaped body is still ok (the status decides)', 200, {}, bad('internal', 'odd'), { kind: 'ok', status: 200, replayed: false, serverTime: null }],
  // 401: stop and ask for a sign-in; device_wiped kept apart
  ['401 unauthenticated → unauthenticated', 401, { 'www-authenticate': 'Bearer' }, bad('unauthenticated', 'token expired'), { kind: 'unauthenticated', message: 'token expired' }],
  ['401 without a body → unauthenticated', 401, {}, '', { kind: 'unauthenticated', message: 'HTTP 401' }],
  ['401 device_wiped → unauthenticated, wiped', 401, {}, bad('device_wiped', 'this device was wiped'), { kind: 'unauthenticated', message: 'this device was wiped', wiped: true }],
  ['401 device_wiped with fields outside the contract → wiped', 401, {}, JSON.stringify({ code: 'device_wiped', message: 'wiped', at: 5 }), { kind: 'unauthenticated', message: 'wiped', wiped: true }],
  ['401 with an HTML page mentioning device_wiped → not wiped', 401, { 'content-type': 'text/html' }, '<p>device_wiped</p>', { kind: 'unauthenticated', message: 'HTTP 401' }],
  // 429: retry after Retry-After
  ['429 with Retry-After in seconds', 429, { 'retry-after': '7' }, bad('rate_limited', 'slow down'), { kind: 'rate_limited', retryAfter: '7', message: 'slow down' }],
  ['429 with Retry-After as a date', 429, { 'retry-after': DATE }, bad('rate_limited', 'slow down'), { kind: 'rate_limited', retryAfter: DATE, message: 'slow down' }],
  ['429 without Retry-After or body → the backoff decides', 429, {}, '', { kind: 'rate_limited', retryAfter: null, message: 'HTTP 429' }],
  // 409: retry later for two codes, refused for every other
  ['409 idempotency_in_progress → in progress, Retry-After', 409, { 'retry-after': '5' }, bad('idempotency_in_progress', 'still running'), { kind: 'in_progress', retryAfter: '5', message: 'still running' }],
  ['409 idempotency_in_progress without Retry-After', 409, {}, bad('idempotency_in_progress', 'still running'), { kind: 'in_progress', retryAfter: null, message: 'still running' }],
  ['409 upload_in_progress → in progress, Retry-After', 409, { 'retry-after': '2' }, bad('upload_in_progress', 'another writer'), { kind: 'in_progress', retryAfter: '2', message: 'another writer' }],
  ['409 idempotency_in_progress outside the contract\'s shape → in progress', 409, {}, JSON.stringify({ code: 'idempotency_in_progress' }), { kind: 'in_progress', retryAfter: null, message: 'HTTP 409' }],
  ['409 upload_offset_mismatch → refused with its code (tus: HEAD and go on)', 409, {}, bad('upload_offset_mismatch', 'ask with HEAD', { param: 'Upload-Offset' }),
    refused(409, 'upload_offset_mismatch', 'ask with HEAD', contract('upload_offset_mismatch', 'ask with HEAD', { param: 'Upload-Offset' }))],
  ['409 conversation_exists → refused, existing_id kept', 409, {}, bad('conversation_exists', 'exists', { existing_id: 'AAAAAAAAAAAAAAAA' }),
    refused(409, 'conversation_exists', 'exists', contract('conversation_exists', 'exists', { existing_id: 'AAAAAAAAAAAAAAAA' }))],
  ['409 idempotency_conflict → refused', 409, {}, bad('idempotency_conflict', 'another request'), refused(409, 'idempotency_conflict', 'another request', contract('idempotency_conflict', 'another request'))],
  ['409 without a body → refused (not in progress)', 409, { 'retry-after': '5' }, '', refused(409, null, 'HTTP 409')],
  ['409 plain text (another tus server) → refused', 409, { 'content-type': 'text/plain' }, 'offset mismatch', refused(409, null, 'HTTP 409')],
  // 408, 5xx: retry later, the server may have acted
  ['408 → server (retry later)', 408, {}, '', { kind: 'server', status: 408, message: 'HTTP 408' }],
  ['500 internal → server', 500, {}, err('api_error', 'internal', 'oops'), { kind: 'server', status: 500, message: 'oops' }],
  ['502 HTML from a proxy → server', 502, { 'content-type': 'text/html' }, '<html>Bad Gateway</html>', { kind: 'server', status: 502, message: 'HTTP 502' }],
  ['503 service_unavailable → server', 503, { 'retry-after': '30' }, err('api_error', 'service_unavailable', 'read-only'), { kind: 'server', status: 503, message: 'read-only' }],
  ['504 upstream_timeout → server', 504, {}, err('api_error', 'upstream_timeout', 'upstream slow'), { kind: 'server', status: 504, message: 'upstream slow' }],
  ['507 insufficient_storage → server (retryable)', 507, {}, err('api_error', 'insufficient_storage', 'disk full'), { kind: 'server', status: 507, message: 'disk full' }],
  // 404, 410: refused, with the code (the caller decides "gone")
  ['404 resource_missing → refused', 404, {}, bad('resource_missing', 'no such file'), refused(404, 'resource_missing', 'no such file', contract('resource_missing', 'no such file'))],
  ['404 resource_missing with param (an upload\'s conversation) → refused, param kept', 404, {}, bad('resource_missing', 'no conversation', { param: 'conversation_id' }),
    refused(404, 'resource_missing', 'no conversation', contract('resource_missing', 'no conversation', { param: 'conversation_id' }))],
  ['404 without a body (a HEAD) → refused, no code', 404, {}, '', refused(404, null, 'HTTP 404')],
  ['410 upload_expired → refused', 410, {}, bad('upload_expired', 'expired'), refused(410, 'upload_expired', 'expired', contract('upload_expired', 'expired'))],
  ['410 events_expired → refused', 410, {}, bad('events_expired', 'too old'), refused(410, 'events_expired', 'too old', contract('events_expired', 'too old'))],
  // other 4xx: refused
  ['400 parameter_invalid → refused', 400, {}, bad('parameter_invalid', 'bad limit', { param: 'limit' }),
    refused(400, 'parameter_invalid', 'bad limit', contract('parameter_invalid', 'bad limit', { param: 'limit' }))],
  ['405 method_not_allowed → refused', 405, { allow: 'GET' }, bad('method_not_allowed', 'no'), refused(405, 'method_not_allowed', 'no', contract('method_not_allowed', 'no'))],
  ['412 tus_version_unsupported → refused', 412, {}, bad('tus_version_unsupported', 'v2?'), refused(412, 'tus_version_unsupported', 'v2?', contract('tus_version_unsupported', 'v2?'))],
  ['413 file_too_large → refused', 413, {}, bad('file_too_large', 'too big'), refused(413, 'file_too_large', 'too big', contract('file_too_large', 'too big'))],
  ['403 bare → refused', 403, {}, '', refused(403, null, 'HTTP 403')],
  ['302 (a redirect not followed) → refused', 302, { location: '/elsewhere' }, '', refused(302, null, 'HTTP 302')],
  // bodies: not JSON, JSON of another shape
  ['400 JSON array → refused by status alone', 400, {}, '[1,2]', refused(400, null, 'HTTP 400')],
  ['400 JSON string → refused by status alone', 400, {}, '"oops"', refused(400, null, 'HTTP 400')],
  ['400 truncated JSON → refused by status alone', 400, {}, '{"type":"invalid_req', refused(400, null, 'HTTP 400')],
  ['400 a code the contract does not list → its code and message, no contract error', 400, {}, bad('brand_new_code', 'new rule'), refused(400, 'brand_new_code', 'new rule')],
  ['400 a message but no code (a proxy\'s JSON) → its message', 400, {}, JSON.stringify({ message: 'bad input' }), refused(400, null, 'bad input')],
  ['400 code and message of the wrong types → by status alone', 400, {}, JSON.stringify({ code: 5, message: ['x'] }), refused(400, null, 'HTTP 400')],
  ['400 an empty message → HTTP <status>', 400, {}, JSON.stringify({ code: 'x', message: '' }), refused(400, 'x', 'HTTP 400')],
];

describe('classify: one reading of an HTTP answer', () => {
  it.each(table)('%s', (_name, status, headers, body, expected) => {
    expect(classify(status, new Headers(headers), body)).toStrictEqual(expected);
  });
});

describe('gone: 404 and 410 refusals only', () => {
  it.each<[string, Answered | Failure, boolean]>([
    ['404 refused', refused(404, null, 'HTTP 404'), true],
    ['410 refused', refused(410, 'upload_expired', 'expired'), true],
    ['409 refused', refused(409, 'upload_offset_mismatch', 'x'), false],
    ['400 refused', refused(400, null, 'HTTP 400'), false],
    ['a 5xx', { kind: 'server', status: 503, message: 'down' }, false],
    ['ok', { kind: 'ok', status: 200, replayed: false, serverTime: null }, false],
  ])('%s → %s', (_name, outcome, expected) => {
    expect(gone(outcome)).toBe(expected);
  });
});
