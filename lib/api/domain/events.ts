// The change feed (an extension, GET /v1/events): what changed for a user after a cursor, oldest
// first. Events are rows written by database triggers in the same transaction as the change (see
// migration 0003_events); this module reads them and renders each with the object as it is now.
//
// A cursor is the decimal `seq` of the last event a client has seen. Events older than the
// retention are purged; `events_purged_through` remembers the highest purged seq, so a cursor at
// or below it (events after it may be gone) answers 410 events_expired and the client relists.
import type { ChangeEvent, ChangeEventType, Conversation, EventPage, FileObject } from '../../schemas';
import { ApiError, invalid, unknownParam } from '../errors';
import type { Db } from '../storage/db';
import { prepare } from '../storage/prepared';
import { toConversation } from './conversations';
import type { Files, StoredFile } from './files';
import { nowSeconds } from './ids';

export const DEFAULT_EVENTS_LIMIT = 100;
export const MAX_EVENTS_LIMIT = 1000;
const PURGED_THROUGH = 'events_purged_through';

interface EventRow {
  seq: number;
  type: string;
  object_id: string;
  conversation_id: string | null;
  created_at: number;
}

export const eventsExpired = () =>
  new ApiError(
    'events_expired',
    'This cursor is older than the change feed keeps (or from another database): list everything again, then follow the feed from GET /v1/events?limit=0',
    'after',
  );

/** `after` and `limit` from a query; `after` null = "tell me the head". */
export function readEventsQuery(query: URLSearchParams): { after: number | null; limit: number } {
  let after: number | null = null;
  let limit = DEFAULT_EVENTS_LIMIT;
  const seen = new Set<string>();
  for (const [name, value] of query) {
    if (seen.has(name)) throw invalid(name, `${name} was given more than once`);
    seen.add(name);
    if (name === 'after') after = parseCursor(value);
    else if (name === 'limit') {
      if (!/^\d{1,4}$/.test(value) || Number(value) > MAX_EVENTS_LIMIT) {
        throw invalid('limit', `limit must be an integer from 0 to ${MAX_EVENTS_LIMIT}`);
      }
      limit = Number(value);
    } else throw unknownParam(name);
  }
  return { after, limit };
}

export function parseCursor(value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw invalid('after', 'after must be a cursor from this feed (the id of an event, or next)');
  return Number(value);
}

export class ChangeFeed {
  private readonly userEvents;
  private readonly userHead;
  private readonly globalHead;
  private readonly purgedThrough;

  constructor(
    private readonly db: Db,
    private readonly files: Files,
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
    this.globalHead = prepare<Record<string, never>, { head: number | null }>(db, () =>
      db.selectFrom('events').select((eb) => eb.fn.max('seq').as('head')),
    );
    this.purgedThrough = prepare<{ key: string }, { value: string }>(db, (slot) =>
      db.selectFrom('settings').select('value').where('key', '=', slot('key')),
    );
  }

  private async floor(): Promise<number> {
    const [row] = await this.purgedThrough(this.db, { key: PURGED_THROUGH });
    return row ? Number(row.value) : 0;
  }

  /** The cursor to follow the feed from after a full listing: nothing at or before it is news. */
  async head(user: string): Promise<number> {
    const [row] = await this.userHead(this.db, { user });
    return Math.max(Number(row?.head ?? 0), await this.floor());
  }

  /** Refuses a cursor whose following events may be gone, or that this database never issued. */
  async check(after: number): Promise<void> {
    const floor = await this.floor();
    if (after < floor) throw eventsExpired();
    const [row] = await this.globalHead(this.db, {});
    if (after > Math.max(Number(row?.head ?? 0), floor)) throw eventsExpired();
  }

  /**
   * Events after `after`, oldest first. Several events of one object in a page collapse into its
   * last one (the object is rendered as it is now anyway); an object created or updated and since
   * deleted is left out (its deletion follows in the feed).
   */
  async page(user: string, after: number, limit: number, assetBase: string): Promise<EventPage> {
    await this.check(after);
    const rows = await this.userEvents(this.db, { user, after, limit: limit + 1 });
    const hasMore = rows.length > limit;
    const taken = hasMore ? rows.slice(0, limit) : rows;
    const next = taken.length > 0 ? taken[taken.length - 1]!.seq : after;
    const last = new Map<string, EventRow>();
    for (const row of taken) last.set(row.object_id, row);
    const live = [...last.values()];
    const conversations = await this.conversationsById(user, live.filter((e) => e.type.startsWith('conversation.') && !e.type.endsWith('.deleted')));
    const files = await this.filesById(user, live.filter((e) => e.type.startsWith('file.') && !e.type.endsWith('.deleted')));
    const data: ChangeEvent[] = [];
    for (const row of taken) {
      if (last.get(row.object_id) !== row) continue;
      const event = this.render(row, conversations, files, assetBase);
      if (event) data.push(event);
    }
    return { data, has_more: hasMore, next: String(next) };
  }

  private render(
    row: EventRow,
    conversations: Map<string, Conversation>,
    files: Map<string, StoredFile>,
    assetBase: string,
  ): ChangeEvent | null {
    const base = { id: String(row.seq), created_at: Number(row.created_at) };
    const type = row.type as ChangeEventType;
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
      for (const row of rows) out.set(row.id, row as StoredFile);
    }
    return out;
  }

  /** Drops events older than the retention; remembers how far, so older cursors answer 410. */
  async purgeExpired(retentionSeconds: number): Promise<number> {
    const cutoff = nowSeconds() - retentionSeconds;
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('events').select((eb) => eb.fn.max('seq').as('upto')).where('created_at', '<', cutoff).executeTakeFirst();
      const upto = row?.upto === null || row?.upto === undefined ? null : Number(row.upto);
      if (upto === null) return 0;
      const deleted = await trx.deleteFrom('events').where('seq', '<=', upto).executeTakeFirst();
      await trx
        .insertInto('settings')
        .values({ key: PURGED_THROUGH, value: String(upto) })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(upto) }))
        .execute();
      return Number(deleted.numDeletedRows);
    });
  }
}

function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
