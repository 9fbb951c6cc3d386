// One migration history for every dialect. Append new migrations; never edit an applied one.
import type { Kysely, Migration } from 'kysely';
import type { DialectName } from './db';

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
  };
}
