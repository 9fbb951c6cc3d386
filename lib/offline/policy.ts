// "Keep offline" (issue 18): the decisions, as pure functions of their inputs (no clock, no
// storage, no network), so tests/unit/offline-policy.test.ts checks them directly: which
// conversations are kept, the storage budget, when downloads pause, the download queue's order
// and which cached files are evicted. The service worker (lib/offline/downloader.ts) and the
// Device screen apply them.

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;
/** Where the browser does not say its quota (no navigator.storage.estimate): a modest budget. */
export const UNKNOWN_QUOTA_BUDGET = 256 * MiB;

/**
 * The default budget for cached files: the smaller of 20% of the quota the browser grants this
 * origin and 1 GiB (the mirror, the app and waiting uploads need the rest), 256 MiB when the
 * browser does not say.
 */
export function defaultBudget(quota: number | null | undefined): number {
  if (quota === null || quota === undefined || !Number.isFinite(quota) || quota <= 0) return UNKNOWN_QUOTA_BUDGET;
  return Math.min(Math.floor(quota * 0.2), GiB);
}

/** The budget in force: the user's setting if any (a positive number of bytes), else the default. */
export function effectiveBudget(setting: number | null | undefined, quota: number | null | undefined): number {
  if (typeof setting === 'number' && Number.isFinite(setting) && setting > 0) return Math.floor(setting);
  return defaultBudget(quota);
}

/** What the browser says about the connection (Network Information API; absent in Safari, Firefox). */
export interface ConnectionLike {
  saveData?: boolean;
  effectiveType?: string;
  /** The link's kind where the browser says ('cellular', 'wifi', 'ethernet', …; ChromeOS/Android). */
  type?: string;
  /** An older draft of the API's flag, still found in some WebViews. */
  metered?: boolean;
}

/**
 * Why downloads wait, or null when they may run: the user asked to save data, or the browser
 * rates the connection as 2G or slower. A browser that says nothing is not held back.
 */
export function pauseReason(connection: ConnectionLike | null | undefined): 'save-data' | 'slow' | null {
  if (!connection) return null;
  if (connection.saveData === true) return 'save-data';
  if (connection.effectiveType === '2g' || connection.effectiveType === 'slow-2g') return 'slow';
  return null;
}

/**
 * Why fetches the user did not ask for — a file fetched only to draw its thumbnail — wait, or null
 * when they may run: the reasons downloads wait, and also a connection the browser says is
 * cellular or metered (where it says nothing, a link is not taken as metered). Opening a file and
 * "Keep offline" are the user's own asks and do not wait for this.
 */
export function backgroundFetchReason(connection: ConnectionLike | null | undefined): 'save-data' | 'slow' | 'metered' | null {
  const paused = pauseReason(connection);
  if (paused || !connection) return paused;
  if (connection.metered === true || connection.type === 'cellular') return 'metered';
  return null;
}

export interface ConversationKeepInput {
  id: string;
  is_pinned: boolean;
}

/**
 * Whether a conversation's files are kept offline: the user's own choice for it (true/false) wins;
 * without one, pinned conversations are kept when "keep pinned conversations offline" is on.
 */
export function isKept(conversation: ConversationKeepInput, choice: boolean | undefined, keepPinned: boolean): boolean {
  if (choice !== undefined) return choice;
  return keepPinned && conversation.is_pinned;
}

export interface QueueFile {
  id: string;
  conversationId: string | null;
  created_at: number;
  file_size: number;
  file_url: string;
}

export interface CachedState {
  complete: boolean;
  received: number;
  url: string;
}

/**
 * The files to download, in order: those of kept conversations not complete on the device
 * (a renamed file has a new URL and is fetched again). Partly downloaded files come first — their
 * bytes were already paid for — then newest first (created_at, then id for a stable order).
 * Files without a URL of their own origin (not yet uploaded) are left out.
 */
export function downloadQueue(files: readonly QueueFile[], kept: ReadonlySet<string>, cached: ReadonlyMap<string, CachedState>, origin: string): QueueFile[] {
  const wanted = files.filter((f) => {
    if (f.conversationId === null || !kept.has(f.conversationId)) return false;
    if (!sameOriginFileUrl(f.file_url, origin)) return false;
    const state = cached.get(f.id);
    return !(state?.complete && state.url === f.file_url);
  });
  const partial = (f: QueueFile) => {
    const state = cached.get(f.id);
    return state !== undefined && !state.complete && state.received > 0 && state.url === f.file_url;
  };
  return wanted.sort((a, b) => Number(partial(b)) - Number(partial(a)) || b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A URL the service worker serves from its file cache: /files/… on this origin. */
export function sameOriginFileUrl(url: string, origin: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.origin === origin && parsed.pathname.startsWith('/files/');
  } catch {
    return false;
  }
}

export interface CacheEntry {
  fileId: string;
  /** Bytes it takes on the device (complete or partial). */
  size: number;
  lastOpenedAt: number | null;
  /** Of a conversation kept offline: never evicted. */
  kept: boolean;
}

export interface EvictionPlan {
  /** Files to remove, least recently opened first (never opened counts as oldest). */
  evict: string[];
  /** Whether `incoming` bytes fit within the budget after evicting them. */
  fits: boolean;
  /** Bytes used after the evictions (without `incoming`). */
  usedAfter: number;
}

/**
 * What to evict so that the cached files and `incoming` more bytes stay within `budget`: files
 * not kept offline, least recently opened first, only as many as needed. Kept files are never
 * evicted; when even evicting every other file would not make room, nothing is evicted and
 * `fits` is false (the caller skips that download rather than empty the cache for nothing).
 */
export function planEviction(entries: readonly CacheEntry[], budget: number, incoming = 0): EvictionPlan {
  const used = entries.reduce((sum, e) => sum + e.size, 0);
  if (used + incoming <= budget) return { evict: [], fits: true, usedAfter: used };
  const candidates = entries
    .filter((e) => !e.kept)
    .sort((a, b) => (a.lastOpenedAt ?? -Infinity) - (b.lastOpenedAt ?? -Infinity) || (a.fileId < b.fileId ? -1 : 1));
  const evictable = candidates.reduce((sum, e) => sum + e.size, 0);
  if (used - evictable + incoming > budget) {
    // Room for the newcomer cannot be made; still bring the cache itself back within the budget.
    if (incoming > 0) {
      const within = planEviction(entries, budget, 0);
      return { ...within, fits: false };
    }
  }
  const evict: string[] = [];
  let after = used;
  for (const e of candidates) {
    if (after + incoming <= budget) break;
    evict.push(e.fileId);
    after -= e.size;
  }
  return { evict, fits: after + incoming <= budget, usedAfter: after };
}

/** Sums for the Device screen. */
export function summarise(entries: ReadonlyArray<{ size: number; received: number; complete: boolean; kept: boolean }>) {
  let keptFiles = 0;
  let keptBytes = 0;
  let otherFiles = 0;
  let otherBytes = 0;
  let partialFiles = 0;
  for (const e of entries) {
    if (!e.complete) {
      partialFiles++;
      continue;
    }
    if (e.kept) {
      keptFiles++;
      keptBytes += e.size;
    } else {
      otherFiles++;
      otherBytes += e.size;
    }
  }
  return { keptFiles, keptBytes, otherFiles, otherBytes, partialFiles };
}
