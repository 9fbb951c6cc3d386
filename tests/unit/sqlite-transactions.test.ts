// @vitest-environment node
// Two processes on one SQLite file (`npm run token` beside a running server): a transaction of
// ours that reads, then writes, must not fail because the other connection committed in between.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { openDb, sqliteFileOf } from '../../lib/api/storage/db';

it('a transaction holds the write lock from its start: another connection waits for it, never the other way round', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-sqlite-tx-'));
  const opened = await openDb({ dataDir: dir });
  // The other process's connection, not waiting at all (busy_timeout 0), so a lock it meets shows at once.
  const other = new Database(sqliteFileOf(opened.db)!.path);
  other.pragma('busy_timeout = 0');
  const insert = (db: Database.Database, id: string) => db.prepare("insert into tokens (id, user_id, token_hash, created_at) values (?, 'alice', ?, 1)").run(id, `hash-${id}`);
  let otherWrite: unknown = null;
  try {
    await opened.db.transaction().execute(async (trx) => {
      await trx.selectFrom('tokens').select('id').execute(); // a read first: the snapshot
      try {
        insert(other, 'other-token');
      } catch (error) {
        otherWrite = error;
      }
      await trx.insertInto('tokens').values({ id: 'ours', user_id: 'alice', token_hash: 'hash-ours', created_at: 1 }).execute();
    });
    // Ours committed; the other connection was told to wait (it may try again), not let through
    // to make ours fail with SQLITE_BUSY_SNAPSHOT.
    expect(otherWrite).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(other.prepare('select id from tokens order by id').all()).toEqual([{ id: 'ours' }]);
  } finally {
    other.close();
    await opened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
