'use client';
// "This device": whether the browser keeps Parley's data (persistent storage), how much of the
// quota it uses, and what has not reached the server yet: what decides if the data survives.
import { useLiveQuery } from 'dexie-react-hooks';
import { lazy, Suspense, useCallback, useEffect, useState, type FormEvent } from 'react';
import { defaultBudget, effectiveBudget, MiB, summarise } from '@/lib/offline/policy';
import { keptConversationIds, readBudgetSetting, readKeepPinned, readOfflineStatus, setBudget, setKeepPinned, wakeDownloaderOnConnectionChange, type OfflineStatus } from '@/lib/offline/settings';
import { readLock } from '@/lib/view/lock/device-lock';
import { readDeviceStorage, requestPersistence, type DeviceStorage } from '@/lib/view/device-storage';
import { countOf, humanSize } from '@/lib/view/format';
import { listDevices } from '@/lib/view/devices';
import { AddPhone } from './AddPhone';
import { navigate } from './router';
import { useSession } from './session-context';
import { useSyncStatus } from './StatusBar';

// Changing the PIN or the screen lock: its forms load when the screen shows them.
const LockSettings = lazy(() => import('./lock/LockSettings').then((m) => ({ default: m.LockSettings })));

function persistedText(persisted: boolean | null): string {
  if (persisted === true) return 'Yes: persistent storage. The browser will not clear it to free space.';
  if (persisted === false) return 'No: the browser may clear this copy when space runs low or the app goes unused for a while.';
  return 'Unknown: this browser does not say.';
}

export function StorageScreen() {
  const [storage, setStorage] = useState<DeviceStorage | null>(null);
  const [refused, setRefused] = useState(false);
  const status = useSyncStatus();
  const refresh = useCallback(async () => setStorage(await readDeviceStorage(navigator.storage)), []);
  useEffect(() => {
    void refresh();
  }, [refresh, status?.pendingCount]);

  async function ask() {
    const granted = await requestPersistence(navigator.storage);
    setRefused(granted !== true);
    await refresh();
  }

  const unsent = status ? status.pendingCount + status.failed.length : null;
  const [hasLock] = useState(() => readLock(window.localStorage) !== null);
  return (
    <section className="screen" aria-labelledby="device-title">
      <div className="screen-head">
        <h1 id="device-title">This device</h1>
      </div>
      <h2>Storage</h2>
      {storage === null ? (
        <p className="empty">Reading…</p>
      ) : (
        <dl className="facts">
          <dt>Kept by the browser</dt>
          <dd data-testid="storage-persisted">{persistedText(storage.persisted)}</dd>
          <dt>Used</dt>
          <dd data-testid="storage-usage">
            {storage.usage === null || storage.quota === null
              ? 'Unknown: this browser does not say.'
              : `${humanSize(storage.usage)} of ${humanSize(storage.quota)} available to Parley`}
          </dd>
          <dt>Changes not yet on the server</dt>
          <dd data-testid="storage-unsent">{unsent === null ? '…' : unsent === 0 ? 'None' : unsent}</dd>
        </dl>
      )}
      {storage?.persisted === false && (
        <p>
          <button type="button" onClick={() => void ask()}>
            Ask to keep data on this device
          </button>
        </p>
      )}
      {refused && storage?.persisted !== true && (
        <p role="status">The browser did not grant it. Installing the app (Add to Home Screen) usually lets it keep the data.</p>
      )}
      <p>
        This device keeps a copy of your conversations and files, and the changes you make until they reach the server. If
        the browser clears it, Parley reloads your data from the server and tells you if unsent changes were lost.
      </p>
      <OfflineFiles quota={storage?.quota ?? null} />
      <OtherDevices />
      {hasLock && (
        <Suspense fallback={null}>
          <LockSettings userName="Parley on this device" />
        </Suspense>
      )}
    </section>
  );
}

/**
 * "Add a phone" and "Your devices": extensions of Parley's own server. Offered only where it
 * answers GET /v1/me/devices (a plain /v1 server answers 404; offline, nothing is offered).
 */
function OtherDevices() {
  const { token } = useSession();
  const [available, setAvailable] = useState(false);
  const [adding, setAdding] = useState(false);
  useEffect(() => {
    let cancelled = false;
    listDevices(token).then(
      (devices) => !cancelled && setAvailable(devices !== null),
      () => {},
    );
    return () => void (cancelled = true);
  }, [token]);
  if (!available) return null;
  return (
    <>
      <h2>Other devices</h2>
      <p>Sign in on your phone without a token: this device shows a code, the phone scans or types it, and you allow it here.</p>
      <div className="actions">
        <button type="button" onClick={() => setAdding(true)}>
          Add a phone
        </button>
        <button type="button" onClick={() => navigate({ name: 'devices' })}>
          Your devices
        </button>
      </div>
      <AddPhone token={token} open={adding} onClose={() => setAdding(false)} />
    </>
  );
}

