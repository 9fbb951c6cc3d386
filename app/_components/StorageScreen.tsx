'use client';
// "This device": whether the browser keeps Parley's data (persistent storage), how much of the
// quota it uses, and what has not reached the server yet: what decides if the data survives.
import { useCallback, useEffect, useState } from 'react';
import { readDeviceStorage, requestPersistence, type DeviceStorage } from '@/lib/view/device-storage';
import { humanSize } from '@/lib/view/format';
import { useSyncStatus } from './StatusBar';

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
    </section>
  );
}
