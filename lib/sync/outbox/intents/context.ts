// What every user intent (the files beside this one) works with: the database, the clock, and
// `write` — ONE Dexie transaction over the user's write scope, in which an intent appends to the
// outbox and rebuilds the rows it changed, so the change is on screen (in every tab, via live
// queries) at once and survives a crash as a queued intent. The helpers below run inside it.
import { SyncInputError } from '../../core/errors';
import { isConnectionLost, reopen, type EstimateStorage } from '../../core/storage';
import type { ParleyDb } from '../../mirror/db';
import { rebuildViews } from '../../mirror/rebase';
import { userWriteScope } from '../../mirror/scopes';
import { isTempId, newOpId, type OpBody, type OutboxOp } from '../operations';
import { queued, type NewOp } from '../lifecycle';
import type { InputValidators } from './validation';

export interface SyncClientOptions {
  /** Checks the user's input against the API's schemas (validation.ts: the sync worker's on the page). */
  validate: InputValidators;
  now?: () => number;
  /** Called after every committed local write, e.g. to nudge the sync worker. */
  onLocalWrite?: () => void;
  /** navigator.storage.estimate in the page: an upload that cannot fit is refused before queueing. */
  estimateStorage?: EstimateStorage;
}

export interface WriteContext {
  db: ParleyDb;
  validate: InputValidators;
  now: () => number;
  estimateStorage?: EstimateStorage;
  /** Runs `work` in one transaction of the user's write scope, then tells `onLocalWrite`. */
  write<T>(work: () => Promise<T>): Promise<T>;
}

export function createWriteContext(db: ParleyDb, options: SyncClientOptions): WriteContext {
  const tables = userWriteScope(db);
  return {
    db,
    validate: options.validate,
    now: options.now ?? (() => Date.now()),
    estimateStorage: options.estimateStorage,
    async write<T>(work: () => Promise<T>): Promise<T> {
      let result: T;
      try {
        result = await db.transaction('rw', tables, work);
      } catch (error) {
        // The transaction was rolled back as a whole, so one retry cannot double anything.
        // iOS drops the connection ("Connection to Indexed Database server lost"; Dexie then
        // answers DatabaseClosedError and does not reopen by itself): reopen, then retry once.
        if (isConnectionLost(error)) await reopen(db);
        // Safari's IndexedDB sometimes fails a write with UnknownError and succeeds on a retry.
        else if (!(error instanceof Error && error.name === 'UnknownError')) throw error;
        result = await db.transaction('rw', tables, work);
      }
      options.onLocalWrite?.();
      return result;
    },
  };
}

/** A new queued operation, stamped with the context's clock. */
export function newOp(ctx: WriteContext, entity: OutboxOp['entity'], entityId: string, body: OpBody, after?: string[]): NewOp {
  return queued({ id: newOpId(), entity, entityId, body, now: ctx.now(), after });
}

/** A temp id the UI still holds may have been replaced by the server's id meanwhile. */
export async function resolve(ctx: WriteContext, id: string): Promise<string> {
  if (!isTempId(id)) return id;
  return (await ctx.db.idAliases.get(id))?.realId ?? id;
}

/** The queued operations on one entity, in order. */
export async function opsFor(ctx: WriteContext, entityId: string): Promise<OutboxOp[]> {
  return ctx.db.outbox.where('entityId').equals(entityId).sortBy('seq');
}

export async function requireConversation(ctx: WriteContext, id: string): Promise<void> {
  if (!(await ctx.db.conversations.get(id))) throw new SyncInputError(`no conversation ${id}`, 'id');
}

export async function requireFile(ctx: WriteContext, id: string): Promise<void> {
  if (!(await ctx.db.files.get(id))) throw new SyncInputError(`no file ${id}`, 'id');
}

/** Shows these rows again: the server's word with the pending operations on top (rebase.ts). */
export async function rebuild(ctx: WriteContext, ids: { conversations?: Iterable<string>; files?: Iterable<string> }): Promise<void> {
  await rebuildViews(ctx.db, ids, ctx.now());
}
