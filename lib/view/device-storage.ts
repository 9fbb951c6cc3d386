// What the browser says about this origin's storage: whether it is persistent (not cleared
// when space runs low, or after a week unused on Safari) and how much is used of the quota.
// Takes the StorageManager (navigator.storage) or undefined where there is none (plain http).

export interface StorageManagerLike {
  persisted?(): Promise<boolean>;
  persist?(): Promise<boolean>;
  estimate?(): Promise<{ usage?: number; quota?: number }>;
}

export interface DeviceStorage {
  /** null: the browser cannot say (no StorageManager, or it failed). */
  persisted: boolean | null;
  usage: number | null;
  quota: number | null;
}

export async function readDeviceStorage(manager: StorageManagerLike | undefined): Promise<DeviceStorage> {
  const persisted = manager?.persisted ? await manager.persisted().catch(() => null) : null;
  const estimate = manager?.estimate ? await manager.estimate().catch(() => null) : null;
  return { persisted, usage: estimate?.usage ?? null, quota: estimate?.quota ?? null };
}

/** Asks for persistent storage; the browser may grant it silently, prompt, or refuse. */
export async function requestPersistence(manager: StorageManagerLike | undefined): Promise<boolean | null> {
  if (!manager?.persist) return null;
  return manager.persist().catch(() => null);
}
