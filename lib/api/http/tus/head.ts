// HEAD /v1/uploads/{id}: where an upload stands — and, for one whose bytes are all stored but that
// has no file, the file, made now (once).
import { ApiError } from '../../errors';
import { nowSeconds } from '../../ids';
import type { ApiResult } from '../../result';
import type { UploadRow } from '../../storage/uploads';
import type { ApiRequest } from '../exchange';
import { readHeaders, UploadHeaders } from './headers';
import type { Lease, LocalWriter } from './leases';
import { expired, isExpired, uploadState } from './protocol';
import type { TusUploads } from './uploads';

export async function head(tus: TusUploads, request: ApiRequest, user: string, id: string): Promise<ApiResult> {
  readHeaders(UploadHeaders, request);
  await tus.recorded(user, id);
  const row = await tus.settled(await tus.get(user, id));
  if (isExpired(row, nowSeconds())) throw expired();
  if (row.file_id === null && row.upload_offset === row.upload_length) return completeStored(tus, row, request);
  return { status: 200, headers: uploadState(row) };
}

/**
 * HEAD of an upload whose bytes are all stored but that has no file: the request that stored the
 * last byte did not make it (its maker stopped, or — proxy mode — the upstream has not taken it
 * yet and that request was answered 503 so the client is not kept waiting). A tus client that
 * resumes asks HEAD and, seeing every byte there, sends nothing more: so HEAD makes the file now
 * (once: under the upload's lease, as a repeat of the last request would), and tells it. Held by
 * a writer elsewhere (another instance making it): where it stands. The completion's own failure
 * (e.g. 503 with Retry-After while the upstream is unavailable) is the answer, with the offset.
 */
async function completeStored(tus: TusUploads, row: UploadRow, request: ApiRequest): Promise<ApiResult> {
  let lease: Lease;
  try {
    lease = await tus.leases.claim(row.id, row.upload_offset);
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'upload_in_progress' || error.code === 'upload_offset_mismatch')) {
      return { status: 200, headers: uploadState(await tus.get(row.user_id, row.id)) };
    }
    throw error;
  }
  let release!: () => void;
  const local: LocalWriter = { cancel: () => {}, released: new Promise<void>((resolve) => (release = resolve)), received: Promise.resolve(), bodyEnded: () => true };
  const forget = tus.leases.hold(row.id, local);
  try {
    const fileId = await tus.complete(row, lease, request);
    const made = await tus.records.find(row.id);
    return { status: 200, headers: { ...uploadState(made ?? row), 'Upload-Offset': String(row.upload_length), 'Upload-File-Id': fileId } };
  } catch (error) {
    if (error instanceof ApiError && error.status >= 500) {
      throw new ApiError(error.code, error.message, error.param, error.extra, { ...error.headers, 'Upload-Offset': String(row.upload_offset), 'Upload-Length': String(row.upload_length) });
    }
    throw error;
  } finally {
    await lease.release().catch((error) => tus.deps.log.error('[parley] releasing an upload lease failed:', error));
    forget();
    release();
  }
}
