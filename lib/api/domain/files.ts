// Files: list, upload, retrieve, rename, delete — scoped to the authenticated user.
import { FileListQuery, FileUploadInput, type FileUpdateInput, filenameProblem, ID_PATTERN, type FileObject, type PageOf } from '../../schemas';
import type { Conversations } from './conversations';
import type { Db, FileRow } from '../storage/db';
import { invalid, missing, notFound, unknownParam } from '../errors';
import { isForeignKeyViolation } from '../storage/failures';
import { resolveFileType } from './file-types';
import { newId, nowSeconds } from './ids';
import { paginate, readListQuery, type CursorMode } from './pagination';
import { prepare, prepareVariants } from '../storage/prepared';
import type { UrlSigner } from './signing';
import type { ReceivedUpload } from './inputs';

export type StoredFile = Omit<FileRow, 'seq'> & { seq: number };

/** The upload's fields besides the file part. */
const UPLOAD_FIELDS = new Set(Object.keys(FileUploadInput.shape).filter((name) => name !== 'file'));

/** The part's filename with any path removed (browsers on Windows have sent C:\fakepath\x.pdf). */
export function baseFilename(raw: string): string {
  const parts = raw.split(/[\\/]/);
  return parts[parts.length - 1];
}

export class Files {
  private readonly byId;
  private readonly listPage;
  private readonly seek;

  constructor(
    db: Db,
    private readonly signer: UrlSigner,
    private readonly conversations: Conversations,
  ) {
    this.byId = prepare<{ id: string; user: string }, StoredFile>(db, (slot) =>
      db.selectFrom('files').selectAll().where('id', '=', slot('id')).where('user_id', '=', slot('user')),
    );
    type Args = { user: string; conversation: string; seq: number; limit: number; id: string };
    const filtered = (byConversation: boolean, slot: <K extends keyof Args & string>(k: K) => Args[K]) => {
      let q = db.selectFrom('files').where('user_id', '=', slot('user'));
      if (byConversation) q = q.where('conversation_id', '=', slot('conversation'));
      return q;
    };
    this.listPage = prepareVariants<{ byConversation: boolean; mode: CursorMode }, Args, StoredFile>(
      db,
      (v) => `${v.mode}|${v.byConversation}`,
      ({ byConversation, mode }, slot) => {
        let q = filtered(byConversation, slot).selectAll();
        if (mode === 'after') q = q.where('seq', '<', slot('seq'));
        if (mode === 'before') q = q.where('seq', '>', slot('seq'));
        return q.orderBy('seq', mode === 'before' ? 'asc' : 'desc').limit(slot('limit'));
      },
    );
    this.seek = prepareVariants<boolean, Args, { seq: number }>(
      db,
      (byConversation) => `seek|${byConversation}`,
      (byConversation, slot) => filtered(byConversation, slot).select('seq').where('id', '=', slot('id')),
    );
  }

  toFile(row: StoredFile, assetBase: string): FileObject {
    return {
      id: row.id,
      message_id: row.message_id,
      filename: row.filename,
      file_url: this.signer.fileUrl(assetBase, row.id, row.filename),
      file_type: row.file_type,
      file_size: row.file_size,
      created_at: row.created_at,
    };
  }

  async list(db: Db, user: string, query: URLSearchParams, assetBase: string): Promise<PageOf<FileObject>> {
    const { list, filters } = readListQuery(query, Object.keys(FileListQuery.shape));
    const conversation = filters.conversation_id;
    if (conversation !== undefined) {
      if (!ID_PATTERN.test(conversation)) throw notFound('conversation', 'conversation_id');
      await this.conversations.get(db, user, conversation).catch(() => {
        throw notFound('conversation', 'conversation_id');
      });
    }
    const byConversation = conversation !== undefined;
    const args = { user, conversation: conversation ?? '', seq: 0, limit: 0, id: '' };
    const page = await paginate(
      list,
      async (id) => (await this.seek(byConversation)(db, { ...args, id }))[0]?.seq,
      (mode, seq, limit) => this.listPage({ byConversation, mode })(db, { ...args, seq, limit }),
    );
    return { has_more: page.has_more, data: page.data.map((row) => this.toFile(row, assetBase)) };
  }

  async get(db: Db, user: string, id: string): Promise<StoredFile> {
    const [row] = await this.byId(db, { id, user });
    if (!row) throw notFound('file');
    return row;
  }

