// Proxy mode: with UPSTREAM_BASE_URL set, every /v1 request (and /files, for the file_urls it
// rewrites, see docs/proxy.md) is forwarded to that one service instead of served locally.
// Except /v1/uploads: resumable uploads are served here, staged on this instance's disk and
// delivered upstream as one POST /v1/files (uploads.ts).
// Same dispatch shape as ApiService, so the node:http fast path and the Next route handlers can
// put either behind the same code.
import { Readable, pipeline } from 'node:stream';
import { DEFAULT_UPLOAD_SETTINGS, type Config } from '../config';
import { FileUrlRewriter } from './file-urls';
import { forwardRequestHeaders, forwardResponseHeaders } from './headers';
import { classifyPath } from './path';
import { Upstream, UpstreamError, type UpstreamResponse } from './upstream';
import { isUploadsPath, UploadStaging, type StagingSettings } from './uploads';
import { WipedTokens } from './wiped';
import { DEFAULT_DEVICE_POLICY, isDeviceClearPath, isDevicePolicyPath, serveDeviceClear, serveDevicePolicy } from '../api/http/device-policy';
import { isOidcPath, oidcNotOffered } from '../api/http/oidc';
import { discardBody } from '../api/http/tus/body';
import { chunkBytes } from '../api/http/chunks';
import { ApiError, deviceWiped, notFound } from '../api/errors';
import type { ApiReply, ApiRequest } from '../api/http/exchange';
import { HostPolicy } from '../api/http/hosts';
import { addRateLimitFields, RateLimiter } from '../api/http/rate-limit';
import { ROUTES, Router } from '../api/routes';

export type ProxyConfig = Pick<
  Config,
  'upstreamBaseUrl' | 'upstreamToken' | 'upstreamConnectTimeoutMs' | 'upstreamIdleTimeoutMs' | 'assetUrl' | 'allowedHosts' | 'hostname'
> &
  Partial<Pick<Config, 'rateLimits' | 'dataDir' | 'maxUploadBytes' | 'uploads' | 'devicePolicy'>>;

export interface ProxyOptions {
  /** Resumable uploads staged here (lib/proxy/uploads.ts): how deliveries upstream are retried. */
  uploadRetry?: StagingSettings['retry'];
  /** How long a request waits for an upload's delivery before it is answered 503 (uploads.ts). */
  uploadAnswerWithinMs?: number;
}

export interface UpstreamCheck {
  /** The upstream answered with some HTTP status (even 401: it is there). */
  answers: boolean;
  status: number | null;
  /** Why it did not answer, when it did not. */
  error: string | null;
  ms: number;
}

export interface ApiProxy {
  dispatch(request: ApiRequest): Promise<ApiReply>;
  /** One request to the upstream, logged; never throws, so it cannot fail start-up. */
  check(): Promise<UpstreamCheck>;
  /** /v1/uploads, served by the proxy itself (null without a DATA_DIR in the configuration). */
  uploads: UploadStaging | null;
  close(): void;
}

type Logger = Pick<Console, 'log' | 'error'>;

// JSON bodies are read whole only to rewrite file_url; a /v1/files page is a few KiB, a page of
// 1,000 change events a few hundred.
const REWRITE_LIMIT = 4 * 1024 * 1024;

/** /v1/me/devices…, /v1/me/pairings…, /v1/pairings…: the devices extension's paths. */
export function isDevicesPath(path: string): boolean {
  return /^\/v1\/(me\/devices|me\/pairings|pairings)(\/|$)/.test(path);
}

