// POST /v1/uploads: creation, and creation-with-upload (a body is the upload's first bytes). Every
// check POST /v1/files makes that needs no bytes is made before any byte is read.
import { ApiError, missing } from '../../errors';
import type { ReceivedUpload } from '../../domain/inputs';
import { refuseQueryParameters } from '../../domain/pagination';
import { newId, nowSeconds } from '../../ids';
import type { ApiResult } from '../../result';
import type { ApiRequest } from '../exchange';
import { discardBody } from './body';
import { receivedFile } from './completion';
import { contentLength, CreationHeaders, isOffsetStream, readHeaders, refuseDeferredLength } from './headers';
import { beyondLength, httpDate, notOffsetStream, TUS_HEADERS, uploadState, uploadTooLarge } from './protocol';
import type { TusUploads } from './uploads';

/** Metadata keys the service reads; others (tus-js-client and Uppy send name, type, relativePath …) are ignored. */
const METADATA_KEYS = new Set(['filename', 'filetype', 'conversation_id', 'message_id']);
const NO_DIGEST = { sha256: '', head: new Uint8Array(0) };

export async function create(tus: TusUploads, request: ApiRequest, user: string): Promise<ApiResult> {
  refuseQueryParameters(request.query);
  refuseDeferredLength(request);
  const headers = readHeaders(CreationHeaders, request);
  const length = headers['Upload-Length'];
  const max = tus.deps.config.maxUploadBytes;
  if (length > max) throw uploadTooLarge(max, 'Upload-Length');
  const metadata = headers['Upload-Metadata'];
  const fields: Record<string, string> = {};
  for (const name of ['conversation_id', 'message_id']) {
    const value = metadata.get(name);
    if (value !== undefined) fields[name] = value;
  }
  const rawFilename = metadata.get('filename');
  if (rawFilename === undefined) throw missing('filename', 'Upload-Metadata must carry filename');
  const upload: ReceivedUpload = { fields, file: receivedFile(rawFilename, undefined, null, 0, NO_DIGEST) };
  let target;
  try {
    target = tus.completion.validate(upload);
  } catch (error) {
    // The same rules as POST /v1/files; here the name is a metadata key, not the file part.
    if (error instanceof ApiError && error.param === 'file') throw new ApiError(error.code, error.message, 'filename');
    throw error;
  }
  const body = request.body;
  const bodyLength = contentLength(request);
  const hasBytes = body !== null && bodyLength !== 0;
  if (hasBytes && !isOffsetStream(request)) throw notOffsetStream('A creation request that carries bytes');
  if (bodyLength !== null && bodyLength > length) throw beyondLength();
  await tus.completion.checkTarget(request, user, target);
  const filetype = metadata.get('filetype');
  const id = newId();
  const now = nowSeconds();
  const expiresAt = tus.expiresAt(now);
  const result = await tus.deps.idempotency.run(
    user,
    request.header('idempotency-key'),
    () => ({
      method: 'POST',
      path: '/v1/uploads',
      content: { upload_length: length, metadata: [...metadata.entries()].filter(([k]) => METADATA_KEYS.has(k)).sort() },
    }),
    async (trx) => {
      await tus.refuseOverOpenCap(trx, user, now);
      await tus.records.insert(trx, {
        id,
        user_id: user,
        conversation_id: target.conversation_id ?? null,
        message_id: target.message_id ?? null,
        filename: target.filename,
        file_type: filetype === undefined || filetype === '' ? null : filetype,
        upload_length: length,
        upload_offset: 0,
        file_id: null,
        writer: null,
        writer_until: null,
        created_at: now,
        expires_at: expiresAt,
      });
      await tus.completion.created?.(trx, id, request);
      return { status: 201, headers: { ...TUS_HEADERS, Location: `/v1/uploads/${id}`, 'Upload-Expires': httpDate(expiresAt) } };
    },
    { audit: request.audit },
  );
  const location = result.headers?.Location ?? '';
  if (result.headers?.['Idempotent-Replayed'] === 'true') {
    // The same upload again: its bytes are not taken a second time; the answer tells where it stands.
    discardBody(body);
    const row = await tus.records.owned(user, location.slice(location.lastIndexOf('/') + 1));
    return { ...result, headers: { ...result.headers, ...(row ? uploadState(row) : {}), Location: location } };
  }
  const row = await tus.get(user, id);
  let progress: { offset: number; fileId: string | null } = { offset: 0, fileId: null };
  if (hasBytes || length === 0) progress = await tus.append(row, 0, request);
  const answer = { ...result.headers, 'Upload-Offset': String(progress.offset), ...(progress.fileId ? { 'Upload-File-Id': progress.fileId } : {}) };
  return tus.withFile({ ...result, headers: answer }, request, user, progress.fileId, headers.Prefer);
}
