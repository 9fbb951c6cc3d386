// A cancelled upload, on the replay's side (the user's side is intents/cancel-upload.ts, the state
// change lifecycle.ts `cancelled`): the upload ended on the server — the tus upload terminated
// (its HEAD first: a completed one names its file), the file deleted if one was made; 404 or 410
// of either is done. Plain requests (tus-requests.ts, no tus-js-client), so any replayer can send
// them. Also the two ways a cancel meets an upload already under way: a request out when the user
// cancelled (`cancelledMeanwhile`), and an answer that arrives after the cancel (`unlessCancelled`).
import { call, type Outcome } from '../core/http';
import { gone } from '../core/classify';
import type { ParleyDb } from '../mirror/db';
import * as apply from './apply';
import * as lifecycle from './lifecycle';
import type { OutboxOp } from './operations';
import type { TusAttempt } from './resumable-upload';
import { headUpload, locateUpload, terminateUpload, type TusRequestDeps } from './tus-requests';
import { verifyUpload } from './upload-verification';

export interface CancellationDeps extends TusRequestDeps {
  db: ParleyDb;
}

/**
 * Ends a cancelled upload (`op.cancelledUpload`) on the server; ok: the effect to record (the
 * file's deletion), with which the row leaves the outbox like any answered operation. A failure
 * is settled as a later step's ('after'): the operation may have been sent.
 * `key`: the operation's Idempotency-Key; `idempotent`: the server is known to honour keys.
 */
export async function endCancelledUpload(
  deps: CancellationDeps,
  op: OutboxOp,
  key: string,
  idempotent: boolean,
): Promise<Outcome<apply.Effect>> {
  const cancelled = op.cancelledUpload!;
  let fileId = cancelled.fileId;
  if (!fileId && !op.tus && op.outcomeUnknown && op.snapshot && !idempotent) {
    // Sent as POST /v1/files, answer lost, on a server without keys: did it make the file?
    const found = await verifyUpload(deps, { ...op, body: cancelled.upload });
    if (found.kind !== 'ok') return found; // still unknown: verified again next time
    fileId = found.value?.id ?? null;
  }
  let url = op.tus?.url ?? null;
  if (url === null && op.tus?.bytesKey && !fileId) {
    // Its creation went with the file's bytes and no answer came: the upload (or even its file)
    // may exist. The same creation again, without the bytes, names it.
    const found = await locateUpload(deps, op.tus.bytesKey, cancelled.upload);
    if (found.kind !== 'ok') return found;
    url = found.value.url;
    fileId = found.value.fileId;
  }
  const ended = await terminate(deps, url, fileId, key);
  if (ended.kind !== 'ok') return ended;
  return { ...ended, value: apply.fileDeleted };
}

/**
 * The row of an upload whose request was out, as stored now, if the user cancelled it meanwhile
 * (a POST /v1/files cannot be aborted from here; a tus transfer was). `unknown`: the request's
 * answer was lost, so it may have made the file (the cancellation then verifies).
 */
export async function cancelledMeanwhile(db: ParleyDb, op: OutboxOp, unknown = false): Promise<OutboxOp | null> {
  const current = await db.outbox.get(op.seq);
  if (!current?.cancelledUpload) return null;
  return unknown && !current.outcomeUnknown ? { ...current, outcomeUnknown: true } : current;
}

/**
 * A tus attempt the user cancelled while it ran (the transfer was aborted), or just as it completed
 * or failed: the row to end now, under the same claim. One whose creation made the file (the
 * whole file in one request) keeps that creation's URL, so that its record goes too.
 */
export async function cancelledAfterTransfer(db: ParleyDb, current: OutboxOp, attempt: TusAttempt): Promise<OutboxOp> {
  if (attempt.outcome.kind !== 'ok') return current;
  const made = lifecycle.cancelledUploadMade(current, attempt.outcome.value, attempt.url ?? null);
  await apply.writeOutbox(db, current.seq, { kind: 'update', change: made });
  return { ...current, ...made };
}

/**
 * An upload's answer, recorded unless the user cancelled the upload while its request was out:
 * then the file it made is to be deleted. Recorded answers leave the outbox, so the cancellation
 * is queued again (lifecycle.ts `done`, `cancelRequeued`) in the same transaction, naming the file.
 */
export function unlessCancelled(fileId: string, effect: apply.Effect): apply.Effect {
  return async (db, op, batch) => {
    const current = await db.outbox.get(op.seq);
    if (!current?.cancelledUpload) return effect(db, op, batch);
    await apply.writeOutbox(db, op.seq, lifecycle.done(current, fileId));
    return [op.entityId];
  };
}

/**
 * HEAD of the tus upload (gone: already ended; a completed one names its file), the file deleted
 * (DELETE /v1/files/:id, gone = done), then the upload terminated (DELETE <url>, tus termination:
 * its stored bytes go; gone = done).
 */
async function terminate(deps: CancellationDeps, url: string | null, knownFileId: string | null, key: string): Promise<Outcome<null>> {
  let fileId = knownFileId;
  if (url !== null) {
    const head = await headUpload(deps, url);
    if (gone(head)) url = null;
    else if (head.kind !== 'ok') return head;
    else fileId ??= head.value.headers.get('upload-file-id');
  }
  if (fileId) {
    const deleted = await call(deps, { method: 'DELETE', path: `v1/files/${fileId}`, idempotencyKey: `${key}~file` }, null);
    if (deleted.kind !== 'ok' && !gone(deleted)) return deleted;
  }
  if (url !== null) {
    const ended = await terminateUpload(deps, url, `${key}~upload`);
    if (ended.kind !== 'ok' && !gone(ended)) return ended;
  }
  return { kind: 'ok', value: null, replayed: false, serverTime: null };
}
