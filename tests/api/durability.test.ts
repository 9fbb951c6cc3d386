// Upload bytes are made durable (fsync, rename, directory fsync) before the row's transaction
// begins: while a blob is being finished, no transaction of that upload is open, so other writes
// go through (on SQLite one held write lock would stop them all).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobWrite } from '../../lib/api/storage/blob-store';
import { DiskBlobStore } from '../../lib/api/storage/disk-blob-store';
import { client } from '../helpers/api';
import type { TestServer } from '../helpers/server';
import { startTarget } from '../helpers/target';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The disk store, with `finish()` held at its start until the test lets it go. */
class GatedStore extends DiskBlobStore {
  finishing = deferred();
  release = deferred();
  override begin(): BlobWrite {
    const write = super.begin();
    return {
      key: write.key,
      sink: write.sink,
      abort: () => write.abort(),
      finish: async () => {
        this.finishing.resolve();
        await this.release.promise;
        await write.finish();
      },
    };
  }
}

let s: TestServer;
let store: GatedStore;
let alice: ReturnType<typeof client>;

beforeAll(async () => {
  s = await startTarget({ store: (dataDir) => (store = new GatedStore(dataDir)) });
  alice = client(() => s.baseUrl, s.tokens.alice);
});
afterAll(() => s?.stop());

describe('finishing a blob', () => {
  it('happens before the row transaction: other writes go through meanwhile, and no transaction is open', async () => {
    const c = (await alice.post('/v1/conversations', { json: { contact_id: 'gated' } })).body;
    const upload = alice.upload({ conversation_id: c.id }, { name: 'gated.txt', bytes: 'held in finish' }, { headers: { 'idempotency-key': 'gated-1' } });
    await store.finishing.promise;
    const write = await alice.put(`/v1/conversations/${c.id}`, { json: { is_pinned: true }, headers: { 'idempotency-key': 'gated-2' } });
    expect(write.status).toBe(200);
    expect((await alice.get(`/v1/files?conversation_id=${c.id}`)).body.data).toEqual([]);
    if (s.databaseUrl) {
      const open = new pg.Client({ connectionString: s.databaseUrl });
      await open.connect();
      const { rows } = await open.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'",
      );
      await open.end();
      expect(rows[0].n).toBe(0);
    }
    store.release.resolve();
    expect((await upload).status).toBe(201);
  });
});
