// Transaction scopes: which tables each kind of read-write transaction may touch, defined once,
// beside the schema (db.ts). IndexedDB refuses a table outside the scope, so a scope must cover
// everything its work reaches: a rebuild (rebase.ts) reads the outbox and writes visible rows and
// server copies; the others add what their own work writes.
import type { ParleyDb } from './db';

/** A rebuild of visible rows: the rows, their server copies, and the outbox it projects. */
export function viewScope(db: ParleyDb) {
  return [db.conversations, db.files, db.serverConversations, db.serverFiles, db.outbox];
}

/** A write of the user's (outbox/client.ts): a rebuild, a queued upload's bytes, temp-id aliases. */
export function userWriteScope(db: ParleyDb) {
  return [...viewScope(db), db.uploadChunks, db.idAliases];
}

/** A pull's page, event or scan result: a rebuild, where files were placed, the pull's cursor. */
export function pullScope(db: ParleyDb) {
  return [...viewScope(db), db.fileScans, db.meta];
}

/** Recording the server's answers (outbox/apply.ts, replay.ts): everything a sync may write. */
export function answerScope(db: ParleyDb) {
  return [...userWriteScope(db), db.fileScans, db.meta];
}

/**
 * Recording a batch of answers (outbox/apply.ts `recordAnswers`): `answerScope` without the queued
 * bytes. The next uploads' bytes are read while answers are recorded, and a read waits for every
 * read-write transaction over its table that began before it; the answered uploads' bytes are
 * dropped apart (outbox/chunks.ts `dropChunks`, by the replay when it ends).
 */
export function recordScope(db: ParleyDb) {
  return [...viewScope(db), db.idAliases, db.fileScans, db.meta];
}
