// What the device keeps about its lock (localStorage, nothing in it names a patient): the data
// key's wraps, the session token sealed under the data key, the wrong unlocks so far, when the
// device last reached the server — and the policy its server set. The token itself is never kept
// in clear once a lock exists: `TokenVault` stands in for localStorage in the session code
// (session.ts reads and writes 'parley:token' through it) and holds the token in memory only
// while unlocked, writing it sealed.
import type { StorageLike } from '../device';
import type { KeyWrap } from './keys';

export const LOCK_KEY = 'parley:lock';
export const POLICY_KEY = 'parley:policy';
export const REACHED_KEY = 'parley:reached';
/** The session's token (session.ts): in clear only while no lock exists or is asked for. */
export const TOKEN_KEY = 'parley:token';

export interface LockRecord {
  v: 1;
  wraps: KeyWrap[];
  /** The session token under the data key (keys.ts seal); null when signed out. */
  sealedToken: string | null;
  /** Wrong PINs or passkeys in a row, across reloads. */
  wrongUnlocks: number;
  /** Every row kept in clear from before the lock has been sealed (seal-device.ts); absent from records of earlier versions. */
  clearRowsSealed?: boolean;
}

/** The server's device policy (GET /device-policy), in milliseconds; 0 = off. */
export interface DevicePolicy {
  lockAfterMs: number;
  maxOfflineMs: number;
  wrongUnlocksBeforeWipe: number;
}

/** Before the server has said otherwise: its defaults (a server that says nothing gets a lock). */
export const DEFAULT_POLICY: DevicePolicy = { lockAfterMs: 5 * 60_000, maxOfflineMs: 14 * 24 * 3600_000, wrongUnlocksBeforeWipe: 10 };

export function readLock(storage: StorageLike): LockRecord | null {
  try {
    const record = JSON.parse(storage.getItem(LOCK_KEY) ?? 'null') as LockRecord | null;
    return record && record.v === 1 && Array.isArray(record.wraps) && record.wraps.length > 0 ? record : null;
  } catch {
    return null;
  }
}

export function writeLock(storage: StorageLike, record: LockRecord): void {
  storage.setItem(LOCK_KEY, JSON.stringify(record));
}

export function readPolicy(storage: StorageLike): DevicePolicy | null {
  try {
    const p = JSON.parse(storage.getItem(POLICY_KEY) ?? 'null') as DevicePolicy | null;
    return p && [p.lockAfterMs, p.maxOfflineMs, p.wrongUnlocksBeforeWipe].every((n) => Number.isInteger(n) && n >= 0) ? p : null;
  } catch {
    return null;
  }
}

/** The policy from the app's own server; null when it cannot be read now (offline: the last one holds). */
export async function fetchPolicy(fetchFn: typeof fetch, baseUrl: string): Promise<DevicePolicy | null> {
  try {
    const response = await fetchFn(new URL('/device-policy', baseUrl), { cache: 'no-store' });
    if (!response.ok) return null;
    const body = (await response.json()) as Record<string, unknown>;
    const seconds = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
    const lock = seconds(body.lock_after);
    const offline = seconds(body.max_offline);
    const wrong = seconds(body.wrong_unlocks_before_wipe);
    if (lock === null || offline === null || wrong === null) return null;
    return { lockAfterMs: lock * 1000, maxOfflineMs: offline * 1000, wrongUnlocksBeforeWipe: wrong };
  } catch {
    return null;
  }
}

/** The rule of the idle lock: locked once `lockAfterMs` passed without input, or hidden that long. */
export function dueToLock(state: { now: number; lastInputAt: number; hiddenSince: number | null }, lockAfterMs: number): boolean {
  if (lockAfterMs <= 0) return false;
  if (state.now - state.lastInputAt >= lockAfterMs) return true;
  return state.hiddenSince !== null && state.now - state.hiddenSince >= lockAfterMs;
}