function pausedText(paused: OfflineStatus['paused']): string {
  return paused === 'save-data' ? 'Paused: the browser asks to save data (Data Saver).' : 'Paused: the connection is slow (2G); downloads continue when it is better.';
}

/** Files kept for offline (lib/offline): what is kept, the room it takes, the budget and the pinned rule. */
function OfflineFiles({ quota }: { quota: number | null }) {
  const { connection } = useSession();
  const { db } = connection;
  const rows = useLiveQuery(() => db.offlineFiles.toArray(), [db]);
  const kept = useLiveQuery(() => keptConversationIds(db), [db]);
  const keepPinned = useLiveQuery(() => readKeepPinned(db), [db]);
  const budgetSetting = useLiveQuery(() => readBudgetSetting(db), [db]);
  const status = useLiveQuery(() => readOfflineStatus(db), [db]);
  const [budgetText, setBudgetText] = useState<string | null>(null);
  // The box follows a click at once; the stored setting (read back live) catches up.
  const [pinnedClicked, setPinnedClicked] = useState<boolean | null>(null);

  // Opening this screen also resumes what was waiting (a connection that got better, say).
  useEffect(() => wakeDownloaderOnConnectionChange(db.name), [db]);

  if (rows === undefined || kept === undefined || keepPinned === undefined || budgetSetting === undefined) return null;
  const sums = summarise(rows.map((r) => ({ ...r, kept: r.conversationId !== null && kept.has(r.conversationId) })));
  const budget = effectiveBudget(budgetSetting, quota);
  const shownBudget = budgetText ?? String(Math.round((budgetSetting ?? budget) / MiB));

  function saveBudget(event: FormEvent) {
    event.preventDefault();
    const mib = Number(shownBudget);
    if (!Number.isFinite(mib) || mib <= 0) return;
    setBudgetText(null);
    void setBudget(db, Math.round(mib * MiB));
  }

  return (
    <>
      <h2>Files kept for offline</h2>
      <dl className="facts">
        <dt>Kept offline</dt>
        <dd data-testid="offline-kept">
          {kept.size === 0
            ? 'No conversation is kept offline.'
            : `${countOf(kept.size, 'conversation')}: ${countOf(sums.keptFiles, 'file')}, ${humanSize(sums.keptBytes)}`}
        </dd>
        <dt>Other opened files</dt>
        <dd data-testid="offline-other">{`${countOf(sums.otherFiles, 'file')}, ${humanSize(sums.otherBytes)}`}</dd>
        <dt>Downloads</dt>
        <dd data-testid="offline-downloads">
          {status?.paused
            ? pausedText(status.paused)
            : status && status.waiting > 0
              ? `${countOf(status.waiting, 'file')} waiting${status.failure ? ` (${status.failure})` : ''}`
              : 'Nothing waiting'}
          {status && status.tooBig > 0 ? ` · ${countOf(status.tooBig, 'file does', 'files do')} not fit in the budget` : ''}
        </dd>
      </dl>
      <form className="offline-settings" onSubmit={saveBudget}>
        <label htmlFor="offline-budget">Room for files (MB)</label>
        <input id="offline-budget" type="number" inputMode="numeric" min={1} step={1} value={shownBudget} onChange={(e) => setBudgetText(e.target.value)} />
        <button type="submit">Save</button>
        {budgetSetting !== null && (
          <button type="button" onClick={() => { setBudgetText(null); void setBudget(db, null); }}>
            Use the default
          </button>
        )}
        <p data-testid="offline-budget">
          {`${humanSize(sums.keptBytes + sums.otherBytes)} of ${humanSize(budget)} used. `}
          {budgetSetting === null
            ? `The default: the smaller of 20% of the browser's quota and 1 GB (${humanSize(defaultBudget(quota))} here).`
            : 'Set by you.'}{' '}
          When it is full, the files opened longest ago are removed first; files of conversations kept offline never are.
        </p>
      </form>
      <fieldset>
        <label>
          <input
            type="checkbox"
            checked={pinnedClicked ?? keepPinned}
            onChange={(e) => {
              setPinnedClicked(e.target.checked);
              void setKeepPinned(db, e.target.checked);
            }}
          /> Keep pinned conversations offline (on
          by default)
        </label>
      </fieldset>
    </>
  );
}
