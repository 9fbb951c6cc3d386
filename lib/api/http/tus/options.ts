// OPTIONS /v1/uploads and /v1/uploads/{id}: what this server speaks. No token needed: tus clients
// probe it before they have one.
import type { ApiResult } from '../../result';
import { capabilities } from './protocol';

export function options(maxUploadBytes: number): ApiResult {
  return { status: 204, headers: capabilities(maxUploadBytes) };
}
