// The audit trail: who did what to which record, append-only, in the service's own database.
//
// One row per action: time (ms), user, device token id (`static` for a PARLEY_TOKENS token, null
// for a signed /files URL), action, the object (its kind and id, and the conversation a request
// named), the client's address and the outcome (the HTTP status, or ok/refused for the CLI). Never
// contents: no file names, contact or group ids, bodies, query strings or paths.
//
// Durability: a record is durable before or with what it describes.
// - A write (create, update, delete) records its row in the SAME transaction as the change
//   (`AuditNote.record`, called by IdempotencyStore.run before the commit): the change and its
//   record commit together or not at all.
// - A read (list, read, download, and writes that changed nothing: refusals, replays) changes
//   nothing; what it "does" is send data out. Its row is committed BEFORE its answer is sent
//   (`AuditTrail.enqueue` resolves on commit; ApiService.dispatch waits for it): a group commit,
//   one INSERT for all the rows of the requests answered meanwhile, written off the request thread
//   (storage/audit-writer.ts). So a crash (kill -9, a power cut within the database's own
//   guarantees) never loses the record of a read whose answer left the server. The one exception
//   is chosen: while the database refuses rows (full disk), answers are not held back; the rows
//   wait in memory for the next attempt (every second) and a crash then loses them (logged).
//
// Other code (sign-in, pairing, the token CLI's revoke/wipe) records with `recordAudit(db, entry)`:
// given a transaction, the row commits with the change it describes.
import { sql, type Selectable } from 'kysely';
import { sqliteFileOf, type AuditTableRow, type Db, type DialectName } from '../storage/db';
import { connectionAuditWriter, poolAuditWriter, threadAuditWriter, withFallback, type AuditTuple, type AuditWriter } from '../storage/audit-writer';
import type { ApiResult } from '../result';
import { prepare, type Prepared } from '../storage/prepared';
import { fieldOf } from '../../records';

export const AUDIT_ACTIONS = ['list', 'read', 'download', 'create', 'update', 'delete', 'sign-in', 'pairing', 'revoke', 'wipe'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The user of a failed sign-in that named none (a bad state, an unknown token): no user id can look like it. */
export const UNKNOWN_USER = '(unknown)';

/** What a static token (PARLEY_TOKENS) is recorded as: it has no id. */
export const STATIC_TOKEN_ID = 'static';

export interface AuditEntry {
  user: string;
  /** The device token's id; `static` for PARLEY_TOKENS; null when there is none (a signed /files URL, the CLI). */
  token: string | null;
  action: AuditAction;
  /** What kind of record: conversation, file, upload, token, event, … (null: none). */
  objectType?: string | null;
  /** The record's id (null for a list, or a create that was refused). */
  objectId?: string | null;
  /** The conversation the request named (a list filtered by it). */
  conversationId?: string | null;
  /** The client's address as the socket saw it (null when unknown, or for the CLI). */
  address?: string | null;
  /** The HTTP status as a number, `ok` / `refused` (the CLI), or `refused:<reason>` (a failed sign-in). */
  outcome: number | 'ok' | 'refused' | `refused:${string}`;
  /** Unix milliseconds (default: now). */
  at?: number;
}

/** A stored row (what `npm run audit` prints): the table's, as read. */
export type AuditRow = Selectable<AuditTableRow>;

type NewRow = Omit<AuditRow, 'seq'>;

function toRow(entry: AuditEntry, now: number): NewRow {
  return {
    at: entry.at ?? now,
    user_id: entry.user,
    token_id: entry.token,
    action: entry.action,
    object_type: entry.objectType ?? null,
    object_id: entry.objectId ?? null,
    conversation_id: entry.conversationId ?? null,
    address: entry.address ?? null,
    outcome: String(entry.outcome),
  };
}

/** The INSERT of one row, built and compiled once per database (keyed by its adapter, which its transactions share). */
const insertsByAdapter = new WeakMap<object, Prepared<NewRow, unknown>>();

function insertOf(db: Db): Prepared<NewRow, unknown> {
  const adapter = db.getExecutor().adapter;
  let insert = insertsByAdapter.get(adapter);
  if (!insert) {
    insert = prepare<NewRow, unknown>(db, (slot) =>
      db.insertInto('audit').values({
        at: slot('at'),
        user_id: slot('user_id'),
        token_id: slot('token_id'),
        action: slot('action'),
        object_type: slot('object_type'),
        object_id: slot('object_id'),
        conversation_id: slot('conversation_id'),
        address: slot('address'),
        outcome: slot('outcome'),
      }),
    );
    insertsByAdapter.set(adapter, insert);
  }
  return insert;
}

/** Writes one audit row now, with `db` (a transaction: the row commits with it). Every write's row: no query is built for it. */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await insertOf(db)(db, toRow(entry, Date.now()));
}

