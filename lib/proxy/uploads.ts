// Proxy mode's resumable uploads: the upstream may have no /v1/uploads (the brief's contract has
// none), so the proxy offers tus itself (the same protocol code as the embedded service,
// lib/api/http/tus.ts) and stages the bytes on its own disk: DATA_DIR/proxy-uploads holds a small
// SQLite database (the service's own migrations: uploads, upload_chunks, idempotency, the blob
// deletion queue) and the chunks (a DiskBlobStore). What differs is the completion: the upload
// goes upstream as ONE POST /v1/files (multipart, streamed from the staged chunks, never whole in
// memory) with the creation's Idempotency-Key (the upload id when the client gave none), retried
// with backoff until the upstream answers (network errors, timeouts, 5xx, 408, 429 and 409
// idempotency_in_progress are retried; any other answer is final; an upload terminated meanwhile
// is not tried again: the completing request answers 404). The upstream's 2xx makes the
// upload finished with `Upload-File-Id: <the upstream's file id>`; another answer is passed on
// as the completion's answer and (except 401: another token of the user may still finish it) ends
// the upload and removes its bytes.
//
// Exactly once, also when the upstream ignores Idempotency-Key (the brief's contract has none):
// a repeat of a POST whose answer was lost would make a second file there. So before any POST
// after the first, the delivery looks upstream for the file an earlier one made (delivered.ts:
// a snapshot of the target's newest file before the first POST, then the files made since), and
// takes it instead of sending again. What it knows (the snapshot, "a POST went out", the file
// once known) is kept in the staging database, so a restarted proxy goes on from there.
//
// Never a hanging answer: the delivery runs on its own (one per upload, however many requests
// ask), and the request that stored the last byte waits for it at most `answerWithinMs`. Past
// that it is answered 503 with Retry-After; the upload and its bytes stay, the delivery goes on,
// and the upload becomes finished when it succeeds. A later HEAD (or a repeat of the last
// request) tells the file, or waits its own `answerWithinMs` for it, or, after a restart, begins
// the delivery again.
//
// Who the user is: the upstream's answer to the token — GET /v1/me where the upstream has it;
// otherwise (404/405) the token is checked with GET /v1/conversations?limit=1 and the user is the
// SHA-256 of the Authorization the upstream gets. Checks made before any byte is accepted: the
// token (as above), the fields and the file name (the contract's rules), Upload-Length against
// MAX_UPLOAD_BYTES, and a conversation_id must answer 200 to GET /v1/conversations/<id> with
// this token. A message_id cannot be checked upstream without bytes (the contract has no GET for
// messages): only its form is checked; the upstream's 404 at completion is the answer then.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { UploadSettings } from '../config';
import { filenameProblem, ID_PATTERN } from '../schemas';
import { ApiError, internalError, invalid, missing, notFound, storageFailureError, unauthenticated } from '../api/errors';
import type { ApiResult } from '../api/result';
import { baseFilename } from '../api/domain/files';
import { IdempotencyStore } from '../api/domain/idempotency';
import { newId } from '../api/ids';
import { BlobDeletionQueue } from '../api/storage/blob-deletions';
import { openDb, type Db } from '../api/storage/db';
import type { UploadRecords } from '../api/storage/uploads';
import { DiskBlobStore } from '../api/storage/disk-blob-store';
import { storageFailure } from '../api/storage/failures';
import { inTransaction } from '../api/storage/transaction';
import type { ApiReply, ApiRequest } from '../api/http/exchange';
import type { ReceivedUpload } from '../api/http/upload';
import { chunkBytes } from '../api/http/chunks';
import { isRecord } from '../records';
import { discardBody } from '../api/http/tus/body';
import type { StagedUpload, UploadCompletion } from '../api/http/tus/completion';
import { serveTus } from '../api/http/tus/handlers';
import { options } from '../api/http/tus/options';
import { TUS_HEADERS } from '../api/http/tus/protocol';
import { TusUploads } from '../api/http/tus/uploads';
import { findDelivered, ListingRefused, takeSnapshot, type DeliveryTarget, type Lister } from './delivered';
import { forwardRequestHeaders } from './headers';
import { UpstreamError, type Upstream } from './upstream';

