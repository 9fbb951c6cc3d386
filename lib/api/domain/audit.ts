// The audit trail: who did what to which record, append-only, in the service's own database.
//
// One row per action: time (ms), user, device token id (`static` for a PARLEY_TOKENS token, null
// for a signed /files URL), action, the object (its kind and id, and the conversation a request
// named), the client's address and the outcome (the HTTP status, or ok/refused for the CLI). Never
// contents: no file names, contact or group ids, bodies, query strings or paths.
//
// Durability:
// - A write (create, update, delete) records its row in the SAME transaction as the change
//   (`AuditNote.record`, called by IdempotencyStore.run before the commit): the change and its
//   record commit together or not at all.
// - Everything else (list, read, download, and writes that changed nothing: refusals, replays) is
//   queued in memory and written in one INSERT per batch, every FLUSH_MS or FLUSH_ROWS rows, off
//   the request's path, and at shutdown. A crash (kill -9, power cut) can lose the reads of the
//   last batch (at most ~FLUSH_MS of them); never a write's record.
//
// Other code (sign-in, pairing, the token CLI's revoke/wipe) records with `recordAudit(db, entry)`:
// given a transaction, the row commits with the change it describes.
import { sql, type Selectable } from 'kysely';
import { sqliteConnection, type AuditTableRow, type Db, type DialectName } from '../storage/db';
import type { ApiResult } from '../result';

export const AUDIT_ACTIONS = ['list', 'read', 'download', 'create', 'update', 'delete', 'sign-in', 'pairing', 'revoke', 'wipe'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

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
  /** The HTTP status as a number, or `ok` / `refused`. */
  outcome: number | 'ok' | 'refused';
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

/** Writes one audit row now, with `db` (a transaction: the row commits with it). */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit').values(toRow(entry, Date.now())).execute();
}

const FLUSH_MS = 100;
const FLUSH_ROWS = 500;
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
  const body = result.body as { id?: unknown } | undefined;
  if (body && typeof body.id === 'string') return body.id;
  const location = result.headers?.Location;
  return location ? (location.split('/').pop() ?? null) : null;
}

export interface AuditTrailOptions {
  enabled: boolean;
  retentionDays: number;
  dialect: DialectName;
  log: Pick<Console, 'error'>;
}

/** The batched writer of reads, and the retention prune. */
export class AuditTrail {
  private pending: NewRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: AuditTrailOptions,
  ) {}

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Queues a row; written within FLUSH_MS (or at once when FLUSH_ROWS are waiting). */
  enqueue(entry: AuditEntry): void {
    if (!this.options.enabled || this.closed) return;
    if (this.pending.length >= MAX_PENDING) {
      this.dropped++;
      return;
    }
    this.pending.push(toRow(entry, Date.now()));
    if (this.pending.length >= FLUSH_ROWS) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes what is queued, in one INSERT per FLUSH_ROWS rows; one flush at a time. */
  flush(): Promise<void> {
    const pass = this.flushing.then(() => this.write());
    this.flushing = pass.catch(() => {});
    return pass;
  }

  private async write(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.dropped > 0) {
      this.options.log.error(`[parley] the audit trail dropped ${this.dropped} read records: the database refused them for too long`);
      this.dropped = 0;
    }
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, FLUSH_ROWS);
      try {
        await this.insert(batch);
      } catch (error) {
        // Kept for the next pass (the database may be back by then).
        this.pending.unshift(...batch);
        this.options.log.error('[parley] writing audit records failed (kept for the next pass):', error);
        if (!this.timer) {
          this.timer = setTimeout(() => void this.flush(), 1000);
          this.timer.unref();
        }
        return;
      }
    }
  }

  private sqliteInsert: ((rows: NewRow[]) => void) | null | undefined;

  /**
   * One batch, in one transaction. On SQLite with one prepared statement on the connection Kysely
   * holds for us (building a 500-row INSERT through Kysely costs about as much again per row).
   */
  private async insert(rows: NewRow[]): Promise<void> {
    if (this.sqliteInsert === undefined) {
      const raw = this.options.dialect === 'sqlite' ? sqliteConnection(this.db) : undefined;
      if (raw) {
        const statement = raw.prepare(
          'insert into audit (at, user_id, token_id, action, object_type, object_id, conversation_id, address, outcome) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        );
        this.sqliteInsert = raw.transaction((batch: NewRow[]) => {
          for (const r of batch) statement.run(r.at, r.user_id, r.token_id, r.action, r.object_type, r.object_id, r.conversation_id, r.address, r.outcome);
        });
      } else this.sqliteInsert = null;
    }
    const sqliteInsert = this.sqliteInsert;
    if (sqliteInsert) await this.db.connection().execute(async () => sqliteInsert(rows));
    else await this.db.insertInto('audit').values(rows).execute();
  }

  /** Deletes rows older than AUDIT_RETENTION_DAYS at `now` (Unix ms); the only delete there is. */
  async prune(now = Date.now()): Promise<number> {
    const before = now - this.options.retentionDays * 24 * 3600_000;
    return pruneAudit(this.db, this.options.dialect, before);
  }

  /** At shutdown (requests in flight have ended): what is queued is written, and nothing after. */
  async close(): Promise<void> {
    await this.flush().catch(() => {});
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
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
  return (await q.orderBy('seq').execute()) as AuditRow[];
}
