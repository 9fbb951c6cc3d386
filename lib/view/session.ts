// The signed-in session on this device: the token, kept in localStorage, and the key that names
// the user's local database. The key is a hash of the token, not the token (nothing secret in names).

const TOKEN_KEY = 'parley:token';

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function loadToken(storage: StorageLike): string | null {
  return storage.getItem(TOKEN_KEY);
}
export function saveToken(storage: StorageLike, token: string): void {
  storage.setItem(TOKEN_KEY, token);
}
export function forgetToken(storage: StorageLike): void {
  storage.removeItem(TOKEN_KEY);
}

/** cyrb53: a fast 53-bit string hash; works where crypto.subtle does not (plain-http LAN origins). */
export function userKeyFor(token: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < token.length; i++) {
    const ch = token.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

export type SignInCheck = { ok: true } | { ok: false; reason: 'rejected' | 'unreachable' | 'server' };

/** Asks the server whether it accepts the token, before anything is stored. */
export async function checkToken(baseUrl: string, token: string, fetchFn: typeof fetch = fetch): Promise<SignInCheck> {
  try {
    const response = await fetchFn(`${baseUrl}/v1/conversations?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    if (response.ok) return { ok: true };
    return { ok: false, reason: response.status === 401 ? 'rejected' : 'server' };
  } catch {
    return { ok: false, reason: 'unreachable' };
  }
}
