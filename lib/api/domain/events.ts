// The change feed (an extension, GET /v1/events): what changed for a user after a cursor, oldest
// first. Events are rows written by database triggers in the same transaction as the change (see
// migration 0003_events); this module reads them and renders each with the object as it is now.
//
// Inside, a cursor is the `seq` of the last event a client has seen; outside, it is opaque and only
// valid for the user it was issued to (cursors.ts). Every check a cursor goes through depends on
// that user's own events, never on anyone else's writes:
// - events older than the retention are purged; the highest purged seq OF EACH USER is remembered
//   (settings `events_purged_through:<user>`), so that user's cursor below it (some of their events
//   after it may be gone) answers 410 events_expired and the client relists;
// - a cursor above the user's own head (one this database never issued them, say from before a
//   restore) answers 410 too; this costs a query only when a page comes back empty.
// The single `events_purged_through` of earlier versions is still honoured, frozen (never written
// again): a floor that moved with everyone's purged events would tell about everyone's writes.
import type { ChangeEvent, ChangeEventType, Conversation, EventPage, FileObject } from '../../schemas';
import type { Db } from '../storage/db';
import { prepare } from '../storage/prepared';
import { toConversation } from './conversations';
import { eventsExpired, type CursorCodec } from './cursors';
import type { Files, StoredFile } from './files';
import { nowSeconds } from './ids';

export { eventsExpired };

export const DEFAULT_EVENTS_LIMIT = 100;
const LEGACY_PURGED_THROUGH = 'events_purged_through';
const purgedThroughKey = (user: string) => `events_purged_through:${user}`;

interface EventRow {
  seq: number;
  type: ChangeEventType;
  object_id: string;
  conversation_id: string | null;
  created_at: number;
}

/**
 * One page read from the feed, not yet rendered: the events kept (the last of each object in the
 * page) and the objects they render with. Rendering (`ChangeFeed.render`) is per asset base and
 * per reader position, so that one read can serve every live stream of a user.
 */
export interface FeedRead {
  user: string;
  /** The cursor (seq) the page was read after. */
  after: number;
  /** The cursor after this page. */
  next: number;
  hasMore: boolean;
  rows: EventRow[];
  conversations: Map<string, Conversation>;
  files: Map<string, StoredFile>;
}

export class ChangeFeed {
  private readonly userEvents;
  private readonly userHead;
  private readonly floors;

  constructor(
    private readonly db: Db,
    private readonly files: Files,
    readonly cursors: CursorCodec,
  ) {
    this.userEvents = prepare<{ user: string; after: number; limit: number }, EventRow>(db, (slot) =>
      db
        .selectFrom('events')
        .select(['seq', 'type', 'object_id', 'conversation_id', 'created_at'])
        .where('user_id', '=', slot('user'))
        .where('seq', '>', slot('after'))
        .orderBy('seq')
        .limit(slot('limit')),
    );
    this.userHead = prepare<{ user: string }, { head: number | null }>(db, (slot) =>
      db.selectFrom('events').select((eb) => eb.fn.max('seq').as('head')).where('user_id', '=', slot('user')),
    );
    this.floors = prepare<{ legacy: string; mine: string }, { value: string }>(db, (slot) =>
      db.selectFrom('settings').select('value').where('key', 'in', [slot('legacy'), slot('mine')]),
    );
  }

  /** The user's cursor (opaque) → seq; 400 or 410 as cursors.ts says. */
  decode(user: string, cursor: string, param = 'after'): number {
    return this.cursors.decode(user, cursor, param);
  }

  encode(user: string, seq: number): string {
    return this.cursors.encode(user, seq);
  }

  /** The highest seq of this user's purged events (0: none). */
  private async floor(user: string): Promise<number> {
    const rows = await this.floors(this.db, { legacy: LEGACY_PURGED_THROUGH, mine: purgedThroughKey(user) });
    let floor = 0;
    for (const row of rows) floor = Math.max(floor, Number(row.value));
    return floor;
  }

  /** The cursor (seq) to follow the feed from after a full listing: nothing at or before it is news. */
  async head(user: string, floor?: number): Promise<number> {
    const [row] = await this.userHead(this.db, { user });
    return Math.max(Number(row?.head ?? 0), floor ?? (await this.floor(user)));
  }

  /** Refuses a cursor whose following events may be gone, or that this database never issued to this user. */
  async check(user: string, after: number): Promise<void> {
    const floor = await this.floor(user);
    if (after < floor || after > (await this.head(user, floor))) throw eventsExpired();
  }

