'use client';
// The lock's two screens: setting it up after the first sign-in on a device, and unlocking. Loaded
// on first use (its own chunk): the Argon2id code comes later still, when a PIN is set or entered.
import { useEffect, useState, type FormEvent } from 'react';
import { argon2idStretch, newDataKeyBytes, pinProblem, unwrapWithPasskey, unwrapWithPin, wrapWithPasskey, wrapWithPin, type KeyWrap, type PasskeyWrap, type PinWrap } from '@/lib/view/lock/keys';
import { createPasskey, passkeyPrf, platformPasskeyAvailable } from '@/lib/view/lock/passkey';

export interface Unlocked {
  key: CryptoKey;
}

/** After a first sign-in on a device whose policy asks for a lock: a PIN, and a passkey if the device can. */
export function LockSetup({ userName, onDone }: { userName: string; onDone(dataKeyBytes: Uint8Array<ArrayBuffer>, wraps: KeyWrap[]): void }) {
  const [pin, setPin] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [passkeys, setPasskeys] = useState(false);
  useEffect(() => {
    void platformPasskeyAvailable().then(setPasskeys);
  }, []);

  async function withPasskey() {
    setBusy(true);
    setError(null);
    const made = await createPasskey(userName);
    if (!made) {
      setBusy(false);
      return setError('This device’s screen lock could not be used (cancelled, or it cannot give Parley a key). Set a PIN instead.');
    }
    const bytes = newDataKeyBytes();
    const wrap = await wrapWithPasskey(bytes, made.credentialId, made.prfSalt, made.prfOutput);
    onDone(bytes, [wrap]);
  }

  async function withPin(event: FormEvent) {
    event.preventDefault();
    const problem = pinProblem(pin);
    if (problem) return setError(problem);
    if (pin !== again) return setError('The two PINs differ.');
    setBusy(true);
    setError(null);
    const bytes = newDataKeyBytes();
    const wrap = await wrapWithPin(bytes, pin, argon2idStretch);
    onDone(bytes, [wrap]);
  }

  return (
    <main className="signin lock">
      <h1>Protect this device</h1>
      <p>
        Parley keeps patient data on this device. Set how you unlock it: Parley locks after a few minutes without use, and only your
        unlock opens it again.
      </p>
      {passkeys && (
        <div className="actions">
          <button type="button" className="primary" disabled={busy} onClick={() => void withPasskey()}>
            Use this device’s screen lock
          </button>
        </div>
      )}
      <form onSubmit={(e) => void withPin(e)} noValidate>
        <label htmlFor="new-pin">{passkeys ? 'Or a PIN' : 'A PIN'} (at least 6 digits)</label>
        <input id="new-pin" type="password" inputMode="numeric" autoComplete="new-password" value={pin} onChange={(e) => setPin(e.target.value)} />
        <label htmlFor="new-pin-again">The same PIN again</label>
        <input id="new-pin-again" type="password" inputMode="numeric" autoComplete="new-password" value={again} onChange={(e) => setAgain(e.target.value)} />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <div className="actions">
          <button type="submit" className={passkeys ? undefined : 'primary'} disabled={busy}>
            {busy ? 'Setting up…' : 'Set PIN'}
          </button>
        </div>
      </form>
    </main>
  );
}

/** The lock screen: nothing of the user's data is on the page while it shows. */
export function LockScreen({
  wraps,
  wrongSoFar,
  wrongLimit,
  onUnlocked,
  onWrong,
  onSignOut,
}: {
  wraps: KeyWrap[];
  wrongSoFar: number;
  /** Wrong unlocks that erase the device (0: never). */
  wrongLimit: number;
  onUnlocked(dataKeyBytes: Uint8Array<ArrayBuffer>): void;
  /** A wrong PIN: counted (across reloads) by the caller, which erases the device at the limit. */
  onWrong(): void;
  onSignOut(): void;
}) {
  const pinWrap = wraps.find((w): w is PinWrap => w.method === 'pin');
  const passkeyWrap = wraps.find((w): w is PasskeyWrap => w.method === 'passkey');
  const [pin, setPin] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const left = wrongLimit > 0 ? wrongLimit - wrongSoFar : null;

  async function unlockWithPasskey() {
    if (!passkeyWrap) return;
    setBusy(true);
    setError(null);
    const output = await passkeyPrf(passkeyWrap.credentialId, passkeyWrap.prfSalt);
    const bytes = output ? await unwrapWithPasskey(passkeyWrap, output) : null;
    setBusy(false);
    if (bytes) return onUnlocked(bytes);
    setError(output ? 'That passkey does not open this device’s data.' : 'Unlocking was cancelled.');
    if (output) onWrong();
  }

  async function unlockWithPin(event: FormEvent) {
    event.preventDefault();
    if (!pinWrap || !pin) return;
    setBusy(true);
    setError(null);
    const bytes = await unwrapWithPin(pinWrap, pin, argon2idStretch);
    setBusy(false);
    setPin('');
    if (bytes) return onUnlocked(bytes);
    setError('Wrong PIN.');
    onWrong();
  }

  return (
    <main className="signin lock" data-testid="lock-screen">
      <h1>Parley is locked</h1>
      {passkeyWrap && (
        <div className="actions">
          <button type="button" className="primary" disabled={busy} onClick={() => void unlockWithPasskey()}>
            Unlock with this device’s screen lock
          </button>
        </div>
      )}
      {pinWrap && (
        <form onSubmit={(e) => void unlockWithPin(e)} noValidate>
          <label htmlFor="unlock-pin">PIN</label>
          <input id="unlock-pin" type="password" inputMode="numeric" autoComplete="off" value={pin} onChange={(e) => setPin(e.target.value)} autoFocus />
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Unlocking…' : 'Unlock'}
            </button>
          </div>
        </form>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
          {left !== null && wrongSoFar > 0 ? ` ${left} more wrong ${left === 1 ? 'try erases' : 'tries erase'} this device’s copy of your data.` : ''}
        </p>
      )}
      <p className="help">
        Forgot it? <button type="button" className="link" onClick={onSignOut}>Sign out</button> erases this device’s copy (changes not yet
        synced are lost); sign in again to get your data back from the server.
      </p>
    </main>
  );
}
