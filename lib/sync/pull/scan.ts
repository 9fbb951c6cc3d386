// The scan: learning each file's conversation where a listing could not say it. The file object
// does not name its conversation, so the scan lists files per conversation
// (GET /v1/files?conversation_id=) — only while some file's conversation is unknown, conversations
// whose last_active_at moved since their last complete listing (an upload raises it) first, and
// stopping as soon as every file is placed. A file whose conversation is known is never asked
// about again. The set of unplaced files is read once per scan (keys only) and shrunk in memory as
// listings place files.
//
// Cost: a few listings are in flight at once (SCAN_CONCURRENCY), and the finished ones are written
// together — files, scan records and progress — in one transaction per SCAN_BATCH listings, not one
// per conversation (a transaction's fixed cost would otherwise make IndexedDB the bottleneck).
import { FilePage, type Conversation, type FileObject } from '../../objects';
import type { ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import { call } from '../core/http';
import { readHistory } from './history';
import { runConcurrently, type Failure } from './pager';
import type { PullDeps } from './deps';
import { PULL_KEY, type PullProgress, type PullState } from './state';
import { putFiles, storeContext } from '../mirror/store';
import { serverConversationRows, serverFileRows, unplacedFileIds } from '../mirror/server-word';
import { pullScope } from '../mirror/scopes';

export const SCAN_CONCURRENCY = 4;
export const SCAN_BATCH = 50;
const PAGE_LIMIT = 100;

interface Listing {
  conversation: Conversation;
  files: FileObject[];
  /** Listed to its end: the conversation need not be listed again until its last_active_at moves. */
  complete: boolean;
}

/**
 * Learns the conversation of every file that has none yet; null when done. `history`: the server
 * keeps a change feed, whose file events name the file's conversation — read from its start first.
 */
export async function scanUnplacedFiles(deps: PullDeps, state: PullState, options: { history?: boolean } = {}): Promise<Failure | null> {
  const { db } = deps;
  const unplaced = await unplacedFileIds(db);
  if (unplaced.size === 0) return null;
  const total = unplaced.size;

  const conversations = (await serverConversationRows(db)).sort(
    (a, b) => (b.last_active_at ?? 0) - (a.last_active_at ?? 0),
  );
  const scans = new Map((await db.fileScans.toArray()).map((s) => [s.conversationId, s]));
  // last_active_at null: nothing ever happened in it, so it holds no file.
  const moved = conversations.filter((c) => c.last_active_at !== null && scans.get(c.id)?.lastActiveAt !== c.last_active_at);
  const movedIds = new Set(moved.map((c) => c.id));
  // Fallback, once per pass: an upload in the same second as a listing leaves last_active_at
  // unchanged, so if files remain unplaced, list the rest too.
  const rest = conversations.filter((c) => !movedIds.has(c.id) && scans.get(c.id)?.passId !== state.passId);

  if (options.history && moved.length > 0) {
    // One page of history places up to 1,000 files but costs the server about what ten listings
    // do: worth reading while it is cheaper than the listings it can save.
    const budget = Math.max(5, Math.ceil(moved.length / 10));
    const failure = await placeFromHistory(deps, state, unplaced, total, budget);
    if (failure) return failure;
  }
  // The fallback only if the moved ones did not place everything (listings run a few at a time,
  // so within one group a few more may be listed than strictly needed).
  for (const group of [moved, rest]) {
    if (unplaced.size === 0) break;
    const failure = await runConcurrently<Conversation, Listing>(
      group,
      async (conversation) => {
        const out = await listConversationFiles(deps, conversation);
        for (const file of out.result?.files ?? []) unplaced.delete(file.id);
        return out;
      },
      (listings) => storeListings(deps, state, listings, { placed: total - unplaced.size, unplaced: total }),
      {
        concurrency: deps.scanConcurrency ?? SCAN_CONCURRENCY,
        batchSize: SCAN_BATCH,
        shouldContinue: () => unplaced.size > 0,
      },
    );
    if (failure) return failure;
  }
  return null;
}

/**
 * A first sync without the feed lists each active conversation's files BEFORE the global files
 * listing: every file is then written once, already placed (the listing that follows finds them
 * stored and unchanged, and only catches what the scan could not see). Conversations already
 * listed in this pass (an interrupted one) are skipped.
 */
export async function scanAllActive(deps: PullDeps, state: PullState): Promise<Failure | null> {
  const { db } = deps;
  const done = new Set((await db.fileScans.toArray()).filter((s) => s.passId === state.passId).map((s) => s.conversationId));
  const active = (await serverConversationRows(db)).filter((c) => c.last_active_at !== null && !done.has(c.id));
  let files = state.progress?.files ?? 0;
  return runConcurrently<Conversation, Listing>(
    active,
    (conversation) => listConversationFiles(deps, conversation),
    (listings) => {
      files += listings.reduce((sum, l) => sum + l.files.length, 0);
      return storeListings(deps, state, listings, { files });
    },
    { concurrency: deps.scanConcurrency ?? SCAN_CONCURRENCY, batchSize: SCAN_BATCH },
  );
}

/** Lists one conversation's files completely (or as far as it got, with the failure that stopped it). */
async function listConversationFiles(deps: PullDeps, conversation: Conversation): Promise<{ result: Listing | null; failure: Failure | null }> {
  const files: FileObject[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const out = await call(
      deps,
      { method: 'GET', path: 'v1/files', query: { conversation_id: conversation.id, limit: PAGE_LIMIT, starting_after: startingAfter } },
      FilePage,
    );
    // Deleted since we listed conversations (404), or its list changed under us (400): skip it.
    if (out.kind === 'refused' && (out.status === 404 || out.status === 400)) {
      return { result: files.length > 0 ? { conversation, files, complete: false } : null, failure: null };
    }
    // Keep what was learned so far; the conversation is listed again next time.
    if (out.kind !== 'ok') return { result: files.length > 0 ? { conversation, files, complete: false } : null, failure: out };
    files.push(...out.value.data);
    if (!out.value.has_more || out.value.data.length === 0) return { result: { conversation, files, complete: true }, failure: null };
    startingAfter = out.value.data.at(-1)!.id;
  }
}

async function storeListings(deps: PullDeps, state: PullState, listings: Listing[], progress: Partial<PullProgress>) {
  const { db } = deps;
  await db.transaction('rw', pullScope(db), async () => {
    const ctx = await storeContext(db, deps.now());
    const placement = new Map<string, string>();
    const files: FileObject[] = [];
    for (const listing of listings) {
      for (const file of listing.files) {
        placement.set(file.id, listing.conversation.id);
        files.push(file);
      }
    }
    // On a fresh mirror every listed file is new here or unplaced: nothing to compare.
    await putFiles(ctx, files, (f) => placement.get(f.id) ?? null, !state.fresh);
    const complete = listings.filter((l) => l.complete);
    if (complete.length > 0) {
      await db.fileScans.bulkPut(
        complete.map((l) => ({ conversationId: l.conversation.id, lastActiveAt: l.conversation.last_active_at, passId: state.passId })),
      );
    }
    await recordProgress(db, state, progress);
  });
}

/** Places unplaced files from the change feed's history (history.ts); the scan does the rest. */
async function placeFromHistory(deps: PullDeps, state: PullState, unplaced: Set<string>, total: number, budgetPages: number): Promise<Failure | null> {
  const { db } = deps;
  await readHistory(deps, {
    maxPages: () => budgetPages,
    wanted: (id) => unplaced.has(id),
    enough: () => unplaced.size === 0,
    onPlacements: (found) =>
      db.transaction('rw', pullScope(db), async () => {
        const stored = (await serverFileRows(db, [...found.keys()])).filter((f) => f !== undefined);
        const files: FileObject[] = stored.map(({ conversationId: _unknown, ...file }) => file);
        await putFiles(await storeContext(db, deps.now()), files, (f) => found.get(f.id) ?? null, true);
        for (const file of files) unplaced.delete(file.id);
        await recordProgress(db, state, { placed: total - unplaced.size, unplaced: total });
      }),
  });
  return null;
}

async function recordProgress(db: ParleyDb, state: PullState, progress: Partial<PullProgress>) {
  const current = await getMeta(db, PULL_KEY);
  if (current && current.passId === state.passId) {
    await setMeta(db, PULL_KEY, { ...current, progress: { ...(current.progress ?? { conversations: 0, files: 0 }), ...progress } });
  }
}
