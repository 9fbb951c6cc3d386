// PATCH /v1/uploads/{id}: appends the body at Upload-Offset; the request that stores the last byte
// makes the file (once), and a repeat of it answers the same.
import type { ApiResult } from '../../result';
import { nowSeconds } from '../../ids';
import type { ApiRequest } from '../exchange';
import { AppendHeaders, isOffsetStream, readHeaders } from './headers';
import { expired, isExpired, notOffsetStream, TUS_HEADERS, uploadState } from './protocol';
import type { TusUploads } from './uploads';

export async function patch(tus: TusUploads, request: ApiRequest, user: string, id: string): Promise<ApiResult> {
  if (!isOffsetStream(request)) throw notOffsetStream('PATCH bodies');
  const headers = readHeaders(AppendHeaders, request);
  const row = await tus.get(user, id);
  if (isExpired(row, nowSeconds())) throw expired();
  const progress = await tus.append(row, headers['Upload-Offset'], request);
  const now = await tus.records.owned(user, id).catch(() => undefined);
  const result: ApiResult = {
    status: 204,
    headers: {
      ...(now ? uploadState(now) : TUS_HEADERS),
      'Upload-Offset': String(progress.offset),
      ...(progress.fileId ? { 'Upload-File-Id': progress.fileId } : {}),
    },
  };
  return tus.withFile(result, request, user, progress.fileId, headers.Prefer);
}
