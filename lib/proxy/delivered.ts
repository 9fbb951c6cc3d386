// Proxy mode delivers a finished upload upstream as one POST /v1/files. An upstream with only the
// brief's contract ignores Idempotency-Key, so a POST whose answer was lost (a cut, a timeout, a
// 5xx sent after it had acted) may have made the file: sending it again would make a second one.
// The contract's rule for such a server is "detect a lost-response duplicate itself", as the
// app's outbox does (lib/sync/outbox/upload-verification.ts). Here the same rule, for the proxy:
//
// - Before the first POST, a snapshot: the newest file of the target (the conversation's files,
//   or all the user's files for an upload into a message) and the upstream's clock (its Date).
// - Before any later POST, the files listed since that snapshot (the list is newest first by an
//   internal sequence, so everything made since sits before the snapshot's file) are searched for
//   one with the upload's name, size (and message) that no other staged upload has claimed: if
//   there is one, it is this upload's file and nothing is sent again. The oldest such file is
//   taken (the first POST that arrived).
// - Deliveries that could be mistaken for each other (same user, name and size) run one at a
//   time (uploads.ts), so the files made between a snapshot and its search are that upload's own.
import { FilePage, type FileObject } from '../schemas';

export interface DeliveryTarget {
  conversationId: string | null;
  messageId: string | null;
  filename: string;
  size: number;
}

export interface Snapshot {
  /** The newest file of the listing before the first POST (null: there was none). */
  newestFileId: string | null;
  /** The upstream's clock then (Unix seconds), from its Date header; null when it sent none. */
  serverTime: number | null;
}

/** One GET upstream: its status, body text and Date header. */
export type Lister = (path: string) => Promise<{ status: number; text: string; date: string | null }>;

/** An upstream answer that is not a page: what the delivery does with it is the caller's rule. */
export class ListingRefused extends Error {
  constructor(
    readonly status: number,
    readonly text: string,
  ) {
    super(`listing files upstream answered ${status}`);
  }
}

const PAGE = 100;

function listPath(target: DeliveryTarget, limit: number, startingAfter?: string): string {
  const query = new URLSearchParams();
  if (target.conversationId !== null) query.set('conversation_id', target.conversationId);
  query.set('limit', String(limit));
  if (startingAfter) query.set('starting_after', startingAfter);
  return `/v1/files?${query}`;
}

async function page(list: Lister, path: string): Promise<{ data: FileObject[]; has_more: boolean; date: string | null }> {
  const answer = await list(path);
  if (answer.status !== 200) throw new ListingRefused(answer.status, answer.text);
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    throw new ListingRefused(502, answer.text);
  }
  const parsed = FilePage.safeParse(json);
  if (!parsed.success) throw new ListingRefused(502, answer.text);
  return { ...parsed.data, date: answer.date };
}

/** Taken before the first POST of a delivery. */
export async function takeSnapshot(list: Lister, target: DeliveryTarget): Promise<Snapshot> {
  const first = await page(list, listPath(target, 1));
  const date = first.date === null ? NaN : Date.parse(first.date);
  return { newestFileId: first.data[0]?.id ?? null, serverTime: Number.isFinite(date) ? Math.floor(date / 1000) : null };
}

/** Whether `file` can be this upload's (before the snapshot's time and other claims are looked at). */
export function sameUpload(file: Pick<FileObject, 'filename' | 'file_size' | 'message_id'>, target: DeliveryTarget): boolean {
  return file.filename === target.filename && file.file_size === target.size && (target.messageId === null || file.message_id === target.messageId);
}

/**
 * The file an earlier POST of this delivery made, if one did: the oldest file made since the
 * snapshot that matches and that no other upload has claimed (`claimed`). Null: none arrived.
 */
export async function findDelivered(list: Lister, target: DeliveryTarget, snapshot: Snapshot, claimed: (id: string) => Promise<boolean>): Promise<string | null> {
  const candidates: string[] = [];
  let after: string | undefined;
  scan: for (;;) {
    const { data, has_more } = await page(list, listPath(target, PAGE, after));
    for (const file of data) {
      if (file.id === snapshot.newestFileId) break scan;
      // Made before the snapshot (its file deleted meanwhile, so the scan did not stop there): not ours.
      if (snapshot.serverTime !== null && file.created_at < snapshot.serverTime - 1) break scan;
      if (sameUpload(file, target) && !(await claimed(file.id))) candidates.push(file.id);
    }
    if (!has_more || data.length === 0) break;
    after = data.at(-1)!.id;
  }
  return candidates.at(-1) ?? null;
}