/**
 * How many turns of the event loop a group may wait for more rows before it is handed over, and
 * the rows that make it go at once. A commit costs about as much for one row as for thirty (every
 * index page and the sequence are written to the WAL again): under a steady load of reads each turn
 * answers about one request (http/fair-share.ts), so a group handed over at once held one to three
 * rows, and the writer's commits cost more than the requests. But a group also goes at the first
 * turn that added no row to it: reads have stopped coming (or every reader is waiting for this
 * group), so waiting longer gathers nothing and only holds the answers back. That is the case of a
 * read beside a flood of writes (their rows commit with their changes, not here), where each turn
 * is a write's work: eight of them held the read's answer 4-8 ms. An idle loop turns in
 * microseconds.
 */
const GATHER_TURNS = 8;
const FULL_GROUP = 32;
/** The most rows one INSERT carries. */
const FLUSH_ROWS = 500;
/** After a refused batch: when the next attempt is made. */
const RETRY_MS = 1000;
/** Rows waiting beyond this (the database refusing them for long) are dropped, and counted in the log. */
const MAX_PENDING = 100_000;

/**
 * One request's audit entry, made by the service once the request is authenticated. A write's
 * transaction calls `record` before its commit; whatever was not recorded that way is queued when
 * the answer is known (`ApiService.dispatch`).
 */
export class AuditNote {
  /** Set once the change's transaction, with the row in it, has committed (IdempotencyStore.run). */
  recorded = false;

  constructor(
    readonly entry: Omit<AuditEntry, 'outcome'>,
  ) {}

  /** Inside the write's transaction, with its result: the row commits with the change. */
  async record(trx: Db, result: ApiResult): Promise<void> {
    await recordAudit(trx, { ...this.entry, objectId: this.entry.objectId ?? createdId(result), outcome: result.status });
  }

  /** The created record's id, when the answer names one (a replayed create's too). */
  learn(result: ApiResult): void {
    this.entry.objectId ??= createdId(result);
  }
}

/** The id a create answered with: the body's `id`, or a tus Location. */
function createdId(result: ApiResult): string | null {
  if (result.status >= 300) return null;
  const id = fieldOf(result.body, 'id');
  if (typeof id === 'string') return id;
  const location = result.headers?.Location;
  return location ? (location.split('/').pop() ?? null) : null;
}

export interface AuditTrailOptions {
  enabled: boolean;
  retentionDays: number;
  dialect: DialectName;
  log: Pick<Console, 'error'>;
}

/** The row as the writer takes it, straight from the entry (no row object in between: one per read). */
function toTuple(entry: Omit<AuditEntry, 'outcome'>, outcome: AuditEntry['outcome'], now: number): AuditTuple {
  return [
    entry.at ?? now,
    entry.user,
    entry.token,
    entry.action,
    entry.objectType ?? null,
    entry.objectId ?? null,
    entry.conversationId ?? null,
    entry.address ?? null,
    String(outcome),
  ];
}

/** The rows of one group commit, and the answers that wait for it (one promise for them all). */
class Group {
  readonly rows: AuditTuple[] = [];
  readonly committed: Promise<void>;
  settle!: () => void;
  constructor() {
    this.committed = new Promise<void>((resolve) => (this.settle = resolve));
  }
}

/**
 * The group commit of reads (and of writes that changed nothing), and the retention prune.
 *
 * The rows queued over a few turns of the event loop (GATHER_TURNS) form a group, handed to the
 * writer (SQLite: a thread of its own, one group at a time; PostgreSQL: the pool) in INSERTs of up
 * to FLUSH_ROWS rows. `enqueue` resolves once its row is committed, and the service sends the
 * answer only then, so no read's answer leaves the server
 * before its record is as durable as a write's (see the top of this file). What this costs the
 * request thread per row is one array in a list: one promise serves the whole group.
 */
export class AuditTrail {
  private group = new Group();
  /**
   * SQLite's writer (one thread, one connection) takes groups one at a time anyway: there the next
   * group waits for the answer to the one it has, and the rows of the meantime share one commit.
   * PostgreSQL's pool writes groups side by side: each goes once gathered.
   */
  private readonly oneAtATime: boolean;
  /** A group is with a writer that takes one at a time. */
  private writing = false;
  /** Groups handed to the writer and not yet answered (it writes them in order). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Rows the database refused, written at the next try (no answer waits for them). */
  private refused: AuditTuple[] = [];
  private retry: NodeJS.Timeout | null = null;
  private dropped = 0;
  private closed = false;
  private readonly writer: AuditWriter;

