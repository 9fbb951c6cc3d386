// Pull: bring the server's state into the mirror in the background.
//
// With the change feed (feed.ts; the server's extension): between passes a pull is "what changed
// after my cursor" — one request when nothing did. A full listing happens once (and again only when
// the cursor has expired, 410): the head cursor is taken BEFORE it, so whatever changes while it
// runs comes afterwards from the feed. Without the feed: every pull is a full listing.
//
// A full listing pages through /v1/conversations, then /v1/files (limit=100, starting_after until
// has_more is false), the next page already on its way while the last is written (pager.ts). The
// pages that arrived meanwhile are written — server copies, visible rows (pending work rebased on
// top) and the advanced cursor — in ONE transaction, so an interrupted pass resumes where it
// stopped and never skips a page. Only rows whose server object changed are written; a pass that
// began on an empty mirror (`fresh`) skips that comparison.
//
// Sweep: the ids of a list are collected in memory while it is paged from its first page to its
// last without interruption; at its end, stored rows of that list not among them are gone from
// the server and are swept (in the last page's transaction), unless a pending operation still
// mentions them. A list resumed from a cursor (interrupted earlier) is not swept: the next
// complete listing does it.
//
// The file object does not say its conversation: the scan (scan.ts) learns it for files a listing
// left unplaced. The feed says it with every file event, so once the feed is followed, nothing
// needs scanning again.
import { ConversationPage, FilePage, type Conversation, type FileObject } from '../schemas';
import { PULL_KEY, type PullCursor } from './apply';
import { readPullState } from './pull-progress';
import type { ParleyDb } from './db';
import { FEED_KEY, followFeed, probeFeed, readFeed, RECHECK_PLAIN_MS, type FeedState } from './feed';
import { readHistory, type History } from './history';
import { TEMP_PREFIX } from './operations';
import { call, type HttpDeps, type Outcome } from './http';
import { Prefetch, runPipelined, type Failure } from './pager';
import { scanAllActive, scanUnplacedFiles } from './scan';
import { knownServerIds, pullTables, putConversations, putFiles, removeGone, storeContext } from './store';

export { unplacedFileIds } from './scan';
export { sameFields } from './store';

export const PAGE_LIMIT = 100;
/** A page of a listing (the schemas' ConversationPage and FilePage). */
type Listed<T> = { has_more: boolean; data: T[] };
/**
 * Pages of the files listing fetched ahead while the conversations are written (feed path): up
 * to 10,000 files held in memory, a few MB.
 */
export const FILES_PREFETCH_PAGES = 100;

export interface PullDeps extends HttpDeps {
  db: ParleyDb;
  now: () => number;
  /** Events per feed request (default: the server's maximum); tests use small pages. */
  feedPageLimit?: number;
  /** Per-conversation listings in flight during the scan. */
  scanConcurrency?: number;
}

/** The pull's cursor (meta `pull`), with what this module adds to apply.ts's shape. */
export interface PullState extends PullCursor {
  /** This pass began on an empty mirror: pages need no comparison with stored rows. */
  fresh?: boolean;
  /** Head of the change feed taken before this pass's listing: the feed cursor once it completes. */
  feedHead?: string | null;
  /** Rows written by this pass so far, for the progress line of a first sync. */
  progress?: PullProgress;
  /**
   * A first sync on a plain server: the active conversations' files are listed (placed) BEFORE the
   * files listing — 'before-files' while that runs, 'done' after it (see scanAllActive).
   */
  scanFirst?: 'before-files' | 'done';
}

export interface PullProgress {
  conversations: number;
  files: number;
  /** During the scan: files placed in their conversation so far, of `unplaced`. */
  placed?: number;
  unplaced?: number;
}

export type PullResult =
  /** `feed`: the server keeps a change feed and the mirror follows it (live updates make sense). */
  | { kind: 'done'; feed?: boolean }
  | Exclude<Outcome<unknown>, { kind: 'ok' }>;

// Read by the page as well (the first-sync progress line): kept in a module of their own.
export { readFirstSyncProgress, readPullState } from './pull-progress';

