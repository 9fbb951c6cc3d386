// Fast seeding straight into the service's SQLite file (one transaction per call), after the
// service's own migrations created the schema. Rows follow lib/api/migrations.ts exactly; file
// rows get real bytes under DATA_DIR/files/<key[0:2]>/<key> (lib/api/storage/disk-blob-store.ts).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openDb } from '../../lib/api/storage/db';
import { newId } from '../../lib/api/ids';

export const BENCH_TOKENS = {
  alice: 'alice-bench-token-0123456789',
  bob: 'bob-bench-token-9876543210',
  carol: 'carol-bench-token-5555555555',
  // The sync growth scenario's users (1,000 and 50,000 conversations; alice has 10,000).
  grow1k: 'grow1k-bench-token-1111111111',
  grow50k: 'grow50k-bench-token-5050505050',
  // The first-screen scenario's user (1,000 conversations mirrored, a fifth of them with files).
  dave: 'dave-bench-token-4444444444',
};
/**
 * Tokens per user beyond its first. A timed run (an initial sync, a replay, a floor loop) signs in
 * with a token of its own, as a device of its own would: the rate limits are per token (README,
 * Limits), and the bench repeats within two minutes what one device does once. The app servers
 * run with the default limits, so the figures show that a real sync or replay is not slowed.
 */
const RUN_TOKENS = 64;
const runTokenOf = (token: string, i: number) => `${token}-run${i}`;
export const PARLEY_TOKENS = Object.entries(BENCH_TOKENS)
  .flatMap(([user, token]) => [token, ...Array.from({ length: RUN_TOKENS }, (_, i) => runTokenOf(token, i))].map((t) => `${user}:${t}`))
  .join(',');
const handedOut = new Map<string, number>();

/** A token of `user` no run has used yet in this bench process (a fresh rate-limit bucket). */
export function runToken(user: keyof typeof BENCH_TOKENS): string {
  const i = handedOut.get(user) ?? 0;
  if (i >= RUN_TOKENS) throw new Error(`bench: more than ${RUN_TOKENS} runs of ${user}: raise RUN_TOKENS`);
  handedOut.set(user, i + 1);
  return runTokenOf(BENCH_TOKENS[user], i);
}

/**
 * For servers whose scenarios measure throughput with one token (api, deep-pages, uploads) or
 * repeat whole initial syncs (the sync scenarios): limits they never reach. The limiter still runs
 * (its cost is in the figures); the flood scenario keeps the defaults.
 */
export const BENCH_RATE_LIMITS = { RATE_LIMIT_PER_SECOND: '100000000', RATE_LIMIT_PEAK_PER_SECOND: '0', RATE_LIMIT_WRITES_PER_SECOND: '0', RATE_LIMIT_ANONYMOUS_PER_SECOND: '100000000' };

/** Runs the service's migrations on a fresh DATA_DIR. */
export async function createSchema(dataDir: string): Promise<void> {
  const opened = await openDb({ dataDir });
  await opened.close();
}

function open(dataDir: string) {
  const db = new Database(path.join(dataDir, 'parley.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

export interface SeededConversation {
  id: string;
  user: string;
}

/**
 * Inserts conversations for each user, interleaved (so one user's rows are spread through the
 * table as in real life). Returns the ids per user in creation order (oldest first).
 */
export function seedConversations(dataDir: string, perUser: Record<string, number>, now = Math.floor(Date.now() / 1000)): Record<string, string[]> {
  const db = open(dataDir);
  const ids: Record<string, string[]> = Object.fromEntries(Object.keys(perUser).map((u) => [u, []]));
  const insert = db.prepare(
    `insert into conversations (id, user_id, contact_id, group_id, pinned_message_id, is_pinned, is_muted, last_active_at, last_opened_at, created_at, archived_at)
     values (?, ?, ?, null, null, ?, ?, null, null, ?, null)`,
  );
  const max = Math.max(...Object.values(perUser));
  const total = Object.values(perUser).reduce((a, b) => a + b, 0);
  db.transaction(() => {
    for (let i = 0; i < max; i++) {
      for (const [user, count] of Object.entries(perUser)) {
        if (i >= count) continue;
        const id = newId();
        insert.run(id, user, `contact-${i}`, i % 17 === 0 ? 1 : 0, i % 11 === 0 ? 1 : 0, now - total + i);
        ids[user]!.push(id);
      }
    }
  })();
  db.close();
  return ids;
}

/**
 * Gives `filesPerConversation` files to each of the given conversations: a message per file (as
 * an upload creates), a file row, real bytes on disk, and last_active_at raised as an upload does.
 */
export function seedFiles(dataDir: string, user: string, conversationIds: string[], filesPerConversation: number, bytesPerFile = 2048): number {
  const db = open(dataDir);
  const insertMessage = db.prepare('insert into messages (id, conversation_id, user_id, author, created_at) values (?, ?, ?, ?, ?)');
  const insertFile = db.prepare(
    `insert into files (id, user_id, conversation_id, message_id, filename, file_type, file_size, storage_key, sha256, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const touch = db.prepare('update conversations set last_active_at = ? where id = ?');
  const filesDir = path.join(dataDir, 'files');
  const now = Math.floor(Date.now() / 1000);
  let n = 0;
  db.transaction(() => {
    for (const conversationId of conversationIds) {
      for (let k = 0; k < filesPerConversation; k++, n++) {
        const header = Buffer.from(`%PDF-1.4\n% parley bench file ${n}\n`);
        const bytes = Buffer.concat([header, Buffer.alloc(Math.max(0, bytesPerFile - header.length), 0x20)]);
        const key = newId(24);
        const dir = path.join(filesDir, key.slice(0, 2));
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, key), bytes);
        const messageId = newId();
        const at = now - 100_000 + n;
        insertMessage.run(messageId, conversationId, user, user, at);
        insertFile.run(newId(), user, conversationId, messageId, `report-${n}.pdf`, 'application/pdf', bytes.length, key, createHash('sha256').update(bytes).digest('hex'), at);
        touch.run(at, conversationId);
      }
    }
  })();
  db.close();
  return n;
}

/**
 * The sync data set: `conversations` for the user, a fifth of them active with 5 files each
 * (10,000 conversations → 2,000 with files → 10,000 files), the rest without activity.
 */
export function seedSyncData(dataDir: string, user: string, conversations: number, filesPerActive = 5): { ids: string[]; files: number; active: number } {
  const ids = seedConversations(dataDir, { [user]: conversations })[user]!;
  const active = ids.filter((_, i) => i % 5 === 0);
  const files = seedFiles(dataDir, user, active, filesPerActive);
  return { ids, files, active: active.length };
}
