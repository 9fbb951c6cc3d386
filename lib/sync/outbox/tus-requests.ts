// The tus requests the replay sends itself, without tus-js-client (so any replayer can, the
// service worker's flush included): HEAD and DELETE (termination) of an upload's URL, and a
// creation without bytes that finds the upload a lost creation made. Each answer is classified by
// core/classify.ts, as call()'s; what 404/410 mean for the request is the caller's (`gone`).
import type { HttpDeps, Outcome } from '../core/http';
import { classify, gone } from '../core/classify';
import type { UploadBody } from './operations';

export interface TusRequestDeps extends HttpDeps {
  /** Abandon a request after this long without an answer (the replay's upload stall time). */
  stallMs: number;
}

/** HEAD of an upload: a 2xx with its headers (Upload-Offset, Upload-File-Id once complete). */
export function headUpload(deps: TusRequestDeps, url: string): Promise<Outcome<Response>> {
  return tusRequest(deps, 'HEAD', url);
}

/** DELETE of an upload (tus termination): the server drops its stored bytes. */
export function terminateUpload(deps: TusRequestDeps, url: string, idempotencyKey: string): Promise<Outcome<Response>> {
  return tusRequest(deps, 'DELETE', url, idempotencyKey);
}

/**
 * The upload a creation with bytes made, whose answer was lost: the same creation (its key, length
 * and metadata, as resumable-upload.ts sent them) without the bytes. A server with keys answers
 * with that upload (and its file, if the bytes all arrived); if the first never arrived, this makes
 * a new, empty upload, which the termination then ends.
 */
export async function locateUpload(
  deps: TusRequestDeps,
  key: string,
  upload: UploadBody,
): Promise<Outcome<{ url: string | null; fileId: string | null }>> {
  const metadata: Record<string, string> = { filename: upload.filename, filetype: upload.fileType };
  if (upload.messageId) metadata.message_id = upload.messageId;
  else metadata.conversation_id = upload.conversationId;
  const endpoint = new URL('v1/uploads', deps.baseUrl.endsWith('/') ? deps.baseUrl : `${deps.baseUrl}/`).toString();
  const created = await tusRequest(deps, 'POST', endpoint, key, {
    'Upload-Length': String(upload.size),
    'Upload-Metadata': Object.entries(metadata)
      .map(([name, value]) => `${name} ${base64(value)}`)
      .join(','),
  });
  // Its target is gone (and with it any file it made), or the server no longer has /v1/uploads.
  if (gone(created)) return { kind: 'ok', value: { url: null, fileId: null }, replayed: false, serverTime: null };
  if (created.kind !== 'ok') return created;
  const response = created.value;
  const location = response.headers.get('location');
  if (!location) {
    return { kind: 'refused', status: response.status, code: null, error: null, message: `the upload could not be found (HTTP ${response.status}, no Location)` };
  }
  return { kind: 'ok', value: { url: new URL(location, endpoint).toString(), fileId: response.headers.get('upload-file-id') }, replayed: false, serverTime: null };
}

/** UTF-8, then base64, as tus-js-client encodes Upload-Metadata values. */
function base64(value: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * A tus request without a body, its answer classified as call()'s (classify.ts): a 2xx is `ok`
 * (with the response, for its headers); 404 and 410 are refusals the callers read with `gone`.
 */
async function tusRequest(
  deps: TusRequestDeps,
  method: 'HEAD' | 'DELETE' | 'POST',
  url: string,
  idempotencyKey?: string,
  extra: Record<string, string> = {},
): Promise<Outcome<Response>> {
  const token = await deps.getToken();
  if (!token) return { kind: 'unauthenticated', message: 'not signed in' };
  const headers: Record<string, string> = { ...extra, Authorization: `Bearer ${token}`, 'Tus-Resumable': '1.0.0' };
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  let response: Response;
  try {
    const signal = AbortSignal.timeout(deps.stallMs);
    response = await deps.fetch(url, { method, headers, signal });
  } catch (error) {
    return { kind: 'network', message: error instanceof Error ? error.message : String(error), unreachable: deps.isOffline?.() === true };
  }
  await deps.onResponse?.(response.headers);
  const answer = classify(response.status, response.headers, await response.text().catch(() => ''));
  if (answer.kind !== 'ok') return answer;
  return { kind: 'ok', value: response, replayed: answer.replayed, serverTime: answer.serverTime };
}