/** Offline expiry: erase once the device has not reached its server for `maxOfflineMs`; warn 3 days before. */
export function offlineExpiry(lastReachedAt: number | null, now: number, maxOfflineMs: number): { erase: boolean; warnUntil: number | null } {
  if (maxOfflineMs <= 0 || lastReachedAt === null) return { erase: false, warnUntil: null };
  const deadline = lastReachedAt + maxOfflineMs;
  if (now >= deadline) return { erase: true, warnUntil: null };
  return { erase: false, warnUntil: now >= deadline - 3 * 24 * 3600_000 ? deadline : null };
}

/**
 * localStorage for the session code, with the token kept sealed: while a lock exists (or the
 * policy asks for one and it is being set up) 'parley:token' lives in memory only, and is
 * written sealed under the data key when there is one.
 */
/** What changed: the held token (sign-in, sign-out), or the key (unlocked or set up; locked or reset). */
export type VaultChange = 'token' | 'opened' | 'closed';

export class TokenVault implements StorageLike {
  private token: string | null = null;
  private key: CryptoKey | null = null;
  /** The policy asks for a lock: a new token is held in memory until the lock is set up. */
  lockRequired = false;
  private readonly listeners = new Set<(change: VaultChange) => void>();

  constructor(readonly storage: StorageLike) {}

  requireLock(required: boolean): void {
    this.lockRequired = required;
  }

  /**
   * The server's policy asks for a lock, and a token is kept in clear from before it did (an
   * earlier version, or the lock turned on later): out of localStorage, held until the lock is set up.
   */
  holdClearToken(): void {
    this.lockRequired = true;
    const clear = this.storage.getItem(TOKEN_KEY);
    if (clear === null) return;
    this.storage.removeItem(TOKEN_KEY);
    this.token = clear;
    void this.persistToken();
    this.emit('token');
  }

  get locked(): boolean {
    return readLock(this.storage) !== null && this.key === null;
  }

  get heldToken(): string | null {
    return this.token;
  }

  /** After an unlock (or a set-up): the data key and the token it unsealed. */
  open(key: CryptoKey, token: string | null): void {
    this.key = key;
    this.token = token;
    this.emit('opened');
  }

  /** Signed out or erased: the lock goes with the data (the next sign-in sets one up again). */
  reset(): void {
    // Nothing of this device's last session stays: not even when it last reached the server.
    for (const name of [LOCK_KEY, REACHED_KEY, POLICY_KEY]) this.storage.removeItem(name);
    this.key = null;
    this.token = null;
    this.emit('closed');
  }

  /** The lock: key and token leave memory. */
  close(): void {
    this.key = null;
    this.token = null;
    this.emit('closed');
  }

  onChange(listener: (change: VaultChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: VaultChange) {
    for (const listener of this.listeners) listener(change);
  }

  private sealed(): boolean {
    return this.lockRequired || readLock(this.storage) !== null;
  }

  getItem(name: string): string | null {
    if (name !== TOKEN_KEY) return this.storage.getItem(name);
    if (this.sealed()) return this.token;
    return this.storage.getItem(name);
  }

  setItem(name: string, value: string): void {
    if (name !== TOKEN_KEY || !this.sealed()) return this.storage.setItem(name, value);
    this.storage.removeItem(TOKEN_KEY); // never in clear
    this.token = value;
    void this.persistToken();
    this.emit('token');
  }

  removeItem(name: string): void {
    if (name === TOKEN_KEY) {
      this.token = null;
      const record = readLock(this.storage);
      if (record) writeLock(this.storage, { ...record, sealedToken: null });
    }
    this.storage.removeItem(name);
    if (name === TOKEN_KEY) this.emit('token');
  }

  /** Writes the held token sealed (after a sign-in, a "sign in again", a set-up). */
  async persistToken(): Promise<void> {
    const record = readLock(this.storage);
    if (!record || !this.key || this.token === null) return;
    // keys.ts (WebCrypto wraps, Argon2id) is not first-screen code: loaded when there is a key.
    const { seal } = await import('./keys');
    writeLock(this.storage, { ...record, sealedToken: await seal(this.key, this.token) });
  }
}
