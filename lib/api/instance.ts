// The process-wide /v1 back end for the Next.js route handlers: the embedded service, or the
// proxy when UPSTREAM_BASE_URL is set. Opened once, on first use.
import { readConfig } from '../config';
import { fromWebRequest, toWebResponse } from './http';
import type { Dispatch } from './node-server';
import { createProxy } from './proxy';
import { ApiService } from './service';

const globalForParley = globalThis as typeof globalThis & { __parleyDispatch?: Promise<Dispatch> };

async function open(): Promise<Dispatch> {
  const config = readConfig();
  if (config.upstreamBaseUrl) {
    const proxy = createProxy(config);
    void proxy.check(); // logs whether the upstream answers; never fails start-up
    return (request) => proxy.dispatch(request);
  }
  const { service, info } = await ApiService.open(config);
  if (info.demoToken) console.log(`[parley] first start: token for user "demo": ${info.demoToken}`);
  return (request) => service.dispatch(request);
}

export function getDispatch(): Promise<Dispatch> {
  // Survives Next's module re-evaluation in development, so one process opens the database once.
  globalForParley.__parleyDispatch ??= open();
  return globalForParley.__parleyDispatch;
}

/** For the Next.js route handlers: a Web Request, answered by the same core as `npm start`'s server. */
export async function handleRequest(request: Request): Promise<Response> {
  const dispatch = await getDispatch();
  return toWebResponse(await dispatch(fromWebRequest(request)));
}