export function createProxy(config: ProxyConfig, log: Logger = console, options: ProxyOptions = {}): ApiProxy {
  if (!config.upstreamBaseUrl) throw new Error('createProxy needs config.upstreamBaseUrl');
  // Checked here so a bad token fails start-up, not every request.
  if (config.upstreamToken !== null && !/^[\x21-\x7e]+$/.test(config.upstreamToken)) {
    throw new Error('UPSTREAM_TOKEN must be printable ASCII without spaces');
  }
  const base = new URL(config.upstreamBaseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const upstream = new Upstream({
    base,
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    idleTimeoutMs: config.upstreamIdleTimeoutMs,
  });
  const fileUrls = new FileUrlRewriter(config.upstreamBaseUrl);
  // file_urls are rewritten onto this instance's origin: the embedded service's Host rule applies.
  const hosts = new HostPolicy(config);
  // RATE_LIMIT_* in this process's memory, per token as presented (the upstream decides whether it
  // is valid) and, once the upstream has refused a token (401), per client address.
  // Its policies are named proxy-token, … beside an upstream's own in the RateLimit fields.
  const limits = config.rateLimits ? RateLimiter.memory(config.rateLimits, log, { policyPrefix: 'proxy-' }) : null;
  // Resumable uploads: staged on this instance's disk, delivered upstream as one POST /v1/files.
  const uploads = config.dataDir
    ? new UploadStaging(
        {
          dataDir: config.dataDir,
          maxUploadBytes: config.maxUploadBytes ?? 100 * 1024 * 1024,
          uploads: config.uploads ?? DEFAULT_UPLOAD_SETTINGS,
          upstreamToken: config.upstreamToken,
          basePath,
          retry: options.uploadRetry,
          answerWithinMs: options.uploadAnswerWithinMs,
        },
        upstream,
        log,
      )
    : null;

  // Tokens the operator told this proxy to wipe (wiped.ts): answered device_wiped here.
  const wiped = config.dataDir ? new WipedTokens(config.dataDir, log) : null;
  // The service's route table, read only for the template each request is logged under.
  const templates = new Router(ROUTES);

  /** Every answer to a request this proxy counted says where the token stands here (after the upstream's items). */
  async function dispatch(request: ApiRequest): Promise<ApiReply> {
    const answer = await answerFor(request);
    if (request.quota) addRateLimitFields(answer.headers, request.quota);
    return answer;
  }

  async function answerFor(request: ApiRequest): Promise<ApiReply> {
    // The device policy is this server's, never the upstream's.
    if (isDevicePolicyPath(request.path)) return serveDevicePolicy(request, config.devicePolicy ?? DEFAULT_DEVICE_POLICY);
    if (isDeviceClearPath(request.path)) return serveDeviceClear(request);
    // Single sign-on would make tokens of this server, which the upstream does not know: not offered.
    if (isOidcPath(request.path)) return oidcNotOffered();
    const area = classifyPath(request.path);
    if (!area) return errorReply(notFound('route'));
    let assetBase = '';
    if (area === '/v1') {
      const template = templates.find(request.path.length > 1 && request.path.endsWith('/') ? request.path.slice(0, -1) : request.path)?.template;
      if (template && request.context) request.context.route = template;
      try {
        if (await wiped?.has(request.header('authorization'))) {
          discardBody(request.body);
          return errorReply(deviceWiped());
        }
        assetBase = hosts.assetBase(request);
        if (limits) request.quota = await limits.forToken(request.header('authorization'), request.method);
      } catch (error) {
        if (error instanceof ApiError) return errorReply(error);
        throw error;
      }
      if (uploads && isUploadsPath(request.path)) return uploads.dispatch(request);
      // Devices and pairing are the upstream's (when it is a Parley server) and about the caller's
      // own token. With UPSTREAM_TOKEN every caller is the upstream's one user: a device listed or
      // paired there would be that shared token's, so the proxy answers as a server without them.
      if (config.upstreamToken !== null && isDevicesPath(request.path)) {
        discardBody(request.body);
        return errorReply(notFound('route'));
      }
    }
    const query = request.query.toString();
    let sent: UpstreamResponse;
    try {
      sent = await upstream.send({
        method: request.method,
        path: basePath + request.path + (query ? `?${query}` : ''),
        headers: forwardRequestHeaders((name) => request.header(name), {
          token: config.upstreamToken,
          withAuthorization: area === '/v1',
        }),
        body: request.body,
      });
    } catch (error) {
      if (error instanceof UpstreamError) return upstreamFailure(request, error);
      throw error;
    }
    const { response } = sent;
    const headers = forwardResponseHeaders(response.headers);
    // Patient data is never kept by the browser's HTTP cache, whatever the upstream says (contract).
    headers['cache-control'] = area === '/files' ? 'private, no-store' : 'no-store';
    const status = response.statusCode ?? 502;
    if (status === 401 && area === '/v1' && limits) {
      const limited = await limits.countRefusal(request.remoteAddress);
      if (limited) {
        response.resume();
        return errorReply(limited);
      }
    }
    if (request.method === 'HEAD' || status === 204 || status === 304) {
      response.resume();
      return { status, headers, body: null };
    }
    if (/^text\/event-stream\b/i.test(headers['content-type'] ?? '')) {
      // The live stream: rewritten event by event as it flows, never buffered.
      // pipeline: when the browser goes away and the rewriter is destroyed, so is the upstream stream.
      const body = pipeline(response, fileUrls.eventStreamRewriter(assetBase), () => {});
      return { status, headers, body };
    }
    if (carriesFileUrls(request.path, headers['content-type'])) {
      try {
        return await rewritten(status, headers, sent, assetBase);
      } catch {
        return upstreamFailure(request, sent.failure() ?? new UpstreamError('unavailable', 'The upstream service broke off its answer', 'aborted'));
      }
    }
    return { status, headers, body: response };
  }

  async function rewritten(status: number, headers: Record<string, string>, sent: UpstreamResponse, assetBase: string): Promise<ApiReply> {
    const read = await readUpTo(sent.response, REWRITE_LIMIT);
    if (typeof read !== 'string') return { status, headers, body: read };
    // A string body gets its Content-Length from the writer; the upstream's would be a duplicate.
    const { 'content-length': _stale, ...rest } = headers;
    return { status, headers: rest, body: fileUrls.rewriteBody(read, assetBase) ?? read };
  }

  function upstreamFailure(request: ApiRequest, error: UpstreamError): ApiReply {
    log.error(`[parley] proxy: ${request.method} ${request.path}: upstream ${error.kind} (${error.detail})`);
    return errorReply(new ApiError(error.kind === 'timeout' ? 'upstream_timeout' : 'upstream_unavailable', error.message));
  }

  async function check(): Promise<UpstreamCheck> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      const { response } = await upstream.send({
        method: 'GET',
        path: `${basePath}/v1/conversations?limit=1`,
        headers: forwardRequestHeaders(() => null, { token: config.upstreamToken, withAuthorization: true }),
        body: null,
      });
      response.resume();
      const result = { answers: true, status: response.statusCode ?? null, error: null, ms: ms() };
      const note = result.status === 401 ? (config.upstreamToken ? ' (UPSTREAM_TOKEN was refused)' : ' (requests need a token)') : '';
      log.log(`[parley] proxy mode: upstream ${base.origin}${basePath} answers: HTTP ${result.status}${note}`);
      return result;
    } catch (error) {
      const reason = error instanceof UpstreamError ? `${error.kind}: ${error.detail}` : String(error);
      log.error(`[parley] proxy mode: upstream ${base.origin}${basePath} does not answer (${reason}); /v1 will answer 502/504 until it does`);
      return { answers: false, status: null, error: reason, ms: ms() };
    }
  }

  return {
    dispatch,
    check,
    uploads,
    close: () => {
      // Staged uploads stay on disk for the next start; their database closes before the agent goes.
      void wiped?.close().catch((error) => log.error('[parley] proxy: closing the wiped tokens list failed:', error));
      void (uploads?.close() ?? Promise.resolve())
        .catch((error) => log.error('[parley] proxy: closing the staged uploads failed:', error))
        .finally(() => upstream.close());
    },
  };
}

function carriesFileUrls(path: string, contentType: string | undefined): boolean {
  const files = path === '/v1/files' || path.startsWith('/v1/files/') || path === '/v1/events' || path === '/v1/events/';
  return files && /^application\/json\b/i.test(contentType ?? '');
}

/** The whole body as text, or — past `limit` — a stream of everything, already read or not. */
async function readUpTo(response: Readable, limit: number): Promise<string | Readable> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = response[Symbol.asyncIterator]();
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const chunk = chunkBytes(next.value);
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) {
      return Readable.from((async function* () {
        yield* chunks;
        for (let more = await iterator.next(); !more.done; more = await iterator.next()) yield chunkBytes(more.value);
      })(), { objectMode: false });
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

function errorReply(error: ApiError): ApiReply {
  return { status: error.status, headers: { ...JSON_HEADERS, ...error.headers }, body: JSON.stringify(error.body()) };
}
