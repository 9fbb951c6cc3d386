// One migration history for every dialect. Append new migrations; never edit an applied one.
import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from './engine';

export function migrations(dialect: DialectName): Record<string, Migration> {
  // The internal sequence that orders lists (newest first), independent of second-resolution times.
  const seqType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const seq = (c: any) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement());

  return {
    '0001_initial': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('conversations')
          .addColumn('seq', seqType, seq)
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('contact_id', 'text')
          .addColumn('group_id', 'text')
          .addColumn('pinned_message_id', 'text')
          .addColumn('is_pinned', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('is_muted', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('last_active_at', 'bigint')
          .addColumn('last_opened_at', 'bigint')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('archived_at', 'bigint')
          .execute();
        await db.schema.createIndex('conversations_user_seq').on('conversations').columns(['user_id', 'seq']).execute();
        await db.schema.createIndex('conversations_user_contact').unique().on('conversations').columns(['user_id', 'contact_id']).execute();
        await db.schema.createIndex('conversations_user_group').unique().on('conversations').columns(['user_id', 'group_id']).execute();

        await db.schema
          .createTable('messages')
          .addColumn('seq', seqType, seq)
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('author', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('messages_conversation').on('messages').column('conversation_id').execute();

        await db.schema
          .createTable('files')
          .addColumn('seq', seqType, seq)
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
          .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
          .addColumn('filename', 'text', (c) => c.notNull())
          .addColumn('file_type', 'text', (c) => c.notNull())
          .addColumn('file_size', 'bigint', (c) => c.notNull())
          .addColumn('storage_key', 'text', (c) => c.notNull().unique())
          .addColumn('sha256', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('files_user_seq').on('files').columns(['user_id', 'seq']).execute();
        await db.schema.createIndex('files_conversation_seq').on('files').columns(['conversation_id', 'seq']).execute();
        await db.schema.createIndex('files_message').on('files').column('message_id').execute();

        await db.schema
          .createTable('tokens')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('token_hash', 'text', (c) => c.notNull().unique())
          .addColumn('label', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();

        await db.schema
          .createTable('idempotency_keys')
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('fingerprint', 'text', (c) => c.notNull())
          .addColumn('status', 'integer')
          .addColumn('response_headers', 'text')
          .addColumn('response_body', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'key'])
          .execute();
        await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();

        await db.schema
          .createTable('settings')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .execute();
      },
    },

    // Bytes of deleted files are removed after the deleting transaction commits, from a queue
    // filled in that transaction: a trigger on files catches every deleted row, those cascaded
    // from a conversation included, so the keys to remove are exactly the rows really deleted.
    // Also: unfinished idempotency markers of the previous version (which claimed keys in a
    // transaction of their own) cannot belong to any running request now.
    '0002_blob_deletions': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('blob_deletions')
          .addColumn('storage_key', 'text', (c) => c.primaryKey())
          .addColumn('queued_at', 'bigint', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema.createIndex('blob_deletions_due').on('blob_deletions').column('next_attempt_at').execute();
        if (dialect === 'postgres') {
          await sql`
            create function queue_blob_deletion() returns trigger language plpgsql as $$
            begin
              insert into blob_deletions (storage_key, queued_at)
                values (old.storage_key, extract(epoch from now())::bigint)
                on conflict (storage_key) do nothing;
              return null;
            end $$`.execute(db);
          await sql`
            create trigger files_queue_blob_deletion after delete on files
            for each row execute function queue_blob_deletion()`.execute(db);
        } else {
          // SQLite fires row triggers for rows deleted by a foreign key's ON DELETE CASCADE too.
          await sql`
            create trigger files_queue_blob_deletion after delete on files
            begin
              insert or ignore into blob_deletions (storage_key, queued_at)
                values (old.storage_key, cast(strftime('%s', 'now') as integer));
            end`.execute(db);
        }
        await db.deleteFrom('idempotency_keys').where('status', 'is', null).execute();
      },
    },

    // The change feed (GET /v1/events): every change to a conversation or file row records an event
    // in the same transaction, by trigger, so no write path (cascades included) can forget one.
    '0003_events': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('events')
          .addColumn('seq', seqType, seq)
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('object_id', 'text', (c) => c.notNull())
          .addColumn('conversation_id', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('events_user_seq').on('events').columns(['user_id', 'seq']).execute();
        await db.schema.createIndex('events_created').on('events').column('created_at').execute();
        for (const statement of dialect === 'postgres' ? postgresEventTriggers : sqliteEventTriggers) {
          await sql.raw(statement).execute(db);
        }
      },
    },

    // Resumable uploads (tus, /v1/uploads: lib/api/http/tus/). The upload's owner, target, name,
    // length, offset, expiry and (once finished) its file live here, not in a process, so that any
    // instance on the same database and store continues an upload another one started. `writer` /
    // `writer_until` are a lease on the upload's next offset (one PATCH at a time). Each PATCH's
    // bytes are one blob (upload_chunks); a chunk row deleted — by DELETE, expiry, completion, or
    // the upload's row going — queues its blob for removal in the same transaction, by the same
    // queue files use (0002_blob_deletions).
    '0004_uploads': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('uploads')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('conversation_id', 'text')
          .addColumn('message_id', 'text')
          .addColumn('filename', 'text', (c) => c.notNull())
          .addColumn('file_type', 'text')
          .addColumn('upload_length', 'bigint', (c) => c.notNull())
          .addColumn('upload_offset', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('file_id', 'text')
          .addColumn('writer', 'text')
          .addColumn('writer_until', 'bigint')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('uploads_expires').on('uploads').column('expires_at').execute();
        await db.schema
          .createTable('upload_chunks')
          .addColumn('upload_id', 'text', (c) => c.notNull().references('uploads.id').onDelete('cascade'))
          .addColumn('upload_offset', 'bigint', (c) => c.notNull())
          .addColumn('size', 'bigint', (c) => c.notNull())
          .addColumn('storage_key', 'text', (c) => c.notNull().unique())
          .addPrimaryKeyConstraint('upload_chunks_pk', ['upload_id', 'upload_offset'])
          .execute();
        if (dialect === 'postgres') {
          await sql`
            create trigger upload_chunks_queue_blob_deletion after delete on upload_chunks
            for each row execute function queue_blob_deletion()`.execute(db);
        } else {
          await sql`
            create trigger upload_chunks_queue_blob_deletion after delete on upload_chunks
            begin
              insert or ignore into blob_deletions (storage_key, queued_at)
                values (old.storage_key, cast(strftime('%s', 'now') as integer));
            end`.execute(db);
        }
      },
    },

    // An upload ends with the conversation (or message) it was going to: deleting a conversation —
    // its messages go by ON DELETE CASCADE — deletes the uploads into it or into its messages, in
    // the same transaction, by trigger (so no delete path can forget them); their chunk rows go by
    // the cascade of 0004_uploads, and their blobs are queued for removal by its trigger. HEAD then
    // answers 404. (No foreign key: SQLite cannot add one to an existing table.) The indexes keep
    // each trigger an index seek, not a scan of every upload per deleted message.
    '0005_uploads_end_with_their_target': {
      async up(db: Kysely<any>) {
        await db.schema.createIndex('uploads_conversation').on('uploads').column('conversation_id').execute();
        await db.schema.createIndex('uploads_message').on('uploads').column('message_id').execute();
        if (dialect === 'postgres') {
          await sql`
            create function parley_end_uploads() returns trigger language plpgsql as $$
            begin
              if TG_TABLE_NAME = 'conversations' then
                delete from uploads where conversation_id = old.id;
              else
                delete from uploads where message_id = old.id;
              end if;
              return null;
            end $$`.execute(db);
          for (const table of ['conversations', 'messages']) {
            await sql
              .raw(`create trigger ${table}_end_uploads after delete on ${table} for each row execute function parley_end_uploads()`)
              .execute(db);
          }
        } else {
          await sql`
            create trigger conversations_end_uploads after delete on conversations
            begin
              delete from uploads where conversation_id = old.id;
            end`.execute(db);
          await sql`
            create trigger messages_end_uploads after delete on messages
            begin
              delete from uploads where message_id = old.id;
            end`.execute(db);
        }
      },
    },
    // Remote wipe: a token marked wiped (`npm run token -- revoke <id> --wipe`) is kept, so that a
    // request with it is answered 401 device_wiped (the device erases its copy) instead of a plain
    // 401. Numbered with room before it: migrations of other work may land in between.
    '0010_tokens_wiped': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('tokens').addColumn('wiped_at', 'bigint').execute();
      },
    },
    // Devices (issue 29): a token is a CLI/static-seeded one ('cli') or a device's, made by pairing
    // or a sign-in ('device'); device tokens expire after TOKEN_TTL_DAYS unused, judged by
    // last_seen_at (written at most every few minutes per token). Pairings: one-use codes (hashed)
    // that let a signed-in device let another one in.
    '0015_devices': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('tokens').addColumn('kind', 'text', (c) => c.notNull().defaultTo('cli')).execute();
        await db.schema.alterTable('tokens').addColumn('last_seen_at', 'bigint').execute();
        await db.schema.createIndex('tokens_user').on('tokens').columns(['user_id', 'created_at']).execute();
        await db.schema
          .createTable('pairings')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('code_hash', 'text', (c) => c.notNull().unique())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .addColumn('label', 'text')
          .addColumn('secret_hash', 'text')
          .addColumn('redeemed_at', 'bigint')
          .addColumn('decided_at', 'bigint')
          .addColumn('token_id', 'text')
          .execute();
        await db.schema.createIndex('pairings_expires').on('pairings').column('expires_at').execute();
      },
    },
    // The audit trail (lib/api/domain/audit.ts): append-only. Rows are inserted (a write's in its
    // own transaction, reads in batches) and deleted only by the retention prune: an UPDATE is
    // refused on both dialects; on PostgreSQL a DELETE or TRUNCATE too, except in a transaction
    // that set parley.audit_prune (the prune's). Times in Unix milliseconds.
    '0020_audit': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('audit')
          .addColumn('seq', seqType, seq)
          .addColumn('at', 'bigint', (c) => c.notNull())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('token_id', 'text')
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('object_type', 'text')
          .addColumn('object_id', 'text')
          .addColumn('conversation_id', 'text')
          .addColumn('address', 'text')
          .addColumn('outcome', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('audit_user_at').on('audit').columns(['user_id', 'at']).execute();
        await db.schema.createIndex('audit_object').on('audit').column('object_id').execute();
        await db.schema.createIndex('audit_conversation').on('audit').column('conversation_id').execute();
        await db.schema.createIndex('audit_at').on('audit').column('at').execute();
        if (dialect === 'postgres') {
          await sql`
            create function parley_audit_append_only() returns trigger language plpgsql as $$
            begin
              if TG_OP = 'DELETE' and current_setting('parley.audit_prune', true) = 'on' then
                return old;
              end if;
              raise exception 'the audit trail is append-only (% refused)', TG_OP;
            end $$`.execute(db);
          await sql`
            create trigger audit_append_only before update or delete on audit
            for each row execute function parley_audit_append_only()`.execute(db);
          await sql`
            create trigger audit_no_truncate before truncate on audit
            for each statement execute function parley_audit_append_only()`.execute(db);
        } else {
          await sql`
            create trigger audit_append_only before update on audit
            begin
              select raise(abort, 'the audit trail is append-only (UPDATE refused)');
            end`.execute(db);
        }
      },
    },
    // Single sign-on (issue 29; lib/api/http/oidc.ts): a sign-in the identity provider vouched for,
    // waiting (a minute, once) for its browser to collect a device token, made then.
    '0025_sign_ins': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('sign_ins')
          .addColumn('id_hash', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('label', 'text', (c) => c.notNull())
          .addColumn('binding_hash', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .addColumn('token_id', 'text')
          .execute();
        await db.schema.createIndex('sign_ins_expires').on('sign_ins').column('expires_at').execute();
      },
    },
  };
}