export interface StagingSettings {
  /** The proxy's DATA_DIR: staged uploads live in its proxy-uploads/ directory. */
  dataDir: string;
  maxUploadBytes: number;
  uploads: UploadSettings;
  upstreamToken: string | null;
  /** The upstream's base path ('' or '/base'). */
  basePath: string;
  /** Delivery retries: the first wait, and the most a wait grows to (doubling, with jitter). */
  retry?: { firstMs: number; maxMs: number };
  /** How long a request waits for a delivery before it is answered 503 (default ANSWER_WITHIN_MS). */
  answerWithinMs?: number;
}

/** A client is answered within this, whatever the upstream does (the delivery goes on). */
export const ANSWER_WITHIN_MS = 8_000;

type Logger = Pick<Console, 'log' | 'error'>;

const EXPIRY_PASS_MS = 5 * 60_000;
const DELETION_PASS_MS = 60_000;
/** Answers the proxy reads whole (a File object, an error, /v1/me): small. */
const ANSWER_LIMIT = 1024 * 1024;
const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

/** /v1/uploads and /v1/uploads/<id> (a trailing slash allowed): served by the proxy itself. */
export function isUploadsPath(requestPath: string): boolean {
  return /^\/v1\/uploads(?:\/[^/]+)?\/?$/.test(requestPath);
}

/** The upstream's final answer to the delivery (not 2xx, not retryable): the completion's answer. */
class UpstreamAnswer extends Error {
  constructor(
    readonly status: number,
    readonly contentType: string | undefined,
    readonly text: string,
  ) {
    super(`the upstream answered ${status}`);
  }
}

interface Opened {
  uploads: TusUploads;
  db: Db;
  /** The staged uploads' records (the tus handlers' own, read here too). */
  records: UploadRecords;
  /** A pass of the blob deletion queue (chunks of finished or removed uploads). */
  drain(): Promise<unknown>;
  close(): Promise<void>;
}

/** What a delivery knows, kept across restarts (delivered.ts). */
interface DeliveryRow {
  upload_id: string;
  /** 1 once the snapshot was taken (newest_file_id and server_time may be null). */
  snapshot: number;
  newest_file_id: string | null;
  server_time: number | null;
  /** 1 once a POST went out: its answer may have been lost with the file made. */
  sent: number;
  /** The upstream's file, once known. */
  file_id: string | null;
}

/** The proxy's own tables beside the service's (made in openNow, not by a migration). */
type ProxyTables = {
  proxy_uploads: { upload_id: string; idempotency_key: string };
  proxy_deliveries: DeliveryRow;
};
const staging = (db: Db) => db.withTables<ProxyTables>();

