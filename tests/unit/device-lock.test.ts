// @vitest-environment node
// The device lock's pure parts (lib/view/lock): the key hierarchy over real WebCrypto and real
// Argon2id (hash-wasm), the idle rule and the offline expiry as tables, and the token vault that
// keeps the session token out of localStorage once a lock exists.
import { describe, expect, it } from 'vitest';
import { argon2idStretch, dataKey, newDataKeyBytes, pinProblem, seal, unseal, unwrapWithPasskey, unwrapWithPin, wrapWithPasskey, wrapWithPin, type StretchParams } from '../../lib/view/lock/keys';
import { dueToLock, LOCK_KEY, offlineExpiry, readLock, TokenVault, writeLock } from '../../lib/view/lock/device-lock';

// Small Argon2id parameters: the same code, quicker (the real ones are in keys.ts, PIN_STRETCH).
const QUICK: StretchParams = { memorySize: 1024, iterations: 1, parallelism: 1 };

class MemoryStorage {
  readonly map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

describe('the key hierarchy', () => {
  it('a PIN wraps the data key; the right PIN unwraps it, a wrong one does not', async () => {
    const bytes = newDataKeyBytes();
    const wrap = await wrapWithPin(bytes, '482915', argon2idStretch, QUICK);
    expect(wrap).toMatchObject({ method: 'pin', params: QUICK });
    expect(JSON.stringify(wrap)).not.toContain('482915');
    expect(await unwrapWithPin(wrap, '482915', argon2idStretch)).toEqual(bytes);
    expect(await unwrapWithPin(wrap, '482916', argon2idStretch)).toBeNull();
  });

  it('a passkey PRF output wraps the same data key; another output does not open it', async () => {
    const bytes = newDataKeyBytes();
    const prf = crypto.getRandomValues(new Uint8Array(32));
    const wrap = await wrapWithPasskey(bytes, 'cred', 'c2FsdA==', prf);
    expect(await unwrapWithPasskey(wrap, prf)).toEqual(bytes);
    expect(await unwrapWithPasskey(wrap, crypto.getRandomValues(new Uint8Array(32)))).toBeNull();
  });

  it('changing the PIN re-wraps the data key: what it sealed still opens', async () => {
    const bytes = newDataKeyBytes();
    const sealed = await seal(await dataKey(bytes), 'pk_secret-token');
    const first = await wrapWithPin(bytes, '482915', argon2idStretch, QUICK);
    const opened = (await unwrapWithPin(first, '482915', argon2idStretch))!;
    const second = await wrapWithPin(opened, '902731', argon2idStretch, QUICK);
    const again = (await unwrapWithPin(second, '902731', argon2idStretch))!;
    expect(await unseal(await dataKey(again), sealed)).toBe('pk_secret-token');
    expect(sealed).not.toContain('secret');
  });

  it.each([
    ['12345', 'at least 6'],
    ['12a456', 'digits only'],
    ['111111', 'repeated'],
    ['123456', 'run of digits'],
    ['987654', 'run of digits'],
    ['482915', null],
  ])('PIN %s: %s', (pin, problem) => {
    if (problem === null) expect(pinProblem(pin)).toBeNull();
    else expect(pinProblem(pin)).toContain(problem);
  });
});

describe('dueToLock (lock after 5 minutes)', () => {
  const FIVE = 5 * 60_000;
  it.each([
    { now: 0, lastInputAt: 0, hiddenSince: null, locks: false },
    { now: FIVE - 1, lastInputAt: 0, hiddenSince: null, locks: false },
    { now: FIVE, lastInputAt: 0, hiddenSince: null, locks: true },
    { now: FIVE + 10, lastInputAt: 20, hiddenSince: null, locks: false },
    { now: FIVE, lastInputAt: FIVE - 1, hiddenSince: 0, locks: true },
    { now: FIVE, lastInputAt: FIVE - 1, hiddenSince: 1, locks: false },
  ])('%o', ({ locks, ...state }) => {
    expect(dueToLock(state, FIVE)).toBe(locks);
  });
  it('never with the lock off', () => expect(dueToLock({ now: 1e12, lastInputAt: 0, hiddenSince: 0 }, 0)).toBe(false));
});

describe('offlineExpiry (14 days)', () => {
  const DAY = 24 * 3600_000;
  it.each([
    { reached: null, now: 100 * DAY, erase: false, warn: false },
    { reached: 0, now: 10 * DAY, erase: false, warn: false },
    { reached: 0, now: 11 * DAY, erase: false, warn: true },
    { reached: 0, now: 14 * DAY - 1, erase: false, warn: true },
    { reached: 0, now: 14 * DAY, erase: true, warn: false },
  ])('%o', ({ reached, now, erase, warn }) => {
    const result = offlineExpiry(reached, now, 14 * DAY);
    expect(result.erase).toBe(erase);
    expect(result.warnUntil !== null).toBe(warn);
  });
  it('never with MAX_OFFLINE_DAYS 0', () => expect(offlineExpiry(0, 1e12, 0)).toEqual({ erase: false, warnUntil: null }));
});

describe('TokenVault', () => {
  it('without a lock (policy 0) the token is stored as before', () => {
    const storage = new MemoryStorage();
    const vault = new TokenVault(storage);
    vault.setItem('parley:token', 'pk_a');
    expect(storage.getItem('parley:token')).toBe('pk_a');
    expect(vault.getItem('parley:token')).toBe('pk_a');
  });

  it('with a lock required the token stays in memory until the lock exists, then is written sealed only', async () => {
    const storage = new MemoryStorage();
    const vault = new TokenVault(storage);
    vault.requireLock(true);
    vault.setItem('parley:token', 'pk_secret');
    expect(storage.getItem('parley:token')).toBeNull();
    expect(vault.getItem('parley:token')).toBe('pk_secret');
    const bytes = newDataKeyBytes();
    writeLock(storage, { v: 1, wraps: [await wrapWithPin(bytes, '482915', argon2idStretch, QUICK)], sealedToken: null, wrongUnlocks: 0 });
    const key = await dataKey(bytes);
    vault.open(key, vault.heldToken);
    await vault.persistToken();
    const record = readLock(storage)!;
    expect(await unseal(key, record.sealedToken!)).toBe('pk_secret');
    expect([...storage.map.values()].join(' ')).not.toContain('pk_secret');
    // Locked: nothing to read until unlocked.
    vault.close();
    expect(vault.locked).toBe(true);
    expect(vault.getItem('parley:token')).toBeNull();
    // Signed out: the lock goes too.
    vault.reset();
    expect(storage.getItem(LOCK_KEY)).toBeNull();
  });

  it('a token kept in clear from before the lock was asked for leaves localStorage and is held for the set-up', () => {
    const storage = new MemoryStorage();
    storage.setItem('parley:token', 'pk_earlier');
    const vault = new TokenVault(storage);
    const changes: string[] = [];
    vault.onChange((change) => changes.push(change));
    vault.requireLock(true); // not on its own: the policy may be the default assumed until the server answers
    expect(storage.getItem('parley:token')).toBe('pk_earlier');
    vault.holdClearToken(); // the server's policy asks for the lock
    expect(storage.getItem('parley:token')).toBeNull();
    expect(vault.heldToken).toBe('pk_earlier');
    expect(vault.getItem('parley:token')).toBe('pk_earlier');
    expect(changes).toEqual(['token']);
  });
});
