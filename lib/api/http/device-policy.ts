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
