// What handlers return: a status, a JSON-able body and extra headers. The service turns it into a
// Response; the idempotency store saves and replays it.
import { ApiError } from './errors';

export interface ApiResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function errorResult(error: ApiError): ApiResult {
  return { status: error.status, body: error.body(), headers: error.headers };
}
