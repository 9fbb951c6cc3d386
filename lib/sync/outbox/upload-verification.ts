// Uploads against a server without idempotency: did a POST /v1/files whose answer was lost make
// the file?
//
// Before the first send we record the newest file of the target conversation and the server's
// clock (snapshot). If the response is then lost, before sending again we list the
// conversation's files newer than that snapshot (the list is newest-first by an internal
// sequence, so everything created since sits before the snapshot's file) and look for one with
// our filename and byte size (and message, when attaching to one), created no earlier than the
// snapshot's server time, that is not already the result of another of our uploads (idAliases).
// If found, that is our upload: adopt it instead of sending. If not, the server never acted:
// send. The residual risk is another device uploading a file of identical name and size into
// the same conversation in that window; we would then show theirs as ours — no data is lost
// on the server and no duplicate is created. A request still being processed when we check
// would be missed; the backoff before any retry makes that window small, and a server with
// idempotency closes it entirely (we skip all this once we have seen Idempotent-Replayed).
import { FilePage, type FileObject } from '../../objects';
import type { ParleyDb } from '../mirror/db';
import { call, type HttpDeps, type Outcome } from '../core/http';
import type { OutboxOp, UploadSnapshot } from './operations';

/** The newest file of the conversation and the server's clock, before an upload is first sent. */
export async function takeUploadSnapshot(deps: HttpDeps, conversationId: string): Promise<Outcome<UploadSnapshot>> {
  const out = await call(deps, { method: 'GET', path: 'v1/files', query: { conversation_id: conversationId, limit: 1 } }, FilePage);
  if (out.kind !== 'ok') return out;
  return { ...out, value: { newestFileId: out.value.data[0]?.id ?? null, serverTime: out.serverTime } };
}

/** The file the upload `op` made since its snapshot, or null when the server never acted. */
export async function verifyUpload(deps: HttpDeps & { db: ParleyDb }, op: OutboxOp): Promise<Outcome<FileObject | null>> {
  if (op.body.kind !== 'file.upload' || !op.snapshot) return { kind: 'ok', value: null, replayed: false, serverTime: null };
  const body = op.body;
  const snapshot = op.snapshot;
  const candidates: FileObject[] = [];
  let startingAfter: string | undefined;
  scan: for (;;) {
    const page = await call(
      deps,
      { method: 'GET', path: 'v1/files', query: { conversation_id: body.conversationId, limit: 100, starting_after: startingAfter } },
      FilePage,
    );
    if (page.kind !== 'ok') return page;
    for (const file of page.value.data) {
      if (file.id === snapshot.newestFileId) break scan;
      const matches =
        file.filename === body.filename &&
        file.file_size === body.size &&
        (body.messageId === null || file.message_id === body.messageId) &&
        (snapshot.serverTime === null || file.created_at >= snapshot.serverTime - 1);
      if (matches && (await deps.db.idAliases.where('realId').equals(file.id).count()) === 0) candidates.push(file);
    }
    if (!page.value.has_more || page.value.data.length === 0) break;
    startingAfter = page.value.data.at(-1)!.id;
  }
  // Oldest first: if several match, the earliest one created after our first send is ours.
  return { kind: 'ok', value: candidates.at(-1) ?? null, replayed: false, serverTime: null };
}
