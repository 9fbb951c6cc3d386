// The process-wide /v1 back end for the Next.js route handlers: the embedded service, or the
// proxy when UPSTREAM_BASE_URL is set. Opened once, on first use. Like `npm start`'s server, each
// request gets an X-Request-Id and one JSON log record.
import { readConfig } from './config';
import { fromWebRequest, toWebResponse } from './api/http/exchange';
import type { Dispatch } from './api/http/node-server';
import { createProxy } from './proxy/proxy';
import { ApiService } from './api/service';
import { isHealthPath, serveHealth } from './api/http/health';
import { jsonLog, requestId, routeTemplate, type RequestContext } from './api/http/log';

declare global {
  /** The back end, kept on globalThis: it survives Next's module re-evaluation in development. */
  var __parleyDispatch: Promise<Dispatch> | undefined;
}
const log = jsonLog();

async function open(): Promise<Dispatch> {
  const config = readConfig();
  if (config.upstreamBaseUrl) {
    const proxy = createProxy(config, log);
    void proxy.check(); // logs whether the upstream answers; never fails start-up
    return (request) => (isHealthPath(request.path) ? serveHealth(request, {}, log) : proxy.dispatch(request));
  }
  const { service, info } = await ApiService.open(config, log);
  if (info.demoToken) log.log(`[parley] first start: token for user "demo": ${info.demoToken}`);
  return (request) => service.dispatch(request);
}

export function getDispatch(): Promise<Dispatch> {
  // Survives Next's module re-evaluation in development, so one process opens the database once.
  globalThis.__parleyDispatch ??= open();
  return globalThis.__parleyDispatch;
}

/** For the Next.js route handlers: a Web Request, answered by the same core as `npm start`'s server. */
export async function handleRequest(request: Request): Promise<Response> {
  const started = performance.now();
  const dispatch = await getDispatch();
  const context: RequestContext = { id: requestId(request.headers.get('x-request-id')), user: null };
  const apiRequest = { ...fromWebRequest(request), context };
  const reply = await dispatch(apiRequest);
  reply.headers['X-Request-Id'] = context.id;
  // When the answer is handed to Next (a stream may still be flowing): the status and the time to answer.
  log.request({
    request_id: context.id,
    method: apiRequest.method,
    route: routeTemplate(apiRequest.path, context),
    status: reply.status,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
    user_id: context.user,
  });
  return toWebResponse(reply);
}
