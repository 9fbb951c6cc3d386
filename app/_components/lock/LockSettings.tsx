'use client';
// The Device screen's "Unlock" section (issue 28): change the PIN, add or remove this device's
// screen lock (a passkey with PRF). Each change asks for the current unlock, unwraps the data key
// with it and wraps it again (lib/view/lock/rewrap.ts): nothing else is encrypted again. Wrong
// PINs here count towards the same limit as the lock screen's. Loaded on first use.
import { useEffect, useState, type FormEvent } from 'react';
import { readLock, writeLock, type LockRecord } from '@/lib/view/lock/device-lock';
import { argon2idStretch, pinProblem, unwrapWithPasskey, unwrapWithPin, wrapWithPasskey, wrapWithPin, type PasskeyWrap, type PinWrap } from '@/lib/view/lock/keys';
import { createPasskey, passkeyPrf, platformPasskeyAvailable } from '@/lib/view/lock/passkey';
import { withoutWrap, withWrap } from '@/lib/view/lock/rewrap';

type Change = 'pin' | 'add-passkey' | 'remove-passkey';

export function LockSettings({ userName }: { userName: string }) {
  const storage = window.localStorage;
  const [record, setRecord] = useState<LockRecord | null>(() => readLock(storage));
  const [passkeys, setPasskeys] = useState(false);
  const [change, setChange] = useState<Change | null>(null);
  const [current, setCurrent] = useState('');
  const [pin, setPin] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    void platformPasskeyAvailable().then(setPasskeys);
  }, []);
  if (!record) return null;
  const pinWrap = record.wraps.find((w): w is PinWrap => w.method === 'pin');
  const passkeyWrap = record.wraps.find((w): w is PasskeyWrap => w.method === 'passkey');

  /** The data key, by the current PIN (or the screen lock where there is no PIN); null if refused. */
  async function currentKey(): Promise<Uint8Array<ArrayBuffer> | null> {
    if (pinWrap) {
      const bytes = await unwrapWithPin(pinWrap, current, argon2idStretch);
      if (!bytes) {
        const latest = readLock(storage);
        if (latest) writeLock(storage, { ...latest, wrongUnlocks: latest.wrongUnlocks + 1 });
        setError('That is not this device’s PIN.');
      }
      return bytes;
    }
    if (!passkeyWrap) return null;
    const output = await passkeyPrf(passkeyWrap.credentialId, passkeyWrap.prfSalt);
    const bytes = output ? await unwrapWithPasskey(passkeyWrap, output) : null;
    if (!bytes) setError('The screen lock was not confirmed.');
    return bytes;
  }

  async function apply(event: FormEvent) {
    event.preventDefault();
    if (!change || !record) return;
    if (change === 'pin') {
      const problem = pinProblem(pin);
      if (problem) return setError(problem);
      if (pin !== again) return setError('The two PINs differ.');
    }
    setBusy(true);
    setError(null);
    try {
      const bytes = await currentKey();
      if (!bytes) return;
      let next: LockRecord = { ...(readLock(storage) ?? record), wrongUnlocks: 0 };
      if (change === 'pin') next = withWrap(next, await wrapWithPin(bytes, pin, argon2idStretch));
      if (change === 'remove-passkey') next = withoutWrap(next, 'passkey');
      if (change === 'add-passkey') {
        const made = await createPasskey(userName);
        if (!made) return setError('This device’s screen lock could not be used (cancelled, or it cannot give Parley a key).');
        next = withWrap(next, await wrapWithPasskey(bytes, made.credentialId, made.prfSalt, made.prfOutput));
      }
      writeLock(storage, next);
      setRecord(next);
      setDone(change === 'pin' ? (pinWrap ? 'PIN changed.' : 'PIN set.') : change === 'add-passkey' ? 'The screen lock now unlocks Parley too.' : 'The screen lock no longer unlocks Parley.');
      setChange(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
      setCurrent('');
      setPin('');
      setAgain('');
    }
  }

  const start = (next: Change) => {
    setChange(next);
    setError(null);
    setDone(null);
  };

  return (
    <>
      <h2>Unlock</h2>
      <p>
        Parley unlocks with {[pinWrap && 'a PIN', passkeyWrap && 'this device’s screen lock'].filter(Boolean).join(' or ')}. Changing either keeps your
        data as it is.
      </p>
      {done && <p role="status">{done}</p>}
      {change === null ? (
        <div className="actions">
          <button type="button" onClick={() => start('pin')}>
            {pinWrap ? 'Change PIN' : 'Set a PIN'}
          </button>
          {passkeys && !passkeyWrap && (
            <button type="button" onClick={() => start('add-passkey')}>
              Use the screen lock too
            </button>
          )}
          {passkeyWrap && pinWrap && (
            <button type="button" onClick={() => start('remove-passkey')}>
              Stop using the screen lock
            </button>
          )}
        </div>
      ) : (
        <form onSubmit={(e) => void apply(e)} noValidate>
          {pinWrap ? (
            <>
              <label htmlFor="current-pin">Current PIN</label>
              <input id="current-pin" type="password" inputMode="numeric" autoComplete="off" value={current} onChange={(e) => setCurrent(e.target.value)} />
            </>
          ) : (
            <p>You will be asked for this device’s screen lock first.</p>
          )}
          {change === 'pin' && (
            <>
              <label htmlFor="changed-pin">New PIN (at least 6 digits)</label>
              <input id="changed-pin" type="password" inputMode="numeric" autoComplete="new-password" value={pin} onChange={(e) => setPin(e.target.value)} />
              <label htmlFor="changed-pin-again">The new PIN again</label>
              <input id="changed-pin-again" type="password" inputMode="numeric" autoComplete="new-password" value={again} onChange={(e) => setAgain(e.target.value)} />
            </>
          )}
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Saving…' : change === 'pin' ? 'Save PIN' : change === 'add-passkey' ? 'Use the screen lock' : 'Stop using it'}
            </button>
            <button type="button" disabled={busy} onClick={() => setChange(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </>
  );
}