  /** Checks an upload's fields before any row is written; returns the validated target and name. */
  validateUpload(upload: ReceivedUpload) {
    for (const name of Object.keys(upload.fields)) {
      if (name === 'file') throw invalid('file', 'file must be a file part (with a filename), not a text field');
      if (!UPLOAD_FIELDS.has(name)) throw unknownParam(name);
    }
    const { conversation_id, message_id } = upload.fields;
    if (conversation_id !== undefined && message_id !== undefined) {
      throw invalid('message_id', 'Give conversation_id or message_id, not both');
    }
    if (conversation_id === undefined && message_id === undefined) {
      throw missing('conversation_id', 'conversation_id or message_id is required');
    }
    const file = upload.file;
    if (!file) throw missing('file');
    const filename = baseFilename(file.rawFilename ?? '');
    const problem = filenameProblem(filename);
    if (problem) throw invalid('file', `The filename ${problem}`);
    return { conversation_id, message_id, file, filename };
  }

  /**
   * Runs inside the request's transaction. The bytes are already durable under their key (see
   * upload.ts); the caller removes them if this row does not commit.
   */
  async create(db: Db, user: string, upload: ReceivedUpload, assetBase: string): Promise<FileObject> {
    const target = this.validateUpload(upload);
    try {
      return await this.insert(db, user, target, assetBase);
    } catch (error) {
      // The conversation (or message) was there when checked, and was deleted before this row
      // could point at it: the same answer as if it had never been there.
      if (!isForeignKeyViolation(error)) throw error;
      throw target.conversation_id !== undefined ? notFound('conversation', 'conversation_id') : notFound('message', 'message_id');
    }
  }

  private async insert(
    db: Db,
    user: string,
    { conversation_id, message_id, file, filename }: ReturnType<Files['validateUpload']>,
    assetBase: string,
  ): Promise<FileObject> {
    const now = nowSeconds();
    let conversationId: string;
    let messageId: string;
    if (conversation_id !== undefined) {
      if (!ID_PATTERN.test(conversation_id)) throw notFound('conversation', 'conversation_id');
      if (!(await this.conversations.touch(db, user, conversation_id, now))) throw notFound('conversation', 'conversation_id');
      conversationId = conversation_id;
      messageId = newId();
      await db
        .insertInto('messages')
        .values({ id: messageId, conversation_id: conversationId, user_id: user, author: user, created_at: now })
        .execute();
    } else {
      const message = ID_PATTERN.test(message_id)
        ? await db
            .selectFrom('messages')
            .select(['id', 'conversation_id'])
            .where('id', '=', message_id)
            .where('user_id', '=', user)
            .executeTakeFirst()
        : undefined;
      if (!message || !(await this.conversations.touch(db, user, message.conversation_id, now))) throw notFound('message', 'message_id');
      conversationId = message.conversation_id;
      messageId = message.id;
    }
    const row = {
      id: newId(),
      user_id: user,
      conversation_id: conversationId,
      message_id: messageId,
      filename,
      file_type: resolveFileType(file.declaredType, file.head, filename),
      file_size: file.size,
      storage_key: file.blob.key,
      sha256: file.sha256,
      created_at: now,
    };
    await db.insertInto('files').values(row).execute();
    return this.toFile({ ...row, seq: 0 }, assetBase);
  }

  /** `input` as the route's body schema parsed it (routes/files.ts). */
  async rename(db: Db, user: string, id: string, input: FileUpdateInput, assetBase: string): Promise<FileObject> {
    const row = await this.get(db, user, id);
    await db.updateTable('files').set({ filename: input.filename }).where('id', '=', id).execute();
    return this.toFile({ ...row, filename: input.filename }, assetBase);
  }

  /** Deletes the row; its bytes are queued for removal by a trigger (see blob-deletions.ts). */
  async delete(db: Db, user: string, id: string): Promise<void> {
    const deleted = await db.deleteFrom('files').where('id', '=', id).where('user_id', '=', user).returning('id').executeTakeFirst();
    if (!deleted) throw notFound('file');
  }

  /** For the asset host: a file by id alone (the signed URL is the authorisation). */
  async forAsset(db: Db, id: string): Promise<StoredFile | undefined> {
    return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
  }
}