export async function pull(deps: PullDeps): Promise<PullResult> {
  const { db } = deps;
  // At most: follow the feed, find it expired, list everything, follow it again.
  for (let round = 0; round < 3; round++) {
    let state = await readPullState(db);
    if (state.phase === 'idle') {
      const feed = await readFeed(db);
      if (feed?.server === 'feed' && feed.cursor !== null) {
        const followed = await followFeed(deps, feed);
        if (followed.kind === 'done') return { kind: 'done', feed: true };
        if (followed.kind !== 'expired' && followed.kind !== 'gone') return followed;
        await db.meta.put({ key: FEED_KEY, value: followed.kind === 'gone' ? plainFeed(deps) : { ...feed, cursor: null } });
      }
      const started = await startPass(deps, state, await readFeed(db));
      if ('kind' in started) return started;
      state = started;
    }
    const listed = await runPass(deps, state);
    if (listed) return listed;
    const feed = await readFeed(db);
    if (feed?.server !== 'feed' || feed.cursor === null) return { kind: 'done', feed: false };
  }
  return { kind: 'done', feed: true };
}

function plainFeed(deps: PullDeps): FeedState {
  return { server: 'plain', checkedAt: deps.now(), cursor: null, held: { conversations: [], files: [] } };
}

/**
 * A new full listing. On a feed server (or one not asked for a while), the head is taken first:
 * everything after it comes from the feed once the listing is done.
 */
async function startPass(deps: PullDeps, previous: PullState, feed: FeedState | null): Promise<PullState | Failure> {
  const { db } = deps;
  let head: string | null = null;
  let nextFeed = feed;
  if (!feed || feed.server === 'feed' || deps.now() - feed.checkedAt >= RECHECK_PLAIN_MS) {
    const probe = await probeFeed(deps);
    if (probe.kind === 'feed') {
      head = probe.head;
      nextFeed = { server: 'feed', checkedAt: deps.now(), cursor: null, held: feed?.held ?? { conversations: [], files: [] } };
    } else if (probe.kind === 'plain') {
      nextFeed = plainFeed(deps);
    } else {
      return probe;
    }
  }
  const state: PullState = {
    passId: previous.passId + 1,
    phase: 'conversations',
    startingAfter: null,
    fresh: await mirrorIsFresh(db),
    feedHead: head,
    progress: { conversations: 0, files: 0 },
  };
  await db.transaction('rw', db.meta, async () => {
    await db.meta.put({ key: PULL_KEY, value: state });
    if (nextFeed) await db.meta.put({ key: FEED_KEY, value: nextFeed });
  });
  return state;
}

/**
 * Nothing from the server is stored yet (only the user's own creates, if any): the pass can write
 * without comparing. A row from the server is either a kept copy or a visible row with a real id.
 */
async function mirrorIsFresh(db: ParleyDb): Promise<boolean> {
  if ((await db.serverConversations.count()) + (await db.serverFiles.count()) > 0) return false;
  // Counts only (no row is read): every visible row is one of the user's creates (a temp id).
  for (const table of [db.conversations, db.files] as const) {
    if ((await table.count()) !== (await table.where(':id').startsWith(TEMP_PREFIX).count())) return false;
  }
  return true;
}

/** Runs (or resumes) a full listing to its end; null when it completed. */
async function runPass(deps: PullDeps, start: PullState): Promise<Failure | null> {
  // On a feed server, the feed's history (read while the conversations are listed) names each
  // file's conversation, so the files listing writes them placed: no scan, no second write. Once
  // every conversation page has been fetched (they are still being written), the files listing is
  // fetched ahead too, to be written in its turn: the server answers one request at a time, so
  // starting it earlier would only slow the conversations down.
  const listed = { conversations: start.progress?.conversations ?? 0, stopped: false };
  const ahead: Ahead = { history: null, files: null };
  if (start.feedHead && start.phase === 'conversations') {
    ahead.history = readHistory(deps, { maxPages: () => (listed.stopped ? 0 : 10 + Math.ceil(listed.conversations / 20)) });
  }
  const afterConversations = ahead.history
    ? () => {
        if (!ahead.files && !listed.stopped) ahead.files = prefetchFiles(deps);
      }
    : null;
  try {
    return await runPassWith(deps, start, ahead, listed, afterConversations);
  } finally {
    listed.stopped = true;
    ahead.files?.stop();
    await ahead.history;
  }
}

