// The records of resumable uploads (tables uploads and upload_chunks, migration 0004_uploads): every
// read and write the tus handlers (lib/api/http/tus/) make of them, and nothing of the protocol.
// Methods that take `trx` run in the caller's transaction; the rest on the database itself.
//
// The lease (`writer`, `writer_until`) is one PATCH's hold on an upload's next offset: taken by a
// conditional update on the expected offset, and every write that moves the offset or finishes
// the upload is conditional on still holding it, so several instances on one database never
// write one upload at once.
import type { Db, UploadChunkRow, UploadRow } from './db';

export type { UploadChunkRow, UploadRow } from './db';

export class UploadRecords {
  constructor(private readonly db: Db) {}

  /** The upload if it is `user`'s (another user's is as absent as a missing one). */
  async owned(user: string, id: string, db: Db = this.db): Promise<UploadRow | undefined> {
    return db.selectFrom('uploads').selectAll().where('id', '=', id).where('user_id', '=', user).executeTakeFirst();
  }

  /** The upload by id alone (a lease holder's look, whoever's it is). */
  async find(id: string, db: Db = this.db): Promise<UploadRow | undefined> {
    return db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The user's unfinished uploads not expired at `now`: how many, and when the first of them expires. */
  async open(trx: Db, user: string, now: number): Promise<{ count: number; firstExpiry: number }> {
    const open = await trx
      .selectFrom('uploads')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('expires_at').as('first')])
      .where('user_id', '=', user)
      .where('file_id', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return { count: Number(open.n), firstExpiry: Number(open.first) };
  }

  async insert(trx: Db, row: UploadRow): Promise<void> {
    await trx.insertInto('uploads').values(row).execute();
  }

  /** Takes the lease at `offset` if it is free (or lapsed at `nowMs`) and the upload unfinished. */
  async claim(id: string, offset: number, token: string, nowMs: number, untilMs: number): Promise<boolean> {
    const claimed = await this.db
      .updateTable('uploads')
      .set({ writer: token, writer_until: untilMs })
      .where('id', '=', id)
      .where('upload_offset', '=', offset)
      .where('file_id', 'is', null)
      .where((eb) => eb.or([eb('writer', 'is', null), eb('writer_until', '<', nowMs)]))
      .returning('id')
      .executeTakeFirst();
    return claimed !== undefined;
  }

  async renew(id: string, token: string, untilMs: number): Promise<void> {
    await this.db.updateTable('uploads').set({ writer_until: untilMs }).where('id', '=', id).where('writer', '=', token).execute();
  }

  async release(id: string, token: string): Promise<void> {
    await this.db.updateTable('uploads').set({ writer: null, writer_until: null }).where('id', '=', id).where('writer', '=', token).execute();
  }

  /** Moves the offset from `from` to `to`, only while `token` holds the lease; false otherwise. */
  async advance(trx: Db, id: string, token: string, from: number, to: number, expiresAt: number): Promise<boolean> {
    const moved = await trx
      .updateTable('uploads')
      .set({ upload_offset: to, expires_at: expiresAt })
      .where('id', '=', id)
      .where('writer', '=', token)
      .where('upload_offset', '=', from)
      .returning('id')
      .executeTakeFirst();
    return moved !== undefined;
  }

  /** When the upload's lease lapses (undefined: the upload is gone). */
  async leaseOf(trx: Db, id: string): Promise<{ writer_until: number | null } | undefined> {
    return trx.selectFrom('uploads').select(['writer_until']).where('id', '=', id).executeTakeFirst();
  }

  async addChunk(trx: Db, chunk: UploadChunkRow): Promise<void> {
    await trx.insertInto('upload_chunks').values(chunk).execute();
  }

  /**
   * Marks the upload finished with `fileId`, only while `token` holds it and once (false
   * otherwise), and drops its chunks: their blobs are queued for removal by trigger, in `trx`.
   */
  async finish(trx: Db, id: string, token: string, fileId: string, length: number, expiresAt: number): Promise<boolean> {
    const done = await trx
      .updateTable('uploads')
      .set({ file_id: fileId, upload_offset: length, expires_at: expiresAt })
      .where('id', '=', id)
      .where('file_id', 'is', null)
      .where('writer', '=', token)
      .returning('id')
      .executeTakeFirst();
    if (!done) return false;
    await trx.deleteFrom('upload_chunks').where('upload_id', '=', id).execute();
    return true;
  }

  /**
   * Marks the upload finished with `fileId` unless a live lease holds it (whose holder finishes it
   * itself), once, and drops its chunks; false otherwise. (The proxy: a delivery that succeeded
   * with no request waiting for it.)
   */
  async finishUnheld(trx: Db, id: string, fileId: string, expiresAt: number, nowMs: number): Promise<boolean> {
    const done = await trx
      .updateTable('uploads')
      .set((eb) => ({ file_id: fileId, upload_offset: eb.ref('upload_length'), expires_at: expiresAt }))
      .where('id', '=', id)
      .where('file_id', 'is', null)
      .where((eb) => eb.or([eb('writer', 'is', null), eb('writer_until', '<', nowMs)]))
      .returning('id')
      .executeTakeFirst();
    if (!done) return false;
    await trx.deleteFrom('upload_chunks').where('upload_id', '=', id).execute();
    return true;
  }

  /** Whether an upload other than `id` became file `fileId`. */
  async otherWithFile(fileId: string, id: string): Promise<boolean> {
    return (await this.db.selectFrom('uploads').select('id').where('file_id', '=', fileId).where('id', '!=', id).executeTakeFirst()) !== undefined;
  }

  /** The upload's chunks, in offset order. */
  async chunks(id: string): Promise<UploadChunkRow[]> {
    return this.db.selectFrom('upload_chunks').selectAll().where('upload_id', '=', id).orderBy('upload_offset').execute();
  }

  async chunkCount(id: string): Promise<number> {
    const { n } = await this.db.selectFrom('upload_chunks').select((eb) => eb.fn.countAll<number | string>().as('n')).where('upload_id', '=', id).executeTakeFirstOrThrow();
    return Number(n);
  }

  /** Deletes the user's upload (its chunks go by cascade, their blobs queued by trigger); false if there is none. */
  async deleteOwned(trx: Db, user: string, id: string): Promise<boolean> {
    return (await trx.deleteFrom('uploads').where('id', '=', id).where('user_id', '=', user).returning('id').executeTakeFirst()) !== undefined;
  }

  /** Deletes the upload, whoever's it is (its chunks go by cascade, their blobs queued by trigger). */
  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('uploads').where('id', '=', id).execute();
  }

  /** Deletes the uploads expired at `now` (Unix seconds) that no live lease holds; how many. */
  async deleteExpired(now: number): Promise<number> {
    const gone = await this.db
      .deleteFrom('uploads')
      .where('expires_at', '<=', now)
      .where((eb) => eb.or([eb('writer', 'is', null), eb('writer_until', '<', now * 1000)]))
      .returning('id')
      .execute();
    return gone.length;
  }

  /** Which of `ids` still exist. */
  async existing(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    return new Set((await this.db.selectFrom('uploads').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
  }

  /** For the orphan sweeps: blobs that are chunks of unfinished uploads are not orphans. */
  async chunkKeys(): Promise<string[]> {
    return (await this.db.selectFrom('upload_chunks').select('storage_key').execute()).map((r) => r.storage_key);
  }

  async isChunk(key: string): Promise<boolean> {
    return (await this.db.selectFrom('upload_chunks').select('upload_id').where('storage_key', '=', key).executeTakeFirst()) !== undefined;
  }
}
