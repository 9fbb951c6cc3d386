'use client';
// The device lock around the whole app (issue 28). With a lock set up, nothing of the app renders
// until it is unlocked: the lock screen replaces everything, the sync connection is closed with
// the signed-in screens (nothing syncs while locked: what that costs is in README), and the data
// key and the token leave memory. It locks after `lock_after` without input, and when the app
// comes back after being hidden that long; while hidden, the page is covered, so the app
// switcher's snapshot shows nothing. Wrong unlocks are counted across reloads; at the policy's
// limit the device's copy is erased. A device that has not reached its server for `max_offline`
// is erased when next opened.
import { lazy, Suspense, useCallback, useEffect, useState, type ReactNode } from 'react';
import { forgetOpenedFiles, loadSealer, requireSealing, setSealer } from '@/lib/sync/page';
import type { KeyWrap } from '@/lib/view/lock/keys';
import { DEFAULT_POLICY, dueToLock, fetchPolicy, LOCK_KEY, offlineExpiry, POLICY_KEY, REACHED_KEY, readLock, readPolicy, writeLock, type DevicePolicy, type TokenVault } from '@/lib/view/lock/device-lock';

const loadForms = () => import('./LockForms');
const LockSetup = lazy(() => loadForms().then((m) => ({ default: m.LockSetup })));
const LockScreen = lazy(() => loadForms().then((m) => ({ default: m.LockScreen })));

export const TOO_MANY_WRONG = 'Too many wrong unlocks: this device’s copy of your data was erased. Sign in again to get it back from the server.';
export const OFFLINE_TOO_LONG = 'This device had not reached the server for too long: its copy of your data was erased. Sign in again to get it back.';

type Phase = 'open' | 'locked' | 'setup';

/** Sealing rows kept in clear from before the lock: not first-screen code. */
const sealDeviceData = (storage: TokenVault['storage'], origin: string) => import('@/lib/view/lock/seal-device').then((m) => m.sealDeviceData(storage, origin));

/**
 * The data key at work: the token's key for the vault, and the keys that seal the user's databases
 * (lib/sync/mirror/seal.ts) in this page — set before the vault opens, so no screen opens a
 * database without them.
 */
async function openDataKey(bytes: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  const [{ dataKey }, { createSealer, deriveMirrorKeys }] = await Promise.all([import('@/lib/view/lock/keys'), loadSealer()]);
  setSealer(createSealer(await deriveMirrorKeys(bytes)));
  return dataKey(bytes);
}