// A conversation update that changes nothing (a PUT with no fields) records no event.
const conversationChanged = ['pinned_message_id', 'is_pinned', 'is_muted', 'last_active_at', 'last_opened_at', 'archived_at']
  .map((c) => `OLD.${c} IS NOT NEW.${c}`)
  .join(' OR ');
const fileChanged = ['filename', 'file_type', 'file_size', 'message_id', 'conversation_id'].map((c) => `OLD.${c} IS NOT NEW.${c}`).join(' OR ');
const sqliteNow = "CAST(strftime('%s', 'now') AS INTEGER)";

// SQLite has one writer at a time, so the order of `seq` is the order of commits.
const sqliteEventTriggers = [
  ['conversation', 'created', 'INSERT', 'NEW', null, 'NULL'],
  ['conversation', 'updated', 'UPDATE', 'NEW', conversationChanged, 'NULL'],
  ['conversation', 'deleted', 'DELETE', 'OLD', null, 'NULL'],
  ['file', 'created', 'INSERT', 'NEW', null, 'NEW.conversation_id'],
  ['file', 'updated', 'UPDATE', 'NEW', fileChanged, 'NEW.conversation_id'],
  ['file', 'deleted', 'DELETE', 'OLD', null, 'OLD.conversation_id'],
].map(
  ([kind, what, op, row, when, conversation]) =>
    `CREATE TRIGGER events_${kind}_${what} AFTER ${op} ON ${kind}s ${when ? `WHEN ${when} ` : ''}BEGIN ` +
    `INSERT INTO events (user_id, type, object_id, conversation_id, created_at) ` +
    `VALUES (${row}.user_id, '${kind}.${what}', ${row}.id, ${conversation}, ${sqliteNow}); END`,
);

