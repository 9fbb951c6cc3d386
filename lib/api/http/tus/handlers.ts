// The tus handlers by method, as tus-node-server has them (one per method, sharing TusUploads):
// the route table (routes/uploads.ts) registers each one under its method, and the proxy
// (lib/proxy/uploads.ts), which has no route table, dispatches with `serveTus`. Every handler
// checks Tus-Resumable first; every error it answers carries Tus-Resumable, and the body of a
// refused request is read and thrown away, so the client hears the answer.
import { ID_PATTERN } from '../../../schemas';
import { ApiError, methodNotAllowed, notFound } from '../../errors';
import { refuseQueryParameters } from '../../domain/pagination';
import type { ApiResult } from '../../result';
import type { ApiRequest } from '../exchange';
import { discardBody } from './body';
import { terminate } from './delete';
import { head } from './head';
import { checkVersion, methodOverride } from './headers';
import { patch } from './patch';
import { create } from './post';
import { TUS_HEADERS, withHeaders } from './protocol';
import type { TusUploads } from './uploads';

/** What each path takes (its Allow). */
export const CREATION_ALLOW = ['POST', 'OPTIONS'];
export const UPLOAD_ALLOW = ['HEAD', 'PATCH', 'DELETE', 'OPTIONS'];

/** A handler of /v1/uploads/{id} (`id` as the path has it, not yet checked). */
type UploadHandler = (tus: TusUploads, request: ApiRequest, user: string, id: string) => Promise<ApiResult>;

async function tusAnswer(request: ApiRequest, work: () => Promise<ApiResult>): Promise<ApiResult> {
  try {
    checkVersion(request);
    return await work();
  } catch (error) {
    discardBody(request.body);
    if (!(error instanceof ApiError)) throw error;
    throw withHeaders(error, TUS_HEADERS);
  }
}

/** /v1/uploads/{id}: no query parameters; an id that cannot be one is a missing upload. */
const ofUpload =
  (handler: UploadHandler): UploadHandler =>
  (tus, request, user, id) =>
    tusAnswer(request, () => {
      refuseQueryParameters(request.query);
      if (!ID_PATTERN.test(id)) throw notFound('upload');
      return handler(tus, request, user, id);
    });

export const tusHandlers = {
  POST: (tus: TusUploads, request: ApiRequest, user: string) => tusAnswer(request, () => create(tus, request, user)),
  HEAD: ofUpload(head),
  PATCH: ofUpload(patch),
  DELETE: ofUpload(terminate),
  /** A method the path does not take (after the version check, as every tus answer). */
  notAllowed: (request: ApiRequest, allow: string[]) =>
    tusAnswer(request, () => {
      throw methodNotAllowed(allow);
    }),
};

/**
 * Any request of /v1/uploads (`id` undefined) or /v1/uploads/{id} but OPTIONS: the handler of its
 * method — X-HTTP-Method-Override's for a POST that carries one — or 405.
 */
export function serveTus(tus: TusUploads, request: ApiRequest, user: string, id: string | undefined): Promise<ApiResult> {
  const method = methodOverride(request) ?? request.method;
  if (id === undefined) return method === 'POST' ? tusHandlers.POST(tus, request, user) : tusHandlers.notAllowed(request, CREATION_ALLOW);
  if (method === 'HEAD' || method === 'PATCH' || method === 'DELETE') return tusHandlers[method](tus, request, user, id);
  return tusHandlers.notAllowed(request, UPLOAD_ALLOW);
}