export function DeviceLock({
  vault,
  erase,
  userName,
  children,
}: {
  vault: TokenVault;
  /** Erases everything of this origin's users on the device (session.ts eraseDevice); `why` for the sign-in screen. */
  erase(why: string): Promise<void>;
  /** Whose lock this is (the passkey's name): the signed-in user, when known. */
  userName: () => string;
  children: ReactNode;
}) {
  const storage = vault.storage;
  const [policy, setPolicy] = useState<DevicePolicy>(() => readPolicy(storage) ?? DEFAULT_POLICY);
  const [phase, setPhase] = useState<Phase>(() => (vault.locked && readLock(storage)?.sealedToken ? 'locked' : 'open'));
  const [wrong, setWrong] = useState(() => readLock(storage)?.wrongUnlocks ?? 0);

  // The policy: the last one known at once, the server's as soon as it answers. Asked again (1, 2,
  // 4 … 15 s apart) until it does: a token kept in clear by an earlier version waits for it (see
  // below), and one refused answer (a busy server's 429 or 503) must not leave that device on the
  // sign-in screen until the next reload.
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let gone = false;
    const ask = (attempt: number) => {
      void fetchPolicy(fetch, window.location.origin).then((fresh) => {
        if (gone) return;
        if (!fresh) {
          timer = setTimeout(() => ask(attempt + 1), Math.min(15_000, 1000 * 2 ** attempt));
          return;
        }
        storage.setItem(POLICY_KEY, JSON.stringify(fresh));
        setPolicy(fresh);
      });
    };
    ask(0);
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [storage]);
  useEffect(() => {
    vault.requireLock(policy.lockAfterMs > 0);
    // A token in clear from before the lock: set the lock up now. On the server's word only (stored
    // or fresh), never on the default assumed until it answers: a deployment may have it off.
    if ((readPolicy(storage)?.lockAfterMs ?? 0) > 0) vault.holdClearToken();
    // Nothing reaches the databases in clear while a lock is asked for or exists (seal.ts).
    requireSealing(policy.lockAfterMs > 0 || readLock(storage) !== null);
  }, [vault, storage, policy]);
  // The key leaves with the lock, a sign-out or an erase.
  useEffect(() => vault.onChange((change) => change === 'closed' && setSealer(null)), [vault]);

  // Offline expiry, when opened.
  useEffect(() => {
    const reached = Number(storage.getItem(REACHED_KEY) ?? NaN);
    if (Number.isFinite(reached) && offlineExpiry(reached, Date.now(), policy.maxOfflineMs).erase) void erase(OFFLINE_TOO_LONG).then(() => setPhase('open'));
  }, [storage, policy.maxOfflineMs, erase]);

  // A token held for a lock that does not exist yet: set it up before anything else.
  useEffect(() => {
    const check = () => {
      if (vault.lockRequired && vault.heldToken !== null && readLock(storage) === null) setPhase('setup');
    };
    check();
    return vault.onChange(check);
  }, [vault, storage, policy]);

  const lock = useCallback(() => {
    if (!readLock(storage)) return;
    vault.close();
    setPhase('locked');
  }, [vault, storage]);

  // The idle lock, and the cover while hidden.
  useEffect(() => {
    if (phase !== 'open' || policy.lockAfterMs <= 0) return;
    let lastInputAt = Date.now();
    let hiddenSince: number | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = () => {
      clearTimeout(timer);
      const now = Date.now();
      if (dueToLock({ now, lastInputAt, hiddenSince }, policy.lockAfterMs)) return lock();
      timer = setTimeout(check, Math.max(50, lastInputAt + policy.lockAfterMs - now));
    };
    const input = () => {
      lastInputAt = Date.now();
    };
    const visibility = () => {
      if (document.visibilityState === 'hidden') {
        hiddenSince = Date.now();
        document.documentElement.classList.add('privacy-cover');
      } else {
        document.documentElement.classList.remove('privacy-cover');
        check();
        hiddenSince = null;
      }
    };
    const events = ['pointerdown', 'keydown', 'wheel', 'touchstart', 'scroll'] as const;
    for (const name of events) window.addEventListener(name, input, { passive: true, capture: true });
    document.addEventListener('visibilitychange', visibility);
    check();
    return () => {
      clearTimeout(timer);
      for (const name of events) window.removeEventListener(name, input, { capture: true });
      document.removeEventListener('visibilitychange', visibility);
    };
  }, [phase, policy.lockAfterMs, lock]);

  // Another tab set up, unlocked, signed out: the lock record is shared, the key is not.
  useEffect(() => {
    const onStorage = (event: StorageEvent) => {
      if (event.key === LOCK_KEY && !readLock(storage)) setPhase('open');
    };
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, [storage]);

  const setUp = useCallback(
    async (bytes: Uint8Array<ArrayBuffer>, wraps: KeyWrap[]) => {
      const key = await openDataKey(bytes);
      // Files opened before there was a lock were kept in clear by the service worker: gone now.
      await forgetOpenedFiles(typeof caches === 'undefined' ? null : caches).catch(() => 0);
      // Rows kept in clear from before the lock: sealed before anything reads them again.
      await sealDeviceData(storage, window.location.origin);
      writeLock(storage, { v: 1, wraps, sealedToken: null, wrongUnlocks: 0, clearRowsSealed: true });
      vault.open(key, vault.heldToken);
      await vault.persistToken();
      setPhase('open');
    },
    [storage, vault],
  );

  const unlocked = useCallback(
    async (bytes: Uint8Array<ArrayBuffer>) => {
      const record = readLock(storage);
      if (!record) return setPhase('open');
      const key = await openDataKey(bytes);
      const { unseal } = await import('@/lib/view/lock/keys');
      const token = record.sealedToken ? await unseal(key, record.sealedToken) : null;
      // A lock set up by a version that left rows in clear: sealed once, now.
      if (!record.clearRowsSealed) await sealDeviceData(storage, window.location.origin);
      writeLock(storage, { ...record, wrongUnlocks: 0, clearRowsSealed: true });
      setWrong(0);
      vault.open(key, token);
      // The bench's "unlock → list" splits here: the PIN's stretch and the unwrap before, the list after.
      performance.mark('parley:unlocked');
      setPhase('open');
    },
    [storage, vault],
  );

  const wrongUnlock = useCallback(() => {
    const record = readLock(storage);
    if (!record) return;
    const count = record.wrongUnlocks + 1;
    writeLock(storage, { ...record, wrongUnlocks: count });
    setWrong(count);
    if (policy.wrongUnlocksBeforeWipe > 0 && count >= policy.wrongUnlocksBeforeWipe) {
      void erase(TOO_MANY_WRONG).then(() => setPhase('open'));
    }
  }, [storage, policy.wrongUnlocksBeforeWipe, erase]);

  if (phase === 'locked') {
    const record = readLock(storage);
    return (
      <Suspense fallback={<p className="empty">Locked</p>}>
        <LockScreen
          wraps={record?.wraps ?? []}
          wrongSoFar={wrong}
          wrongLimit={policy.wrongUnlocksBeforeWipe}
          onUnlocked={(key) => void unlocked(key)}
          onWrong={wrongUnlock}
          onSignOut={() => void erase('Signed out: this device’s copy of your data was erased.').then(() => setPhase('open'))}
        />
      </Suspense>
    );
  }
  if (phase === 'setup') {
    return (
      <Suspense fallback={<p className="empty">Loading…</p>}>
        <LockSetup userName={userName()} onDone={(key, wraps) => void setUp(key, wraps)} />
      </Suspense>
    );
  }
  return <>{children}</>;
}
