// The app's side of two extensions of Parley's own server: the user's devices (/v1/me/devices)
// and pairing a phone (/v1/me/pairings, /v1/pairings). Plain fetch, no schemas: these screens load
// on first use. A server without them (a plain /v1 upstream) answers 404: `null`, and the app
// offers neither "Add a phone" nor "Your devices".
import type { Device, Pairing, PairingCreated, PairingRedeemed, PairingToken } from '../schemas';

export type { Device, Pairing, PairingCreated };

type Fetch = typeof fetch;

export class DevicesApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(fetcher: Fetch, method: string, path: string, options: { token?: string; json?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetcher(path, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json), cache: 'no-store' });
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as { code?: string; message?: string } | null;
  if (!response.ok) throw new DevicesApiError(response.status, body?.code ?? 'unknown', body?.message ?? `The server answered ${response.status}`);
  return body as T;
}

/** The user's devices, or null when the server has no such extension (404). */
export async function listDevices(token: string, fetcher: Fetch = fetch): Promise<Device[] | null> {
  try {
    return (await call<{ data: Device[] }>(fetcher, 'GET', '/v1/me/devices', { token })).data;
  } catch (error) {
    if (error instanceof DevicesApiError && error.status === 404) return null;
    throw error;
  }
}

export const signOutDevice = (token: string, id: string, wipe: boolean, fetcher: Fetch = fetch) =>
  call<void>(fetcher, 'DELETE', `/v1/me/devices/${encodeURIComponent(id)}${wipe ? '?wipe=true' : ''}`, { token });

export const createPairing = (token: string, fetcher: Fetch = fetch) => call<PairingCreated>(fetcher, 'POST', '/v1/me/pairings', { token });
export const readPairing = (token: string, id: string, fetcher: Fetch = fetch) => call<Pairing>(fetcher, 'GET', `/v1/me/pairings/${encodeURIComponent(id)}`, { token });
export const decidePairing = (token: string, id: string, allow: boolean, fetcher: Fetch = fetch) =>
  call<Pairing>(fetcher, 'POST', `/v1/me/pairings/${encodeURIComponent(id)}/${allow ? 'approve' : 'deny'}`, { token });

export const redeemCode = (code: string, fetcher: Fetch = fetch) => call<PairingRedeemed>(fetcher, 'POST', '/v1/pairings/redeem', { json: { code } });
/** The token once approved; DevicesApiError pairing_pending (409) until then. The secret travels in the body only. */
export const collectToken = (id: string, secret: string, fetcher: Fetch = fetch) =>
  call<PairingToken>(fetcher, 'POST', `/v1/pairings/${encodeURIComponent(id)}/token`, { json: { secret } });

/** ABCDEFGH → ABCD-EFGH, as shown to be typed. */
export const formatCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/** The address the QR code carries: this app, with the code to redeem (never a token). */
export const pairingUrl = (origin: string, code: string) => `${origin}/?pair=${encodeURIComponent(code)}`;

/** What to tell the new device when redeeming or collecting failed. */
export function pairingProblem(error: unknown): string {
  if (!(error instanceof DevicesApiError)) return 'The server could not be reached. Check the connection and try again.';
  switch (error.code) {
    case 'resource_missing':
      return 'That code is not known. Check it, or ask the other device for a new one.';
    case 'parameter_invalid':
    case 'parameter_missing':
      return 'A code is 8 letters and digits, as shown on the other device.';
    case 'pairing_expired':
      return 'The code has expired. Ask the other device for a new one.';
    case 'pairing_used':
      return 'The code was used already. Ask the other device for a new one.';
    case 'pairing_denied':
      return 'The other device did not allow this one to sign in.';
    case 'rate_limited':
      return 'Too many tries. Wait a minute, then try again.';
    default:
      return error.message;
  }
}