/** What a first sync on a feed server reads ahead of the files listing (runPass). */
interface Ahead {
  history: Promise<History> | null;
  files: Prefetch<Listed<FileObject>> | null;
}

function listFiles(deps: PullDeps, startingAfter: string | null) {
  return call(deps, { method: 'GET', path: 'v1/files', query: { limit: PAGE_LIMIT, starting_after: startingAfter ?? undefined } }, FilePage);
}

function prefetchFiles(deps: PullDeps): Prefetch<Listed<FileObject>> {
  return new Prefetch<Listed<FileObject>>(
    (after) => listFiles(deps, after),
    (page) => (page.has_more && page.data.length > 0 ? page.data.at(-1)!.id : null),
    FILES_PREFETCH_PAGES,
  );
}

async function runPassWith(
  deps: PullDeps,
  start: PullState,
  ahead: Ahead,
  listed: { conversations: number },
  afterConversations: (() => void) | null,
): Promise<Failure | null> {
  const { db } = deps;
  let state = start;
  let restarts = 0;
  for (;;) {
    if (state.phase === 'conversations' || state.phase === 'files') {
      const placement = state.phase === 'files' && ahead.history ? (await ahead.history).placement : null;
      const prefetched = state.phase === 'files' ? ahead.files : null;
      const onFetched = state.phase === 'conversations' ? (afterConversations ?? undefined) : undefined;
      const result = await listAll(deps, state, { placement, prefetched, onFetched, onRows: (n) => (listed.conversations += n) });
      if ('kind' in result) {
        // The item we resumed after was deleted meanwhile (400): restart this list within the pass.
        if (result.kind === 'refused' && result.status === 400 && restarts++ < 5) {
          state = { ...(await readPullState(db)), startingAfter: null };
          await db.meta.put({ key: PULL_KEY, value: state });
          continue;
        }
        return result;
      }
      state = result;
    } else if (state.phase === 'scan' && state.scanFirst === 'before-files') {
      const scanned = await scanAllActive(deps, state);
      if (scanned) return scanned;
      state = { ...(await readPullState(db)), phase: 'files', startingAfter: null, scanFirst: 'done' };
      await db.meta.put({ key: PULL_KEY, value: state });
    } else if (state.phase === 'scan') {
      // History already read in this call: what it did not place needs listing per conversation.
      const scanned = await scanUnplacedFiles(deps, state, { history: Boolean(state.feedHead) && !ahead.history });
      if (scanned) return scanned;
      await finishPass(deps);
      return null;
    } else {
      return null;
    }
  }
}

/** The pass is complete: idle again, and on a feed server, the head it started at becomes the cursor. */
async function finishPass(deps: PullDeps): Promise<void> {
  const { db } = deps;
  await db.transaction('rw', db.meta, async () => {
    const state = await readPullState(db);
    const { fresh: _fresh, feedHead, progress: _progress, ...cursor } = state;
    await db.meta.put({ key: PULL_KEY, value: { ...cursor, phase: 'idle', startingAfter: null } satisfies PullState });
    const feed = await readFeed(db);
    if (feed && feedHead) await db.meta.put({ key: FEED_KEY, value: { ...feed, server: 'feed', cursor: feedHead } satisfies FeedState });
  });
}

/**
 * Pages one list from its cursor to its end; returns the state after it (or the failure).
 * `placement`: files' conversations already known (from the feed's history).
 */