  /**
   * Events after `after`, oldest first, not rendered yet. Several events of one object in a page
   * collapse into its last one (the object is rendered as it is now anyway); an object created or
   * updated and since deleted is left out when rendered (its deletion follows in the feed).
   * Refuses (410) a cursor some of whose following events were purged.
   */
  async read(user: string, after: number, limit: number): Promise<FeedRead> {
    if (after < (await this.floor(user))) throw eventsExpired();
    const rows = await this.userEvents(this.db, { user, after, limit: limit + 1 });
    const hasMore = rows.length > limit;
    const taken = hasMore ? rows.slice(0, limit) : rows;
    const next = taken.length > 0 ? taken[taken.length - 1].seq : after;
    const last = new Map<string, EventRow>();
    for (const row of taken) last.set(row.object_id, row);
    const live = [...last.values()];
    const conversations = await this.conversationsById(user, live.filter((e) => e.type.startsWith('conversation.') && !e.type.endsWith('.deleted')));
    const files = await this.filesById(user, live.filter((e) => e.type.startsWith('file.') && !e.type.endsWith('.deleted')));
    const kept = taken.filter((row) => last.get(row.object_id) === row);
    return { user, after, next: Number(next), hasMore, rows: kept, conversations, files };
  }

  /** A read as the feed's events, for a reader at `since` (default: where the read started): only events after it. */
  render(read: FeedRead, assetBase: string, since = read.after): ChangeEvent[] {
    const data: ChangeEvent[] = [];
    for (const row of read.rows) {
      if (Number(row.seq) <= since) continue;
      const event = this.render1(read.user, row, read.conversations, read.files, assetBase);
      if (event) data.push(event);
    }
    return data;
  }

  /** GET /v1/events: a page after a cursor, checked. */
  async page(user: string, after: number, limit: number, assetBase: string): Promise<EventPage> {
    const read = await this.read(user, after, limit);
    // An empty page is where a cursor this database never issued would go unnoticed.
    if (read.rows.length === 0 && read.next === after && after > (await this.head(user))) throw eventsExpired();
    return { data: this.render(read, assetBase), has_more: read.hasMore, next: this.encode(user, read.next) };
  }

  private render1(
    user: string,
    row: EventRow,
    conversations: Map<string, Conversation>,
    files: Map<string, StoredFile>,
    assetBase: string,
  ): ChangeEvent | null {
    const base = { id: this.encode(user, Number(row.seq)), created_at: Number(row.created_at) };
    const type = row.type;
    switch (type) {
      case 'conversation.created':
      case 'conversation.updated': {
        const object = conversations.get(row.object_id);
        return object ? { ...base, type, object } : null;
      }
      case 'conversation.deleted':
        return { ...base, type, object: { id: row.object_id } };
      case 'file.created':
      case 'file.updated': {
        const file = files.get(row.object_id);
        if (!file) return null;
        const object: FileObject = this.files.toFile(file, assetBase);
        return { ...base, type, object, conversation_id: file.conversation_id };
      }
      case 'file.deleted':
        return { ...base, type, object: { id: row.object_id }, conversation_id: row.conversation_id! };
    }
  }

  private async conversationsById(user: string, events: EventRow[]): Promise<Map<string, Conversation>> {
    const out = new Map<string, Conversation>();
    for (const ids of chunks(events.map((e) => e.object_id), 500)) {
      const rows = await this.db.selectFrom('conversations').selectAll().where('user_id', '=', user).where('id', 'in', ids).execute();
      for (const row of rows) out.set(row.id, toConversation(row));
    }
    return out;
  }

  private async filesById(user: string, events: EventRow[]): Promise<Map<string, StoredFile>> {
    const out = new Map<string, StoredFile>();
    for (const ids of chunks(events.map((e) => e.object_id), 500)) {
      const rows = await this.db.selectFrom('files').selectAll().where('user_id', '=', user).where('id', 'in', ids).execute();
      for (const row of rows) out.set(row.id, row);
    }
    return out;
  }

  /**
   * Drops events older than the retention; remembers, for each user, how far their events went, so
   * that user's older cursors answer 410 (and nobody else's change).
   */
  async purgeExpired(retentionSeconds: number): Promise<number> {
    const cutoff = nowSeconds() - retentionSeconds;
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('events').select((eb) => eb.fn.max('seq').as('upto')).where('created_at', '<', cutoff).executeTakeFirst();
      const upto = row?.upto === null || row?.upto === undefined ? null : Number(row.upto);
      if (upto === null) return 0;
      const perUser = await trx
        .selectFrom('events')
        .select((eb) => ['user_id', eb.fn.max('seq').as('upto')])
        .where('seq', '<=', upto)
        .groupBy('user_id')
        .execute();
      const deleted = await trx.deleteFrom('events').where('seq', '<=', upto).executeTakeFirst();
      const values = perUser.map((r) => ({ key: purgedThroughKey(r.user_id), value: String(Number(r.upto)) }));
      for (const batch of chunks(values, 500)) {
        await trx
          .insertInto('settings')
          .values(batch)
          .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
          .execute();
      }
      return Number(deleted.numDeletedRows);
    });
  }
}

function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