// PostgreSQL runs writers concurrently, and a sequence value is taken when a row is inserted, not
// when its transaction commits: a reader could see seq 11 committed while seq 10 is still in
// flight, move its cursor past 10 and never see it. So the events are written by constraint
// triggers deferred to COMMIT, each taking a per-user advisory lock first: a user's transactions
// take their event numbers one after another, in commit order. Taking the lock at commit, after
// every row lock of the transaction, cannot deadlock. pg_notify (delivered on commit) wakes the
// live streams of every instance (see event-hub.ts).
const postgresEventTriggers = [
  `CREATE FUNCTION parley_record_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  what text := CASE TG_OP WHEN 'INSERT' THEN 'created' WHEN 'UPDATE' THEN 'updated' ELSE 'deleted' END;
  row_user text;
  row_id text;
  row_conversation text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    row_user := OLD.user_id; row_id := OLD.id;
    IF TG_TABLE_NAME = 'files' THEN row_conversation := OLD.conversation_id; END IF;
  ELSE
    row_user := NEW.user_id; row_id := NEW.id;
    IF TG_TABLE_NAME = 'files' THEN row_conversation := NEW.conversation_id; END IF;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('parley-events:' || row_user, 0));
  INSERT INTO events (user_id, type, object_id, conversation_id, created_at)
    VALUES (row_user, TG_ARGV[0] || '.' || what, row_id, row_conversation, extract(epoch from now())::bigint);
  PERFORM pg_notify('parley_events', row_user);
  RETURN NULL;
END $$`,
  ...[
    ['conversation', 'INSERT', null],
    ['conversation', 'UPDATE', conversationChanged.replaceAll(' IS NOT ', ' IS DISTINCT FROM ')],
    ['conversation', 'DELETE', null],
    ['file', 'INSERT', null],
    ['file', 'UPDATE', fileChanged.replaceAll(' IS NOT ', ' IS DISTINCT FROM ')],
    ['file', 'DELETE', null],
  ].map(
    ([kind, op, when]) =>
      `CREATE CONSTRAINT TRIGGER events_${kind}_${op!.toLowerCase()} AFTER ${op} ON ${kind}s ` +
      `DEFERRABLE INITIALLY DEFERRED FOR EACH ROW ${when ? `WHEN (${when}) ` : ''}EXECUTE FUNCTION parley_record_event('${kind}')`,
  ),
];