async function listAll(
  deps: PullDeps,
  start: PullState,
  options: {
    placement?: Map<string, string> | null;
    prefetched?: Prefetch<Listed<FileObject>> | null;
    onFetched?: () => void;
    onRows?: (count: number) => void;
  } = {},
): Promise<PullState | Failure> {
  const { placement } = options;
  const { db } = deps;
  const isConversations = start.phase === 'conversations';
  // A sweep is sound only if this call sees the list from its first page to its last.
  const seen: Set<string> | null = start.startingAfter === null ? new Set() : null;
  const request = (startingAfter: string | null) => async (): Promise<Outcome<Listed<Conversation> | Listed<FileObject>>> => {
    if (isConversations) {
      const query = { limit: PAGE_LIMIT, starting_after: startingAfter ?? undefined };
      return call(deps, { method: 'GET', path: 'v1/conversations', query }, ConversationPage);
    }
    // A page fetched ahead answers the same request (a failed one is asked again, now).
    return (await options.prefetched?.take(startingAfter)) ?? listFiles(deps, startingAfter);
  };
  type Page = { has_more: boolean; data: Array<Conversation | FileObject> };
  let state = start;
  const failure = await runPipelined<Page>(
    request(start.startingAfter),
    (page) => (page.has_more && page.data.length > 0 ? request(page.data.at(-1)!.id) : null),
    async (pages) => {
      const last = pages.at(-1)!;
      const lastItem = [...pages].reverse().find((p) => p.data.length > 0)?.data.at(-1);
      const ended = !last.has_more || last.data.length === 0;
      const rows = pages.flatMap((p) => p.data);
      for (const item of rows) seen?.add(item.id);
      const progress = { ...(state.progress ?? { conversations: 0, files: 0 }) };
      if (isConversations) progress.conversations += rows.length;
      else if (state.scanFirst !== 'done') progress.files += rows.length;
      // A fresh pass without the feed lists the active conversations' files next (scanFirst).
      const scanFirst = isConversations && state.fresh && !state.feedHead;
      const next: PullState = ended
        ? { ...state, phase: isConversations && !scanFirst ? 'files' : 'scan', startingAfter: null, progress, ...(scanFirst ? { scanFirst: 'before-files' as const } : {}) }
        : { ...state, startingAfter: lastItem?.id ?? state.startingAfter, progress };
      await db.transaction('rw', pullTables(db), async () => {
        const ctx = await storeContext(db, deps.now());
        // After scanFirst the files are stored already: compare, and write only what differs.
        const diff = !state.fresh || state.scanFirst === 'done';
        if (isConversations) await putConversations(ctx, rows as Conversation[], diff);
        else await putFiles(ctx, rows as FileObject[], placement ? (f) => placement.get(f.id) ?? null : null, diff);
        if (ended && seen) await sweep(db, isConversations ? 'conversations' : 'files', seen, deps.now());
        await db.meta.put({ key: PULL_KEY, value: next });
      });
      state = next;
      if (isConversations) options.onRows?.(rows.length);
    },
    // 500 to 2,000 rows a transaction; the conversations are fetched as far ahead as 10,000 rows,
    // so the server is done with them early and moves on to the files (runPass).
    { ahead: isConversations ? 100 : 20, minBatch: 5, maxBatch: 20, onFetched: options.onFetched },
  );
  return failure ?? state;
}

/** Remove what a complete listing (`seen`) did not contain, except what pending work still needs. */
async function sweep(db: ParleyDb, list: 'conversations' | 'files', seen: Set<string>, nowMs: number) {
  const missing = (await knownServerIds(db, list)).filter((id) => !seen.has(id));
  if (missing.length === 0) return;
  const ctx = await storeContext(db, nowMs);
  const kept = await removeGone(ctx, list === 'conversations' ? { conversations: missing } : { files: missing });
  // Kept for pending work: on a feed server no later listing will sweep them, so the feed holds them.
  const feed = await readFeed(db);
  if (feed && kept.conversations.length + kept.files.length > 0) {
    const held = {
      conversations: [...new Set([...feed.held.conversations, ...kept.conversations])],
      files: [...new Set([...feed.held.files, ...kept.files])],
    };
    await db.meta.put({ key: FEED_KEY, value: { ...feed, held } satisfies FeedState });
  }
}

// ---- Kept for callers of the earlier API (each opens no transaction: call inside one). ----

/** Writes the conversations whose server copy changed; returns their ids. */
export async function storeConversations(db: ParleyDb, page: Conversation[], nowMs: number): Promise<string[]> {
  return putConversations(await storeContext(db, nowMs), page, true);
}

/** Writes the files whose server copy (or known conversation) changed; `conversationId` null = not known here. */
export async function storeFiles(db: ParleyDb, page: FileObject[], conversationId: string | null, nowMs: number): Promise<string[]> {
  return putFiles(await storeContext(db, nowMs), page, conversationId, true);
}