  constructor(
    private readonly db: Db,
    private readonly options: AuditTrailOptions,
  ) {
    this.oneAtATime = options.dialect === 'sqlite';
    const file = options.enabled && options.dialect === 'sqlite' ? sqliteFileOf(db) : undefined;
    this.writer = file
      ? withFallback(threadAuditWriter(file), connectionAuditWriter(db), (error) =>
          options.log.error(`[parley] audit trail: ${error.message}; its rows are written on the request thread from now on`),
        )
      : poolAuditWriter(db);
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  /**
   * Queues a row for the next group commit; resolves once it is committed. While the database
   * refuses rows it resolves at once (the answer is not held back from the clinician who asked):
   * the row is kept and written by a later try, and the refusal is logged.
   */
  enqueue(entry: AuditEntry): Promise<void> {
    return this.enqueueWith(entry, entry.outcome);
  }

  /** `enqueue` of an entry whose outcome is given apart (a request's note and its answer's status). */
  enqueueWith(entry: Omit<AuditEntry, 'outcome'>, outcome: AuditEntry['outcome']): Promise<void> {
    if (!this.options.enabled || this.closed) return Promise.resolve();
    if (this.refused.length + this.group.rows.length >= MAX_PENDING) {
      this.dropped++;
      return Promise.resolve();
    }
    const row = toTuple(entry, outcome, Date.now());
    if (this.retry) {
      this.refused.push(row);
      return Promise.resolve();
    }
    this.group.rows.push(row);
    // The first row schedules the group, unless a group is being written (the end of that write
    // does). Each row's answer waits for its own group's commit.
    if (this.group.rows.length === 1 && !this.writing) this.sendAfter(GATHER_TURNS);
    return this.group.committed;
  }

  /** Resolves once everything queued so far has been written (or refused). */
  async flush(): Promise<void> {
    this.send();
    if (this.refused.length > 0 && !this.retry) this.sendRefused();
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Hands the group gathered so far to the writer, unless it is busy with one (the end of that one calls this again). */
  private send(): void {
    const group = this.group;
    if (group.rows.length === 0 || this.writing) return;
    this.group = new Group();
    this.writing = this.oneAtATime;
    this.track(group.rows, () => {
      group.settle();
      if (!this.writing) return;
      this.writing = false;
      if (this.group.rows.length > 0) this.sendAfter(GATHER_TURNS);
    });
  }

  /**
   * Hands the group over after `turns` more turns of the event loop, or sooner: at the next turn
   * once it is full, or at a turn that added no row to it (`seen`: its rows at the last look).
   */
  private sendAfter(turns: number, seen = this.group.rows.length): void {
    setImmediate(() => {
      const rows = this.group.rows.length;
      if (turns <= 1 || rows >= FULL_GROUP || rows === seen) this.send();
      else this.sendAfter(turns - 1, rows);
    });
  }

  /** The rows kept from refused tries, again. */
  private sendRefused(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.track(this.refused.splice(0), () => {});
  }

  private track(rows: AuditTuple[], settle: () => void): void {
    if (this.dropped > 0) {
      this.options.log.error(`[parley] the audit trail dropped ${this.dropped} read records: the database refused them for too long`);
      this.dropped = 0;
    }
    const progress = { written: 0 };
    const writing = this.write(rows, progress).then(settle, (error: unknown) => {
      // Kept for the next try (the database may be back by then); the answers go out meanwhile.
      this.refused.unshift(...rows.slice(progress.written));
      this.options.log.error('[parley] writing audit records failed (kept for the next pass):', error);
      settle();
      if (!this.closed && !this.retry) {
        this.retry = setTimeout(() => this.sendRefused(), RETRY_MS);
        this.retry.unref();
      }
    });
    this.inFlight.add(writing);
    void writing.finally(() => this.inFlight.delete(writing));
  }

  /** In INSERTs of at most FLUSH_ROWS rows; `progress` says how many are committed (a refusal stops there). */
  private async write(rows: AuditTuple[], progress: { written: number }): Promise<void> {
    for (; progress.written < rows.length; progress.written += FLUSH_ROWS) await this.writer.write(rows.slice(progress.written, progress.written + FLUSH_ROWS));
  }

  /** At shutdown (requests in flight have ended): what is queued is written, and nothing after. */
  async close(): Promise<void> {
    await this.flush().catch(() => {});
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    await this.writer.close().catch(() => {});
  }

  /** Deletes rows older than AUDIT_RETENTION_DAYS at `now` (Unix ms); the only delete there is. */
  async prune(now = Date.now()): Promise<number> {
    const before = now - this.options.retentionDays * 24 * 3600_000;
    return pruneAudit(this.db, this.options.dialect, before);
  }
}

/**
 * Deletes audit rows older than `before` (Unix ms). On PostgreSQL the table refuses UPDATE and
 * DELETE (migration 0020_audit) except inside a transaction that says it is this prune.
 */
export async function pruneAudit(db: Db, dialect: DialectName, before: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    if (dialect === 'postgres') await sql`select set_config('parley.audit_prune', 'on', true)`.execute(trx);
    const result = await trx.deleteFrom('audit').where('at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}

export interface AuditQuery {
  user?: string;
  /** Unix ms. */
  since?: number;
  object?: string;
}

/** The rows matching, oldest first (the CLI). */
export async function readAudit(db: Db, query: AuditQuery): Promise<AuditRow[]> {
  let q = db.selectFrom('audit').selectAll();
  if (query.user !== undefined) q = q.where('user_id', '=', query.user);
  if (query.since !== undefined) q = q.where('at', '>=', query.since);
  if (query.object !== undefined) {
    const object = query.object;
    q = q.where((eb) => eb.or([eb('object_id', '=', object), eb('conversation_id', '=', object)]));
  }
  return q.orderBy('seq').execute();
}
