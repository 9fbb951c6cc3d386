// "Keep offline" settings and state, in the user's own database (lib/sync/mirror/db.ts, version 7), so
// sign-out removes them with everything else: per conversation the user's choice (offlineKeep),
// in meta whether pinned conversations are kept (default: yes) and the budget (default: see
// policy.ts), and what the service worker last reported (the status line on the Device screen).
// Read and written by the page (the toggle, the Device screen) and the service worker.
import { getMeta, type ParleyDb, pinnedConversations, setMeta } from '../sync/page';
import { OFFLINE_MESSAGE } from './message';
import { isKept } from './policy';
import { fieldOf, isRecord } from '../records';

export const KEEP_PINNED_KEY = 'offline.keepPinned';
export const BUDGET_KEY = 'offline.budgetBytes';

declare module '../sync/mirror/meta' {
  interface MetaValues {
    'offline.keepPinned': boolean;
    'offline.budgetBytes': number | null;
  }
}
export const STATUS_KEY = 'offline.status';

/** In `offlineState` (not meta), written by the downloader; undefined until it has written one. */
export async function readOfflineStatus(db: ParleyDb): Promise<OfflineStatus | undefined> {
  const value = (await db.offlineState.get(STATUS_KEY))?.value;
  return isOfflineStatus(value) ? value : undefined;
}

function isOfflineStatus(value: unknown): value is OfflineStatus {
  return (
    isRecord(value) &&
    (value.paused === null || value.paused === 'save-data' || value.paused === 'slow') &&
    typeof value.waiting === 'number' &&
    typeof value.tooBig === 'number' &&
    (value.failure === null || typeof value.failure === 'string')
  );
}

/** The message that wakes the service worker's downloader for a database (workers/sw.ts). */
export { OFFLINE_MESSAGE };

export interface OfflineStatus {
  /** Why downloads wait, if they do. */
  paused: 'save-data' | 'slow' | null;
  /** Files of kept conversations not yet complete on the device. */
  waiting: number;
  /** Of those, files that do not fit in the budget even after evicting all others. */
  tooBig: number;
  /** The last failure, in words (network, server), if the last pass ended on one. */
  failure: string | null;
}

export async function readKeepPinned(db: ParleyDb): Promise<boolean> {
  return (await getMeta(db, KEEP_PINNED_KEY)) ?? true;
}

export async function readBudgetSetting(db: ParleyDb): Promise<number | null> {
  return (await getMeta(db, BUDGET_KEY)) ?? null;
}

/** The conversations whose files are kept offline now. */
export async function keptConversationIds(db: ParleyDb): Promise<Set<string>> {
  const [stored, keepPinned, aliases] = await Promise.all([db.offlineKeep.toArray(), readKeepPinned(db), db.idAliases.toArray()]);
  // A conversation created offline was chosen under its temporary id: follow it to the server's.
  const realId = new Map(aliases.map((a) => [a.tempId, a.realId]));
  const choices = stored.map((c) => ({ ...c, conversationId: realId.get(c.conversationId) ?? c.conversationId }));
  const choice = new Map(choices.map((c) => [c.conversationId, c.keep]));
  const kept = new Set<string>();
  for (const c of choices) if (c.keep) kept.add(c.conversationId);
  if (keepPinned) {
    const pinned = await pinnedConversations(db);
    for (const c of pinned) if (isKept(c, choice.get(c.id), keepPinned)) kept.add(c.id);
  }
  return kept;
}

/** The channel the sync workers' downloader listens on, on a device with a lock (sealed-downloads.ts). */
export function offlineChannelName(database: string): string {
  return `parley-offline:${database}`;
}

/**
 * Asks the downloader to bring the device's files up to date (downloads, evictions): the service
 * worker's without a lock, the sync workers' with one (the service worker then leaves files alone).
 */
export function wakeDownloader(database: string): void {
  if (typeof BroadcastChannel === 'function') {
    const channel = new BroadcastChannel(offlineChannelName(database));
    channel.postMessage('wake');
    channel.close();
  }
  if (typeof navigator === 'undefined' || !('serviceWorker' in navigator)) return;
  void navigator.serviceWorker.ready.then((registration) => registration.active?.postMessage({ type: OFFLINE_MESSAGE, database })).catch(() => {});
}

/** The browser's NetworkInformation (Chromium's `navigator.connection`): it says when the connection changes. */
export function networkConnection(navigator: unknown): EventTarget | undefined {
  const connection = fieldOf(navigator, 'connection');
  return connection instanceof EventTarget ? connection : undefined;
}

/**
 * While a screen that shows downloads is open: wakes the downloader now, and again whenever the
 * browser says the connection changed (a paused download resumes once it is no longer slow or
 * metered). The service worker listens too, but only while it runs. Returns the unsubscribe.
 */
export function wakeDownloaderOnConnectionChange(database: string): () => void {
  wakeDownloader(database);
  const connection = networkConnection(globalThis.navigator);
  const wake = () => wakeDownloader(database);
  connection?.addEventListener?.('change', wake);
  return () => connection?.removeEventListener?.('change', wake);
}

export async function setKeepOffline(db: ParleyDb, conversationId: string, keep: boolean): Promise<void> {
  await db.offlineKeep.put({ conversationId, keep });
  wakeDownloader(db.name);
}

export async function setKeepPinned(db: ParleyDb, keep: boolean): Promise<void> {
  await setMeta(db, KEEP_PINNED_KEY, keep);
  wakeDownloader(db.name);
}

export async function setBudget(db: ParleyDb, bytes: number | null): Promise<void> {
  await setMeta(db, BUDGET_KEY, bytes);
  wakeDownloader(db.name);
}
