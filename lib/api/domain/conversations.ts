// Conversations: list, create, retrieve, update, delete — scoped to the authenticated user.
import { sql } from 'kysely';
import {
  type ConversationCreateInput,
  type ConversationListQuery,
  type ConversationUpdateInput,
  type Conversation,
  type PageOf,
} from '../../schemas';
import type { ConversationRow, Db } from '../storage/db';
import { ApiError, invalid, missing, notFound } from '../errors';
import { newId, nowSeconds } from './ids';
import { paginate, type CursorMode, type ListParams } from './pagination';
import { prepare, prepareVariants } from '../storage/prepared';

type Row = Omit<ConversationRow, 'seq'> & { seq: number };

export function toConversation(row: Row): Conversation {
  return {
    id: row.id,
    contact_id: row.contact_id,
    group_id: row.group_id,
    pinned_message_id: row.pinned_message_id,
    is_pinned: row.is_pinned === 1,
    is_muted: row.is_muted === 1,
    last_active_at: row.last_active_at,
    last_opened_at: row.last_opened_at,
    created_at: row.created_at,
    archived_at: row.archived_at,
  };
}

/** The list's filters, as ConversationListQuery parses them. */
type ListFilters = ConversationListQuery;

const variantKey = (f: ListFilters, mode: CursorMode | 'seek') =>
  `${mode}|${f.muted ?? '-'}|${f.archived ?? '-'}|${f.pinned ?? '-'}|${f.group_id !== undefined}`;

export class Conversations {
  private readonly byId;
  private readonly messageInConversation;
  private readonly listPage;
  private readonly seek;
  private readonly write;

  constructor(db: Db) {
    // One atomic statement for any update: each mutable field changes only when its flag says
    // it was supplied; the row comes back, so there is no read before the write.
    type Patch = {
      id: string; user: string;
      set_pm: number; pm: string | null; set_pin: number; pin: number; set_mute: number; mute: number;
      set_arch: number; arch: number | null; set_open: number; open: number | null;
    };
    const when = <T>(flag: unknown, value: unknown, column: string) => sql<T>`case when ${flag} = 1 then ${value} else ${sql.ref(column)} end`;
    this.write = prepare<Patch, Row>(db, (slot) =>
      db
        .updateTable('conversations')
        .set({
          pinned_message_id: when<string | null>(slot('set_pm'), slot('pm'), 'pinned_message_id'),
          is_pinned: when<number>(slot('set_pin'), slot('pin'), 'is_pinned'),
          is_muted: when<number>(slot('set_mute'), slot('mute'), 'is_muted'),
          archived_at: when<number | null>(slot('set_arch'), slot('arch'), 'archived_at'),
          last_opened_at: when<number | null>(slot('set_open'), slot('open'), 'last_opened_at'),
        })
        .where('id', '=', slot('id'))
        .where('user_id', '=', slot('user'))
        .returningAll(),
    );
    this.byId = prepare<{ id: string; user: string }, Row>(db, (slot) =>
      db.selectFrom('conversations').selectAll().where('id', '=', slot('id')).where('user_id', '=', slot('user')),
    );
    this.messageInConversation = prepare<{ id: string; conversation: string }, { id: string }>(db, (slot) =>
      db.selectFrom('messages').select('id').where('id', '=', slot('id')).where('conversation_id', '=', slot('conversation')),
    );
    // Filters are baked into each compiled variant; values that vary are slots.
    /** `group` is read only by the variants with a group_id filter. */
    type Args = { user: string; group: string; seq: number; limit: number; id: string };
    const filtered = (f: ListFilters, slot: <K extends keyof Args & string>(k: K) => Args[K]) => {
      let q = db.selectFrom('conversations').where('user_id', '=', slot('user'));
      if (f.muted !== undefined) q = q.where('is_muted', '=', f.muted ? 1 : 0);
      if (f.pinned !== undefined) q = q.where('is_pinned', '=', f.pinned ? 1 : 0);
      if (f.archived !== undefined) q = q.where('archived_at', f.archived ? 'is not' : 'is', null);
      if (f.group_id !== undefined) q = q.where('group_id', '=', slot('group'));
      return q;
    };
    this.listPage = prepareVariants<{ f: ListFilters; mode: CursorMode }, Args, Row>(
      db,
      (v) => variantKey(v.f, v.mode),
      ({ f, mode }, slot) => {
        let q = filtered(f, slot).selectAll();
        if (mode === 'after') q = q.where('seq', '<', slot('seq'));
        if (mode === 'before') q = q.where('seq', '>', slot('seq'));
        return q.orderBy('seq', mode === 'before' ? 'asc' : 'desc').limit(slot('limit'));
      },
    );
    this.seek = prepareVariants<ListFilters, Args, { seq: number }>(
      db,
      (f) => variantKey(f, 'seek'),
      (f, slot) => filtered(f, slot).select('seq').where('id', '=', slot('id')),
    );
  }

