// The change feed (an extension: GET /v1/events), when the server offers it. After one full
// listing that started at a head cursor, a pull is "what changed after my cursor": one request when
// nothing did. Each page of events is applied — upserts carry the object as it is now, deletions
// are tombstones, file events say the file's conversation — and the cursor advances IN THE SAME
// TRANSACTION as the page it came with: saved apart, the cursor could get ahead of rows a crash
// then never writes (RxDB lost records that way, #5571; ../shared/LOCAL-FIRST.md).
//
// The live stream (engine/live.ts) carries the same events: `applyStreamed` applies a run of them
// exactly as a page, but only when they are the ones right after the stored cursor (checked in the
// transaction that writes them); otherwise nothing is written and the feed catches up.
//
// What the server offers is remembered per database (meta `feed`): a plain server (404) is asked
// again only after RECHECK_PLAIN_MS; a feed server that starts answering 404 is plain from then on.
import { EventPage, type ChangeEvent, type Conversation, type FileObject } from '../../objects';
import type { ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import { call, type HttpDeps } from '../core/http';
import { runPipelined, type Failure } from './pager';
import { putConversations, putFiles, removeGone, storeContext } from '../mirror/store';
import { pullScope } from '../mirror/scopes';

export const FEED_KEY = 'feed';

declare module '../mirror/meta' {
  interface MetaValues {
    feed: FeedState;
  }
}
/** Events per request (the server's maximum): a busy hour is a few requests. */
export const FEED_PAGE_LIMIT = 1000;
/** How long "this server has no feed" is believed before asking again. */
export const RECHECK_PLAIN_MS = 60 * 60_000;

export interface FeedState {
  /** What the server offered when last asked. */
  server: 'feed' | 'plain';
  /** When that was (ms). */
  checkedAt: number;
  /** Changes after this cursor are news; null until a full listing started at a head has completed. */
  cursor: string | null;
  /**
   * Deleted on the server while pending work still mentioned them: their server copy is kept (so
   * the user's change stays visible until the server answers it) and dropped once nothing pending
   * mentions them any more.
   */
  held: { conversations: string[]; files: string[] };
}

export async function readFeed(db: ParleyDb): Promise<FeedState | null> {
  return (await getMeta(db, FEED_KEY)) ?? null;
}

export interface FeedDeps extends HttpDeps {
  db: ParleyDb;
  now: () => number;
  /** Events per request; tests use small pages. */
  feedPageLimit?: number;
}

export type ProbeResult = { kind: 'feed'; head: string } | { kind: 'plain' } | Failure;

/**
 * Does the server keep a change feed? `GET /v1/events?limit=0` answers the head cursor where it
 * does; 404 (an unknown route) or 400 (a server that knows no such query) means it does not.
 */
export async function probeFeed(deps: FeedDeps): Promise<ProbeResult> {
  const out = await call(deps, { method: 'GET', path: 'v1/events', query: { limit: 0 } }, EventPage);
  if (out.kind === 'ok') return { kind: 'feed', head: out.value.next };
  if (out.kind === 'refused' && (out.status === 404 || out.status === 400 || out.status === 405)) return { kind: 'plain' };
  return out;
}

export type FollowResult =
  | { kind: 'done'; events: number }
  /** 410 events_expired: list everything again and take a fresh head. */
  | { kind: 'expired' }
  /** The feed is gone (404): the server is plain now. */
  | { kind: 'gone' }
  | Failure;

/** Applies every event after the stored cursor, page by page, each with its cursor. */
export async function followFeed(deps: FeedDeps, start: FeedState): Promise<FollowResult> {
  if (start.cursor === null) throw new Error('followFeed needs a cursor');
  const limit = deps.feedPageLimit ?? FEED_PAGE_LIMIT;
  const request = (after: string) => () => call(deps, { method: 'GET', path: 'v1/events', query: { after, limit } }, EventPage);
  let events = 0;
  let state = start;
  const failure = await runPipelined<EventPage>(
    request(start.cursor),
    (page) => (page.has_more && page.data.length > 0 ? request(page.next) : null),
    async (pages) => {
      const next = pages.at(-1)!.next;
      const data = pages.flatMap((p) => p.data);
      if (data.length === 0 && next === state.cursor && state.held.conversations.length + state.held.files.length === 0) return;
      state = (await applyEvents(deps, data, next, (stored) => stored ?? state)) ?? state;
      events += data.length;
    },
  );
  if (!failure) return { kind: 'done', events };
  if (failure.kind === 'refused' && failure.status === 410) return { kind: 'expired' };
  if (failure.kind === 'refused' && failure.status === 404) return { kind: 'gone' };
  return failure;
}

interface Changes {
  conversations: Map<string, Conversation>;
  files: Map<string, { file: FileObject; conversationId: string }>;
  deletedConversations: Set<string>;
  deletedFiles: Set<string>;
}

/** Later events of one object replace earlier ones (each carries the object as it is now). */
export function collectChanges(events: readonly ChangeEvent[]): Changes {
  const changes: Changes = { conversations: new Map(), files: new Map(), deletedConversations: new Set(), deletedFiles: new Set() };
  for (const event of events) {
    switch (event.type) {
      case 'conversation.created':
      case 'conversation.updated':
        changes.deletedConversations.delete(event.object.id);
        changes.conversations.set(event.object.id, event.object);
        break;
      case 'conversation.deleted':
        changes.conversations.delete(event.object.id);
        changes.deletedConversations.add(event.object.id);
        break;
      case 'file.created':
      case 'file.updated':
        changes.deletedFiles.delete(event.object.id);
        changes.files.set(event.object.id, { file: event.object, conversationId: event.conversation_id });
        break;
      case 'file.deleted':
        changes.files.delete(event.object.id);
        changes.deletedFiles.add(event.object.id);
        break;
    }
  }
  return changes;
}

/**
 * Events the live stream carried, in its order, the first one right after `after` (the stream's
 * own word: the position it resumed from, or the event before them on the same connection). They
 * are applied — with the last one's id as the cursor, in one transaction — only if `after` is the
 * stored cursor: then they are exactly what the feed would answer next. Any other cursor (the feed
 * already went further, or the stream is ahead of what was applied), a listing under way (no
 * cursor) or a plain server: nothing is written, and false says the feed must catch up.
 */
export async function applyStreamed(deps: Pick<FeedDeps, 'db' | 'now'>, after: string, events: readonly ChangeEvent[]): Promise<boolean> {
  if (events.length === 0) return false;
  const follows = (stored: FeedState | null) => (stored?.server === 'feed' && stored.cursor === after ? stored : null);
  return (await applyEvents(deps, events, events.at(-1)!.id, follows)) !== null;
}

/**
 * One transaction: the events' effects, held tombstones released, and the new cursor. `follows`
 * reads the stored state (in the transaction) and says which one the events follow; null: they do
 * not, nothing is written.
 */
async function applyEvents(
  deps: Pick<FeedDeps, 'db' | 'now'>,
  events: readonly ChangeEvent[],
  next: string,
  follows: (stored: FeedState | null) => FeedState | null,
): Promise<FeedState | null> {
  const { db } = deps;
  const changes = collectChanges(events);
  return db.transaction('rw', pullScope(db), async () => {
    const latest = follows(await readFeed(db));
    if (!latest) return null;
    const ctx = await storeContext(db, deps.now());
    if (changes.conversations.size > 0) await putConversations(ctx, [...changes.conversations.values()], true);
    if (changes.files.size > 0) {
      const files = [...changes.files.values()];
      await putFiles(ctx, files.map((f) => f.file), (f) => changes.files.get(f.id)!.conversationId, true);
    }
    // Held tombstones go once their pending work has been settled (answered or discarded);
    // removeGone keeps (and returns) whatever pending work still mentions.
    const kept = await removeGone(ctx, {
      conversations: [...latest.held.conversations, ...changes.deletedConversations],
      files: [...latest.held.files, ...changes.deletedFiles],
    });
    const updated: FeedState = { ...latest, cursor: next, held: { conversations: unique(kept.conversations), files: unique(kept.files) } };
    await setMeta(db, FEED_KEY, updated);
    return updated;
  });
}

const unique = (ids: string[]) => [...new Set(ids)];