export class UploadStaging implements UploadCompletion {
  /** Where the staged uploads are (their SQLite database and their chunks). */
  readonly dir: string;
  private opening: Promise<Opened> | null = null;
  private closed = false;
  private readonly retry: { firstMs: number; maxMs: number };
  /** Requests being served: closing waits for them (their leases are released, their chunks recorded). */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Resolves when closing starts: deliveries under way give up (the upload stays staged). */
  private readonly stopping: Promise<void>;
  private stop!: () => void;
  private readonly answerWithinMs: number;
  /** Deliveries under way, by upload id: every request about that upload waits for the same one. */
  private readonly deliveries = new Map<string, Promise<string>>();
  /** Deliveries that could be mistaken for each other (user, name, size) go one after another. */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    private readonly settings: StagingSettings,
    private readonly upstream: Upstream,
    private readonly log: Logger,
  ) {
    this.dir = path.join(settings.dataDir, 'proxy-uploads');
    this.retry = settings.retry ?? { firstMs: 250, maxMs: 15_000 };
    this.answerWithinMs = settings.answerWithinMs ?? ANSWER_WITHIN_MS;
    this.stopping = new Promise<void>((resolve) => (this.stop = resolve));
  }

  /** Every /v1/uploads request (isUploadsPath), after the proxy's host check and rate limit. */
  async dispatch(request: ApiRequest): Promise<ApiReply> {
    const trimmed = request.path.length > 1 && request.path.endsWith('/') ? request.path.slice(0, -1) : request.path;
    const id = trimmed.split('/')[3];
    try {
      // No token needed: tus clients probe it before anything else.
      if (request.method === 'OPTIONS') {
        return reply(options(this.settings.maxUploadBytes));
      }
      const served = (async () => {
        const user = await this.identify(request);
        const { uploads } = await this.open();
        return serveTus(uploads, request, user, id);
      })();
      this.inFlight.add(served);
      void served.catch(() => {}).finally(() => this.inFlight.delete(served));
      return reply(await served);
    } catch (error) {
      discardBody(request.body);
      return this.failure(request, error);
    }
  }

  /** Removes expired uploads and their staged bytes (periodic; tests call it with a later `now`). */
  async expire(now?: number): Promise<number> {
    const { uploads } = await this.open();
    return uploads.expire(now);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop();
    await Promise.allSettled([...this.inFlight]);
    const opening = this.opening;
    this.opening = null;
    if (opening) await (await opening.catch(() => null))?.close();
  }

  // ---- UploadCompletion: what differs from the embedded service ----

  validate(upload: ReceivedUpload): { conversation_id?: string; message_id?: string; filename: string } {
    // The rules of Files.validateUpload (the only fields here are the two metadata keys).
    const { conversation_id, message_id } = upload.fields;
    if (conversation_id !== undefined && message_id !== undefined) throw invalid('message_id', 'Give conversation_id or message_id, not both');
    if (conversation_id === undefined && message_id === undefined) throw missing('conversation_id', 'conversation_id or message_id is required');
    const filename = baseFilename(upload.file?.rawFilename ?? '');
    const problem = filenameProblem(filename);
    if (problem) throw invalid('file', `The filename ${problem}`);
    return { conversation_id, message_id, filename };
  }

  async checkTarget(request: ApiRequest, _user: string, target: { conversation_id?: string; message_id?: string }): Promise<void> {
    if (target.conversation_id !== undefined) {
      if (!ID_PATTERN.test(target.conversation_id)) throw notFound('conversation', 'conversation_id');
      const { status } = await this.ask(request, `/v1/conversations/${target.conversation_id}`);
      if (status === 200) return;
      if (status === 404) throw notFound('conversation', 'conversation_id');
      if (status === 401) throw unauthenticated();
      throw upstreamRefused(status);
    }
    // No GET for messages in the contract: the form only; the upstream decides at completion.
    if (!ID_PATTERN.test(target.message_id!)) throw notFound('message', 'message_id');
  }

  async created(trx: Db, id: string, request: ApiRequest): Promise<void> {
    await staging(trx)
      .insertInto('proxy_uploads')
      .values({ upload_id: id, idempotency_key: request.header('idempotency-key') ?? id })
      .execute();
  }

  async complete(staged: StagedUpload, request: ApiRequest): Promise<string> {
    const fileId = await this.answerWithin(this.delivery(staged, request));
    const { db, records } = await this.open();
    try {
      await inTransaction(db, (trx) => staged.finish(trx, fileId));
    } catch (error) {
      // Finished meanwhile by the delivery itself (no request was waiting when it succeeded).
      const row = await records.find(staged.row.id);
      if (row?.file_id !== fileId) throw error;
    }
    return fileId;
  }

  /** The upload's delivery: the one under way, or a new one (run in its turn, tracked until it ends). */
  private delivery(staged: StagedUpload, request: ApiRequest): Promise<string> {
    const { id } = staged.row;
    const running = this.deliveries.get(id);
    if (running) return running;
    const turn = `${staged.row.user_id}\n${staged.row.filename}\n${staged.row.upload_length}`;
    const previous = this.turns.get(turn) ?? Promise.resolve();
    const delivery = previous.catch(() => {}).then(() => this.deliverOnce(staged, request));
    const settled = delivery.catch(() => {});
    this.turns.set(turn, settled);
    this.deliveries.set(id, delivery);
    const tracked = delivery
      .then((fileId) => this.finishUnattended(id, fileId))
      .catch((error: unknown) => {
        if (!(error instanceof UpstreamAnswer || error instanceof ApiError)) this.log.error(`[parley] proxy: delivering upload ${id} upstream failed:`, error);
      })
      .finally(() => {
        if (this.deliveries.get(id) === delivery) this.deliveries.delete(id);
        if (this.turns.get(turn) === settled) this.turns.delete(turn);
        this.inFlight.delete(tracked);
      });
    this.inFlight.add(tracked);
    return delivery;
  }

  /** The delivery's file id, if it comes within answerWithinMs; else 503 (the delivery goes on). */
  private async answerWithin(delivery: Promise<string>): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ApiError(
              'service_unavailable',
              'The upstream service has not taken this upload yet. Its bytes are kept and the proxy goes on delivering it: ask again (HEAD) after Retry-After',
              undefined,
              {},
              { 'Retry-After': String(Math.max(1, Math.ceil(this.answerWithinMs / 1000))) },
            ),
          ),
        this.answerWithinMs,
      );
    });
    try {
      return await Promise.race([delivery, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A delivery succeeded: the upload is finished with its file unless a request holding the
   * upload's lease is there to do it (it waits for the same delivery and finishes it itself).
   */
  private async finishUnattended(id: string, fileId: string): Promise<void> {
    const { db, records, drain } = await this.open();
    // The chunks' blobs are queued for removal by trigger, in this transaction.
    const finished = await inTransaction(db, (trx) =>
      records.finishUnheld(trx, id, fileId, Math.floor(Date.now() / 1000) + this.settings.uploads.expirySeconds, Date.now()),
    );
    if (finished) await drain();
  }

  /** Delivers the upload once; a final answer other than 401 ends the upload (its bytes go). */
  private async deliverOnce(staged: StagedUpload, request: ApiRequest): Promise<string> {
    const { db, records } = await this.open();
    const kept = await staging(db).selectFrom('proxy_uploads').select('idempotency_key').where('upload_id', '=', staged.row.id).executeTakeFirst();
    try {
      return await this.deliver(db, records, staged, kept?.idempotency_key ?? staged.row.id, request);
    } catch (error) {
      // Final: the upload can never become this file. A refused token is not the upload's fault.
      if (error instanceof UpstreamAnswer && error.status !== 401) {
        await records.delete(staged.row.id);
      }
      throw error;
    }
  }

  // ---- the upstream ----

  /** The Authorization the upstream gets for this request (UPSTREAM_TOKEN, else the client's). */
  private authorization(request: ApiRequest): string {
    const headers = forwardRequestHeaders((name) => (name === 'authorization' ? request.header(name) : null), {
      token: this.settings.upstreamToken,
      withAuthorization: true,
    });
    if (!headers.authorization) throw unauthenticated();
    return headers.authorization;
  }

  private headersFor(request: ApiRequest): Record<string, string> {
    const pass = new Set(['authorization', 'user-agent', 'x-request-id']);
    const headers = forwardRequestHeaders((name) => (pass.has(name) ? request.header(name) : null), {
      token: this.settings.upstreamToken,
      withAuthorization: true,
    });
    headers.accept = 'application/json';
    return headers;
  }

  /** One bodyless GET upstream with the request's token; its status, (small) text and Date. */
  private async ask(request: ApiRequest, target: string): Promise<{ status: number; text: string; date: string | null }> {
    this.authorization(request);
    try {
      const { response } = await this.upstream.send({ method: 'GET', path: this.settings.basePath + target, headers: this.headersFor(request), body: null });
      return { status: response.statusCode ?? 502, text: await readText(response), date: response.headers.date ?? null };
    } catch (error) {
      if (error instanceof UpstreamError) throw new ApiError(error.kind === 'timeout' ? 'upstream_timeout' : 'upstream_unavailable', error.message);
      throw new ApiError('upstream_unavailable', 'The upstream service broke off its answer');
    }
  }

  /** The user a token belongs to, in the upstream's eyes; 401 when the upstream refuses it. */
  private async identify(request: ApiRequest): Promise<string> {
    const authorization = this.authorization(request);
    const me = await this.ask(request, '/v1/me');
    if (me.status === 401) throw unauthenticated();
    if (me.status === 200) {
      const id = parseJson(me.text)?.id;
      if (typeof id === 'string' && id !== '') return `me:${id}`;
      throw upstreamRefused(me.status);
    }
    if (me.status !== 404 && me.status !== 405) throw upstreamRefused(me.status);
    // An upstream without /v1/me: the token must still be one it accepts.
    const page = await this.ask(request, '/v1/conversations?limit=1');
    if (page.status === 401) throw unauthenticated();
    if (page.status !== 200) throw upstreamRefused(page.status);
    return `token:${createHash('sha256').update(authorization).digest('hex')}`;
  }

  /**
   * POST /v1/files upstream, from the staged bytes, until the upstream answers — looking first
   * for the file an earlier POST of this delivery may have made (delivered.ts). Returns the file id.
   */
  private async deliver(db: Db, records: UploadRecords, staged: StagedUpload, idempotencyKey: string, request: ApiRequest): Promise<string> {
    const { row } = staged;
    const target: DeliveryTarget = { conversationId: row.conversation_id, messageId: row.message_id, filename: row.filename, size: row.upload_length };
    const list: Lister = async (target) => {
      const answer = await this.unlessStopping(this.ask(request, target));
      if (answer.status === 401) throw new UpstreamAnswer(401, 'application/json; charset=utf-8', answer.text);
      return answer;
    };
    const state = await this.deliveryState(db, row.id);
    const boundary = `parley-${newId(24)}`;
    const [field, value] = row.conversation_id !== null ? ['conversation_id', row.conversation_id] : ['message_id', row.message_id!];
    // The declared type only when it is a plain header value; otherwise none (the upstream sniffs).
    const declared = row.file_type !== null && /^[\x21-\x7e][\x20-\x7e]*$/.test(row.file_type) ? `Content-Type: ${row.file_type}\r\n` : '';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"\r\n\r\n${value}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${row.filename.replace(/"/g, '\\"')}"\r\n${declared}\r\n`,
      'utf8',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const headers = {
      ...this.headersFor(request),
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + row.upload_length + tail.length),
      'idempotency-key': idempotencyKey,
    };
    for (let attempt = 1; ; attempt++) {
      // Terminated (DELETE) while the delivery was being retried: its bytes are gone, and so is
      // the reason to deliver it. The request that was completing it answers as for a missing upload.
      if (attempt > 1 && (await records.find(row.id)) === undefined) throw notFound('upload');
      let why: string;
      let retryAfterMs = 0;
      let body: Readable | null = null;
      try {
        if (state.file_id !== null) return state.file_id;
        if (state.snapshot === 0) {
          const snapshot = await takeSnapshot(list, target);
          await this.noteDelivery(db, row.id, { snapshot: 1, newest_file_id: snapshot.newestFileId, server_time: snapshot.serverTime });
          Object.assign(state, { snapshot: 1, newest_file_id: snapshot.newestFileId, server_time: snapshot.serverTime });
        }
        if (state.sent === 1) {
          // A POST went out whose answer never came (or came as a failure it may not mean): the
          // file may be there already. Never send it twice.
          const found = await findDelivered(list, target, { newestFileId: state.newest_file_id, serverTime: state.server_time }, (id) => this.claimed(db, records, row.id, id));
          if (found !== null) {
            await this.noteDelivery(db, row.id, { file_id: found });
            return found;
          }
        } else {
          await this.noteDelivery(db, row.id, { sent: 1 });
          state.sent = 1;
        }
        const sending = Readable.from(
          (async function* () {
            yield head;
            yield* staged.bytes();
            yield tail;
          })(),
          { objectMode: false },
        );
        body = sending;
        const { response } = await this.unlessStopping(this.upstream.send({ method: 'POST', path: `${this.settings.basePath}/v1/files`, headers, body: sending }));
        const status = response.statusCode ?? 502;
        const text = await this.unlessStopping(readText(response));
        if (status >= 200 && status < 300) {
          const id = parseJson(text)?.id;
          if (typeof id === 'string' && ID_PATTERN.test(id)) {
            await this.noteDelivery(db, row.id, { file_id: id });
            return id;
          }
          throw new UpstreamAnswer(502, 'application/json; charset=utf-8', JSON.stringify(upstreamRefused(status).body()));
        }
        const code = parseJson(text)?.code;
        const retryable = status >= 500 || status === 408 || status === 429 || (status === 409 && code === 'idempotency_in_progress');
        if (!retryable) throw new UpstreamAnswer(status, response.headers['content-type'], text);
        why = `HTTP ${status}`;
        const after = Number(response.headers['retry-after']);
        if (Number.isFinite(after) && after > 0) retryAfterMs = Math.min(after * 1000, this.retry.maxMs);
      } catch (error) {
        body?.destroy();
        if (error instanceof UpstreamAnswer || error instanceof ApiError) {
          // Asking where the file stands failed: as a failed attempt, unless the upstream said
          // something final about the target (its conversation gone: 404).
          const passing = error instanceof ApiError && (error.code === 'upstream_unavailable' || error.code === 'upstream_timeout');
          if (!passing) throw error;
          why = error.message;
        } else if (error instanceof ListingRefused) {
          const retryable = error.status >= 500 || error.status === 408 || error.status === 429;
          if (!retryable) throw new UpstreamAnswer(error.status, 'application/json; charset=utf-8', error.text);
          why = `listing files: HTTP ${error.status}`;
        } else {
          why = error instanceof UpstreamError ? `${error.kind}: ${error.detail}` : `the answer broke off (${String(error)})`;
        }
      }
      const wait = Math.max(retryAfterMs, Math.min(this.retry.maxMs, this.retry.firstMs * 2 ** Math.min(attempt - 1, 20)) * (0.5 + Math.random() / 2));
      this.log.error(`[parley] proxy: delivering upload ${row.id} upstream (attempt ${attempt}): ${why}; again in ${Math.round(wait)} ms`);
      let timer: NodeJS.Timeout | undefined;
      await this.unlessStopping(new Promise((resolve) => (timer = setTimeout(resolve, wait)))).finally(() => clearTimeout(timer));
    }
  }

  /** What this upload's delivery knows so far (a new row when it has not begun). */
  private async deliveryState(db: Db, uploadId: string): Promise<DeliveryRow> {
    const found = await staging(db).selectFrom('proxy_deliveries').selectAll().where('upload_id', '=', uploadId).executeTakeFirst();
    if (found) return found;
    const fresh: DeliveryRow = { upload_id: uploadId, snapshot: 0, newest_file_id: null, server_time: null, sent: 0, file_id: null };
    await staging(db).insertInto('proxy_deliveries').values(fresh).onConflict((oc) => oc.column('upload_id').doNothing()).execute();
    return fresh;
  }

  private async noteDelivery(db: Db, uploadId: string, change: Partial<Omit<DeliveryRow, 'upload_id'>>): Promise<void> {
    await staging(db).updateTable('proxy_deliveries').set(change).where('upload_id', '=', uploadId).execute();
  }

  /** Whether another staged upload already has `fileId` as its file (delivered.ts: not ours then). */
  private async claimed(db: Db, records: UploadRecords, uploadId: string, fileId: string): Promise<boolean> {
    if (await records.otherWithFile(fileId, uploadId)) return true;
    const byDelivery = await staging(db).selectFrom('proxy_deliveries').select('upload_id').where('file_id', '=', fileId).where('upload_id', '!=', uploadId).executeTakeFirst();
    return byDelivery !== undefined;
  }

  /** `work`, unless the proxy starts closing first: then 503 (the upload stays staged; the client resumes later). */
  private unlessStopping<T>(work: Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(shuttingDown());
    return Promise.race([
      work,
      this.stopping.then(() => {
        void work.catch(() => {});
        throw shuttingDown();
      }),
    ]);
  }

  // ---- local state ----

  private open(): Promise<Opened> {
    if (this.closed) return Promise.reject(shuttingDown());
    this.opening ??= this.openNow().catch((error) => {
      this.opening = null;
      throw error;
    });
    return this.opening;
  }

  private async openNow(): Promise<Opened> {
    const opened = await openDb({ dataDir: this.dir, log: this.log });
    const db = opened.db;
    try {
      await sql`create table if not exists proxy_uploads (
        upload_id text primary key references uploads (id) on delete cascade,
        idempotency_key text not null)`.execute(db);
      await sql`create table if not exists proxy_deliveries (
        upload_id text primary key references uploads (id) on delete cascade,
        snapshot integer not null default 0,
        newest_file_id text,
        server_time integer,
        sent integer not null default 0,
        file_id text)`.execute(db);
      const store = new DiskBlobStore(this.dir);
      // What a previous process was writing when it stopped (one proxy process per DATA_DIR).
      await store.removeUnfinished(0);
      const deletions = new BlobDeletionQueue(db, store, this.log);
      let pass: Promise<unknown> = Promise.resolve();
      const drain = () => {
        const next = pass.then(() => deletions.drain());
        pass = next.catch(() => {});
        return next;
      };
      await drain();
      const uploads = new TusUploads({
        db,
        store,
        completion: this,
        idempotency: new IdempotencyStore(db, true),
        config: { maxUploadBytes: this.settings.maxUploadBytes, uploads: this.settings.uploads },
        published: () => {},
        drainDeletions: drain,
        log: this.log,
      });
      const failed = (what: string) => (error: unknown) => this.log.error(`[parley] proxy: ${what} failed:`, error);
      const timers = [
        setInterval(() => void uploads.expire().catch(failed('the expiry pass of staged uploads')), EXPIRY_PASS_MS),
        setInterval(() => void drain().catch(failed('a deletion pass of staged bytes')), DELETION_PASS_MS),
      ];
      for (const timer of timers) timer.unref();
      return {
        uploads,
        db,
        records: uploads.records,
        drain,
        close: async () => {
          timers.forEach(clearInterval);
          await pass;
          await opened.close();
        },
      };
    } catch (error) {
      await opened.close();
      throw error;
    }
  }

  private failure(request: ApiRequest, error: unknown): ApiReply {
    if (error instanceof UpstreamAnswer) {
      return {
        status: error.status,
        headers: { 'Content-Type': error.contentType ?? 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...TUS_HEADERS },
        body: error.text,
      };
    }
    let answer: ApiError;
    if (error instanceof ApiError) answer = error;
    else {
      const failure = storageFailure(error);
      this.log.error(`[parley] proxy: ${request.method} /v1/uploads: ${failure ? `staging storage ${failure}` : 'internal error'}:`, error);
      answer = failure ? storageFailureError(failure) : internalError();
    }
    return { status: answer.status, headers: { ...JSON_HEADERS, ...answer.headers }, body: JSON.stringify(answer.body()) };
  }
}

const shuttingDown = () => new ApiError('service_unavailable', 'The proxy is shutting down; a staged upload stays staged: resume it later', undefined, {}, { 'Retry-After': '5' });

const upstreamRefused = (status: number) =>
  new ApiError('upstream_unavailable', `The upstream service answered HTTP ${status} where the contract says otherwise`);

function reply(result: ApiResult): ApiReply {
  if (result.body === undefined) return { status: result.status, headers: { 'Cache-Control': 'no-store', ...result.headers }, body: null };
  return { status: result.status, headers: { ...JSON_HEADERS, ...result.headers }, body: JSON.stringify(result.body) };
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/** A small answer, whole (more than ANSWER_LIMIT: an error — the contract's answers here are small). */
async function readText(response: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const piece of response) {
    const chunk = chunkBytes(piece);
    size += chunk.length;
    if (size > ANSWER_LIMIT) {
      response.destroy();
      throw new Error('the answer is larger than expected');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