  /** A page of `list`, narrowed by `f` (both as the route's query parsed them: routes/conversations.ts). */
  async list(db: Db, user: string, list: ListParams, f: ListFilters): Promise<PageOf<Conversation>> {
    const args = { user, group: f.group_id ?? '', seq: 0, limit: 0, id: '' };
    const page = await paginate(
      list,
      async (id) => (await this.seek(f)(db, { ...args, id }))[0]?.seq,
      (mode, seq, limit) => this.listPage({ f, mode })(db, { ...args, seq, limit }),
    );
    return { has_more: page.has_more, data: page.data.map(toConversation) };
  }

  async get(db: Db, user: string, id: string): Promise<Row> {
    const [row] = await this.byId(db, { id, user });
    if (!row) throw notFound('conversation');
    return row;
  }

  async retrieve(db: Db, user: string, id: string): Promise<Conversation> {
    return toConversation(await this.get(db, user, id));
  }

  /** `input` as the route's body schema parsed it (routes/conversations.ts). */
  async create(db: Db, user: string, input: ConversationCreateInput): Promise<Conversation> {
    if (input.contact_id === undefined && input.group_id === undefined) {
      throw missing('contact_id', 'Exactly one of contact_id or group_id is required');
    }
    if (input.contact_id !== undefined && input.group_id !== undefined) {
      throw invalid('group_id', 'Give exactly one of contact_id or group_id, not both');
    }
    const column = input.contact_id !== undefined ? 'contact_id' : 'group_id';
    const value = (input.contact_id ?? input.group_id)!;
    const row = {
      id: newId(),
      user_id: user,
      contact_id: input.contact_id ?? null,
      group_id: input.group_id ?? null,
      pinned_message_id: null,
      is_pinned: 0,
      is_muted: 0,
      last_active_at: null,
      last_opened_at: null,
      created_at: nowSeconds(),
      archived_at: null,
    };
    // The unique index decides, not a read before the write: two creates at once cannot both pass
    // a check. On PostgreSQL an insert racing an uncommitted one waits for it, then does nothing.
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await db.insertInto('conversations').values(row).onConflict((oc) => oc.doNothing()).returning('seq').executeTakeFirst();
      if (inserted) return toConversation({ ...row, seq: inserted.seq });
      const existing = await db
        .selectFrom('conversations')
        .select('id')
        .where('user_id', '=', user)
        .where(column, '=', value)
        .executeTakeFirst();
      if (existing) {
        throw new ApiError(
          'conversation_exists',
          `A conversation with this ${column} already exists`,
          column,
          { existing_id: existing.id },
        );
      }
      // The conflicting conversation was deleted in between (or the new id collided): insert again.
      row.id = newId();
    }
    throw new Error('conversation insert kept conflicting without a conflicting row');
  }

  /** `input` as the route's body schema parsed it (routes/conversations.ts). */
  async update(db: Db, user: string, id: string, input: ConversationUpdateInput): Promise<Conversation> {
    if (input.pinned_message_id) {
      const [message] = await this.messageInConversation(db, { id: input.pinned_message_id, conversation: id });
      if (!message) {
        await this.get(db, user, id); // a conversation that is not the user's is 404, not 400
        throw invalid('pinned_message_id', 'pinned_message_id must be a message of this conversation');
      }
    }
    const flag = (v: unknown) => (v === undefined ? 0 : 1);
    const [row] = await this.write(db, {
      id,
      user,
      set_pm: flag(input.pinned_message_id),
      pm: input.pinned_message_id ?? null,
      set_pin: flag(input.is_pinned),
      pin: input.is_pinned ? 1 : 0,
      set_mute: flag(input.is_muted),
      mute: input.is_muted ? 1 : 0,
      set_arch: flag(input.archived_at),
      arch: input.archived_at ?? null,
      set_open: flag(input.last_opened_at),
      open: input.last_opened_at ?? null,
    });
    if (!row) throw notFound('conversation');
    return toConversation(row);
  }

  /**
   * Deletes the conversation with its messages and files (ON DELETE CASCADE). The bytes of every
   * file row deleted, however it went, are queued for removal by a trigger (see blob-deletions.ts).
   */
  async delete(db: Db, user: string, id: string): Promise<void> {
    const deleted = await db.deleteFrom('conversations').where('id', '=', id).where('user_id', '=', user).returning('id').executeTakeFirst();
    if (!deleted) throw notFound('conversation');
  }

  /**
   * An upload into the conversation makes it active at `at` (never moving last_active_at
   * backwards); answers whether the user's conversation exists. An upload calls
   * this FIRST, before inserting anything that refers to the conversation: the UPDATE takes the
   * row's lock and, on PostgreSQL, queues in order with a DELETE waiting for it. Inserting first
   * would take only the foreign key's KEY SHARE lock, which never waits for a waiting DELETE, so a
   * steady stream of uploads into a conversation would keep its deletion waiting indefinitely.
   */
  async touch(db: Db, user: string, id: string, at: number): Promise<boolean> {
    const touched = await db
      .updateTable('conversations')
      .set({ last_active_at: sql<number>`case when last_active_at is null or last_active_at < ${at} then ${at} else last_active_at end` })
      .where('id', '=', id)
      .where('user_id', '=', user)
      .returning('id')
      .executeTakeFirst();
    return touched !== undefined;
  }
}
