// GET /device-policy: what the app must do to protect patient data on a device, from the app's own
// server — embedded or proxy, never an upstream (an upstream cannot loosen it). No token: the app
// reads it before sign-in completes (a first sign-in sets the lock up before anything is mirrored).
// `{"lock_after": seconds, "max_offline": seconds, "wrong_unlocks_before_wipe": count}`; 0 = off
// (lock_after 0: no lock and no encryption at rest).
import type { DevicePolicy } from '../../config';
import type { ApiReply, ApiRequest } from './exchange';

export const DEVICE_POLICY_PATH = '/device-policy';
/** The defaults of lib/config.ts, for a proxy built without a full configuration (tests). */
export const DEFAULT_DEVICE_POLICY: DevicePolicy = { lockAfterSeconds: 300, maxOfflineSeconds: 14 * 24 * 3600, wrongUnlocksBeforeWipe: 10 };

export function isDevicePolicyPath(path: string): boolean {
  return path === DEVICE_POLICY_PATH || path === `${DEVICE_POLICY_PATH}/`;
}

/**
 * POST /device-policy/clear: answers `Clear-Site-Data: "storage"`, so the browser deletes the
 * origin's storage folders. An erased device (a remote wipe, too many wrong unlocks, offline too
 * long) has deleted its databases already, but Chromium's IndexedDB (LevelDB) keeps deleted values
 * in its files until it compacts them, which no page can ask for; this header removes the files.
 * Only the app itself may ask: a custom header (a cross-site page cannot send one without a CORS
 * preflight, which this server never grants) and, where the browser says, Sec-Fetch-Site.
 */
export const DEVICE_CLEAR_PATH = `${DEVICE_POLICY_PATH}/clear`;
export const DEVICE_CLEAR_HEADER = 'x-parley-clear';

export function isDeviceClearPath(path: string): boolean {
  return path === DEVICE_CLEAR_PATH;
}

export function serveDeviceClear(request: ApiRequest): ApiReply {
  if (request.method !== 'POST') {
    return {
      status: 405,
      headers: { ...HEADERS, Allow: 'POST' },
      body: JSON.stringify({ type: 'invalid_request', code: 'method_not_allowed', message: 'Method not allowed; use POST' }),
    };
  }
  const site = request.header('sec-fetch-site');
  if (request.header(DEVICE_CLEAR_HEADER) !== '1' || (site !== null && site !== 'same-origin')) {
    return {
      status: 403,
      headers: HEADERS,
      body: JSON.stringify({ type: 'invalid_request', code: 'forbidden', message: `Only the app itself clears a device's storage (send ${DEVICE_CLEAR_HEADER}: 1 from the same origin)` }),
    };
  }
  return { status: 204, headers: { 'Cache-Control': 'no-store', 'Clear-Site-Data': '"storage"' }, body: null };
}

const HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

export function serveDevicePolicy(request: ApiRequest, policy: DevicePolicy): ApiReply {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return {
      status: 405,
      headers: { ...HEADERS, Allow: 'GET, HEAD' },
      body: JSON.stringify({ type: 'invalid_request', code: 'method_not_allowed', message: 'Method not allowed; use GET' }),
    };
  }
  const body = { lock_after: policy.lockAfterSeconds, max_offline: policy.maxOfflineSeconds, wrong_unlocks_before_wipe: policy.wrongUnlocksBeforeWipe };
  return { status: 200, headers: HEADERS, body: request.method === 'HEAD' ? null : JSON.stringify(body) };
}
