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
import { ConversationPage, FilePage, type Conversation, type FileObject } from '../../objects';
import { PULL_KEY, readPullState, type PullProgress, type PullState } from './state';
import type { ParleyDb } from '../mirror/db';
import { setMeta } from '../mirror/meta';
import { FEED_KEY, followFeed, probeFeed, readFeed, RECHECK_PLAIN_MS, type FeedState } from './feed';
import { readHistory, type History } from './history';
import { call, type Outcome } from '../core/http';
import { Prefetch, runPipelined, type Failure } from './pager';
import { scanAllActive, scanUnplacedFiles } from './scan';
import type { PullDeps } from './deps';
import { putConversations, putFiles, removeGone, storeContext, type StoreContext } from '../mirror/store';
import { holdsNoServerWord, knownServerIds } from '../mirror/server-word';
import { pullScope } from '../mirror/scopes';

export { unplacedFileIds } from '../mirror/server-word';
export { sameFields } from '../mirror/store';

export const PAGE_LIMIT = 100;
/** A page of a listing (the schemas' ConversationPage and FilePage). */
type Listed<T> = { has_more: boolean; data: T[] };
/**
 * Pages of the files listing fetched ahead while the conversations are written (feed path): up
 * to 10,000 files held in memory, a few MB.
 */
export const FILES_PREFETCH_PAGES = 100;

export type { PullDeps } from './deps';

export type PullResult =
  /** `feed`: the server keeps a change feed and the mirror follows it (live updates make sense). */
  | { kind: 'done'; feed?: boolean }
  | Exclude<Outcome<unknown>, { kind: 'ok' }>;

// Read by the page as well (the first-sync progress line): kept in a module of their own.
export { readFirstSyncProgress, readPullState } from './state';
export type { PullProgress, PullState } from './state';

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
        await setMeta(db, FEED_KEY, followed.kind === 'gone' ? plainFeed(deps) : { ...feed, cursor: null });
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
    fresh: await holdsNoServerWord(db),
    feedHead: head,
    progress: { conversations: 0, files: 0 },
  };
  await db.transaction('rw', db.meta, async () => {
    await setMeta(db, PULL_KEY, state);
    if (nextFeed) await setMeta(db, FEED_KEY, nextFeed);
  });
  return state;
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
          await setMeta(db, PULL_KEY, state);
          continue;
        }
        return result;
      }
      state = result;
    } else if (state.phase === 'scan' && state.scanFirst === 'before-files') {
      const scanned = await scanAllActive(deps, state);
      if (scanned) return scanned;
      state = { ...(await readPullState(db)), phase: 'files', startingAfter: null, scanFirst: 'done' };
      await setMeta(db, PULL_KEY, state);
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
    await setMeta(db, PULL_KEY, { ...cursor, phase: 'idle', startingAfter: null } satisfies PullState);
    const feed = await readFeed(db);
    if (feed && feedHead) await setMeta(db, FEED_KEY, { ...feed, server: 'feed', cursor: feedHead } satisfies FeedState);
  });
}

interface ListOptions {
  /** Files' conversations already known (from the feed's history). */
  placement?: Map<string, string> | null;
  prefetched?: Prefetch<Listed<FileObject>> | null;
  onFetched?: () => void;
  onRows?: (count: number) => void;
}

type Row = Conversation | FileObject;
type Page = Listed<Row>;

/** How the two lists of a pass differ; everything else about paging them is the same (listAll). */
interface ListKind {
  name: 'conversations' | 'files';
  fetch(deps: PullDeps, startingAfter: string | null, options: ListOptions): Promise<Outcome<Page>>;
  /** Rows this list adds to the first sync's progress. */
  counted(state: PullState, rows: number): Partial<PullProgress>;
  /** Where the pass goes once this list has ended. */
  after(state: PullState): Pick<PullState, 'phase'> & Partial<Pick<PullState, 'scanFirst'>>;
  store(ctx: StoreContext, rows: Row[], diff: boolean, options: ListOptions): Promise<unknown>;
  /** Pages fetched ahead of the writes. */
  ahead: number;
}

const LISTS: Record<'conversations' | 'files', ListKind> = {
  conversations: {
    name: 'conversations',
    fetch: (deps, startingAfter) =>
      call(deps, { method: 'GET', path: 'v1/conversations', query: { limit: PAGE_LIMIT, starting_after: startingAfter ?? undefined } }, ConversationPage),
    counted: (state, rows) => ({ conversations: (state.progress?.conversations ?? 0) + rows }),
    // A fresh pass without the feed lists the active conversations' files next (scanFirst).
    after: (state) => (state.fresh && !state.feedHead ? { phase: 'scan', scanFirst: 'before-files' } : { phase: 'files' }),
    store: (ctx, rows, diff) => putConversations(ctx, rows as Conversation[], diff),
    // Fetched as far ahead as 10,000 rows, so the server is done with them early and moves on to
    // the files (runPass).
    ahead: 100,
  },
  files: {
    name: 'files',
    // A page fetched ahead answers the same request (a failed one is asked again, now).
    fetch: async (deps, startingAfter, options) => (await options.prefetched?.take(startingAfter)) ?? listFiles(deps, startingAfter),
    counted: (state, rows) => (state.scanFirst !== 'done' ? { files: (state.progress?.files ?? 0) + rows } : {}),
    after: () => ({ phase: 'scan' }),
    store: (ctx, rows, diff, { placement }) => putFiles(ctx, rows as FileObject[], placement ? (f) => placement.get(f.id) ?? null : null, diff),
    ahead: 20,
  },
};

/** Pages one list from its cursor to its end; returns the state after it (or the failure). */
async function listAll(deps: PullDeps, start: PullState, options: ListOptions = {}): Promise<PullState | Failure> {
  const { db } = deps;
  const kind = LISTS[start.phase === 'conversations' ? 'conversations' : 'files'];
  // A sweep is sound only if this call sees the list from its first page to its last.
  const seen: Set<string> | null = start.startingAfter === null ? new Set() : null;
  const request = (startingAfter: string | null) => () => kind.fetch(deps, startingAfter, options);
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
      const progress = { ...(state.progress ?? { conversations: 0, files: 0 }), ...kind.counted(state, rows.length) };
      const next: PullState = ended
        ? { ...state, ...kind.after(state), startingAfter: null, progress }
        : { ...state, startingAfter: lastItem?.id ?? state.startingAfter, progress };
      await db.transaction('rw', pullScope(db), async () => {
        const ctx = await storeContext(db, deps.now());
        // After scanFirst the files are stored already: compare, and write only what differs.
        await kind.store(ctx, rows, !state.fresh || state.scanFirst === 'done', options);
        if (ended && seen) await sweep(db, kind.name, seen, deps.now());
        await setMeta(db, PULL_KEY, next);
      });
      state = next;
      if (kind.name === 'conversations') options.onRows?.(rows.length);
    },
    // 500 to 2,000 rows a transaction.
    { ahead: kind.ahead, minBatch: 5, maxBatch: 20, onFetched: options.onFetched },
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
    await setMeta(db, FEED_KEY, { ...feed, held } satisfies FeedState);
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

