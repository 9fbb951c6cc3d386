// Removing the bytes of deleted files. Deleting rows and deleting blobs cannot be one transaction
// (a blob store is not the database), so the deleting transaction only records what must go: a
// trigger on `files` (migration 0002) puts the storage key of every deleted row — cascaded ones
// included — into `blob_deletions`. After the commit, and again periodically and at start-up, a
// drain removes those blobs and then their queue rows. So:
// - no blob is leaked: a key leaves the queue only after its blob is gone (a crash in between
//   means removing an absent blob next time, which is not an error);
// - no blob is removed while a row points at it: keys are never reused, and a key is queued only
//   by the transaction that deleted its row, visible only if that transaction committed.
// Several drains at once (several instances, or a periodic pass meeting a delete's) are harmless:
// both remove the same blob, and both delete the same queue row.
import type { BlobStore } from './blob-store';
import type { Db } from './db';
import { nowSeconds } from '../ids';

export interface DrainResult {
  removed: number;
  /** Removals that failed this time; they stay queued and are retried after a backoff. */
  failed: number;
}

/** Seconds before retry number `attempts`: 30 s, 1 min, 2 min, … at most an hour. */
export const retryDelaySeconds = (attempts: number) => Math.min(3600, 30 * 2 ** Math.max(0, attempts - 1));

export class BlobDeletionQueue {
  constructor(
    private readonly db: Db,
    private readonly store: BlobStore,
    private readonly log: Pick<Console, 'error'>,
    private readonly batchSize = 100,
    private readonly concurrency = 8,
  ) {}

  /** Removes every queued blob that is due at `now` (Unix seconds). */
  async drain(now = nowSeconds()): Promise<DrainResult> {
    const result: DrainResult = { removed: 0, failed: 0 };
    const failed = new Set<string>(); // a key that failed is not tried again in this pass
    for (;;) {
      const due = (
        await this.db
          .selectFrom('blob_deletions')
          .select(['storage_key', 'attempts'])
          .where('next_attempt_at', '<=', now)
          .orderBy('queued_at')
          .limit(this.batchSize + failed.size)
          .execute()
      ).filter((row) => !failed.has(row.storage_key));
      if (due.length === 0) return result;
      // A few removals at once (an object store's requests are mostly waiting), and one statement
      // for the queue rows of a batch: deleting a conversation of a thousand files must not take a
      // thousand sequential round trips of each kind.
      const removed: string[] = [];
      await forEachConcurrently(due, this.concurrency, async ({ storage_key: key, attempts }) => {
        try {
          await this.store.remove(key);
          removed.push(key);
        } catch (error) {
          failed.add(key);
          result.failed++;
          this.log.error('[parley] could not remove the bytes of a deleted file (will retry):', key, error);
          await this.db
            .updateTable('blob_deletions')
            .set({ attempts: attempts + 1, next_attempt_at: now + retryDelaySeconds(attempts + 1) })
            .where('storage_key', '=', key)
            .execute();
        }
      });
      if (removed.length > 0) await this.db.deleteFrom('blob_deletions').where('storage_key', 'in', removed).execute();
      result.removed += removed.length;
    }
  }
}

/** Runs `task` over `items` with at most `limit` running at once; resolves when all have settled. */
async function forEachConcurrently<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
