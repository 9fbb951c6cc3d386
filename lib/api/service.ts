// The /v1 service: framework-free. `dispatch` is the core; `handle` is its Web-standard
// Request → Response face, used by the Next.js route handlers and by tests.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import { serveAsset } from './http/assets';
import { Conversations } from './domain/conversations';
import { openDb, type Db, type OpenedDb } from './storage/db';
import { listenForEvents, type NotificationListener } from './storage/pg-notifications';
import { ApiError, internalError, methodNotAllowed, notFound, storageFailureError } from './errors';
import { EventHub } from './domain/event-hub';
import { ChangeFeed } from './domain/events';
import { CursorCodec } from './domain/cursors';
import { Files } from './domain/files';
import type { EventStream } from './http/event-stream';
import { fromWebRequest, toWebResponse, type ApiReply, type ApiRequest } from './http/exchange';
import { HostPolicy } from './http/hosts';
import { IdempotencyStore } from './domain/idempotency';
import { openApiDocument } from './openapi';
import { errorResult, type ApiResult } from './result';
import { UrlSigner } from './domain/signing';
import { sweepOrphans, type BlobStore } from './storage/blob-store';
import { BlobDeletionQueue, type DrainResult } from './storage/blob-deletions';
import { openBlobStore, type OpenedBlobStore } from './storage/open-blob-store';
import { storageFailure } from './storage/failures';
import { Authenticator, createToken, tokenRefusalOf, type Identity } from './domain/tokens';
import { Pairings } from './domain/pairings';
import { purgeExpiredDeviceTokens } from './domain/devices';
import { TusUploads } from './http/tus/uploads';
import { UploadRecords } from './storage/uploads';
import { isHealthPath, serveHealth } from './http/health';
import { isDeviceClearPath, isDevicePolicyPath, serveDeviceClear, serveDevicePolicy } from './http/device-policy';
import { isOidcPath, isOidcStep, oidcNotOffered, OidcSignIn } from './http/oidc';
import { FairShare } from './http/fair-share';
import { addRateLimitFields, RateLimiter } from './http/rate-limit';
import { routeTemplate, type Logger } from './http/log';
import { sql } from 'kysely';
import { allowed, ROUTES, routeFor, Router, type Api } from './routes';
import type { PathMatch } from './routes/router';
import type { Route } from './routes/route';
import { AuditNote, AuditTrail, UNKNOWN_USER, type AuditAction } from './domain/audit';
import { RefusalSampler } from './domain/audit-refusals';
import type { StoredFile } from './domain/files';
import { ID_PATTERN } from '../schemas';
import { stringField } from '../records';

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

function reply(result: ApiResult): ApiReply {
  if (result.body === undefined) return { status: result.status, headers: { 'Cache-Control': 'no-store', ...result.headers }, body: null };
  return { status: result.status, headers: { ...JSON_HEADERS, ...result.headers }, body: JSON.stringify(result.body) };
}

export type { Logger };

const DELETION_PASS_MS = 60_000;
const ORPHAN_SWEEP_MS = 6 * 3600_000;
const UPLOAD_EXPIRY_PASS_MS = 5 * 60_000;
/** A blob this young may belong to an upload about to commit its row (here or in another instance). */
const ORPHAN_GRACE_MS = 3600_000;

/**
 * How old stored bytes without a row, and unfinished writes, must be before a sweep removes them.
 * Also at start-up: another instance on the same database and store (or a second process on the
 * same DATA_DIR) may be in the middle of an upload — its bytes finished, its row not yet
 * committed, or its multipart upload still arriving for as long as a request may last.
 */
export function sweepGraceMs(config: Pick<Config, 'requestTimeoutMs'>): number {
  return Math.max(ORPHAN_GRACE_MS, config.requestTimeoutMs);
}

export interface ServiceOptions {
  /** Where file bytes live; default: the disk store in DATA_DIR. */
  store?: BlobStore;
  /** The sweeps' grace period (default: sweepGraceMs(config)); tests of the sweep play "long after a crash" with 0. */
  sweepGraceMs?: number;
}

export interface ServiceStartInfo {
  /** Set on the very first start with no tokens at all: a token for user "demo". */
  demoToken: string | null;
  swept: { temp: number; orphans: number };
  /** Where file bytes live (for the start-up log; never credentials). */
  blobStore: string;
  /** The object store's origin when /files/… redirects there (S3_PRESIGNED_REDIRECT), else null: the app's CSP lets its code read from it. */
  redirectOrigin: string | null;
}

export class ApiService {
  private readonly auth: Authenticator;
  private readonly conversations: Conversations;
  private readonly files: Files;
  private readonly idempotency: IdempotencyStore;
  private readonly pairings: Pairings;
  /** Single sign-on (OIDC_*; http/oidc.ts), or null when not configured. */
  private readonly oidc: OidcSignIn | null;
  /** Resumable uploads (tus) at /v1/uploads; `expire()` is its periodic pass. */
  readonly uploads: TusUploads;
  private readonly signer: UrlSigner;
  private readonly feed: ChangeFeed;
  /** Live streams of this process, poked after each write (and by other instances via NOTIFY). */
  readonly hub: EventHub;
  private notifications: NotificationListener | null = null;
  /** RATE_LIMIT_*: per token, and per address without a valid token (set by open()). */
  private limits!: RateLimiter;
  private share!: FairShare;
  private readonly hosts: HostPolicy;
  private readonly deletions: BlobDeletionQueue;
  /** Deletion passes of this process run one after another (other instances' may overlap them). */
  private deletionPass: Promise<unknown> = Promise.resolve();
  private readonly timers: NodeJS.Timeout[];
  private readonly store: BlobStore;
  private openapiText: string | null = null;
  /** The route table of the extensions that are on, and what its handlers work with. */
  private readonly router: Router;
  private readonly api: Api;
  /** Live event streams of this process, ended cleanly at shutdown. */
  private readonly streams = new Set<EventStream>();
  private shuttingDown = false;
  /** Who did what to which record (lib/api/domain/audit.ts): reads queued here, writes in their transactions. */
  readonly audit: AuditTrail;
  /** Which refused tokens the trail records (at most one a minute per address, reason and token). */
  private readonly refusals = new RefusalSampler();

  private constructor(
    private readonly config: Config,
    private readonly opened: OpenedDb,
    private readonly blobs: OpenedBlobStore,
    secret: Buffer,
    private readonly log: Logger,
    graceMs: number,
  ) {
    const db = opened.db;
    this.store = blobs.store;
    this.signer = new UrlSigner(secret);
    this.hosts = new HostPolicy(config);
    this.auth = new Authenticator(db, config.staticTokens, { ttlSeconds: config.tokenTtlSeconds });
    this.audit = new AuditTrail(db, { enabled: config.audit.enabled, retentionDays: config.audit.retentionDays, dialect: opened.dialect, log });
    this.pairings = new Pairings(db);
    this.oidc = config.oidc ? new OidcSignIn(config.oidc, db, secret, (request) => this.hosts.assetBase(request), log, this.audit) : null;
    this.conversations = new Conversations(db);
    this.files = new Files(db, this.signer, this.conversations);
    this.idempotency = new IdempotencyStore(db, config.extensions.has('idempotency'), { dialect: opened.dialect, waitMs: config.idempotencyWaitMs });
    this.feed = new ChangeFeed(db, this.files, new CursorCodec(secret));
    this.hub = new EventHub({
      feed: this.feed,
      recheck: (tokens) => this.auth.recheck(tokens),
      tokenRecheckMs: config.streams.tokenRecheckMs,
      maxPerUser: config.streams.maxPerUser,
      maxTotal: config.streams.maxTotal,
      log,
    });
    this.deletions = new BlobDeletionQueue(db, this.store, log);
    const failed = (what: string) => (error: unknown) => log.error(`[parley] ${what} failed:`, error);
    this.uploads = new TusUploads({ db, store: this.store, files: this.files, idempotency: this.idempotency, config, log,
      published: (user) => this.written(user, { status: 201 }), drainDeletions: () => this.drainBlobDeletions(),
      fileObject: async (request, user, id) => this.files.toFile(await this.files.get(this.db, user, id), this.assetBase(request)) });
    this.timers = [
      setInterval(() => void this.purgeExpired(), 3600_000),
      setInterval(() => void this.drainBlobDeletions().catch(failed('a blob deletion pass')), DELETION_PASS_MS),
      setInterval(() => void this.sweep(graceMs).catch(failed('the orphan sweep')), ORPHAN_SWEEP_MS),
      setInterval(() => void this.uploads.expire().catch(failed('the expiry pass of unfinished uploads')), UPLOAD_EXPIRY_PASS_MS),
    ];
    for (const timer of this.timers) timer.unref();
    this.router = new Router(ROUTES.filter((route) => !route.extension || config.extensions.has(route.extension)));
    const isShuttingDown = () => this.shuttingDown;
    this.api = {
      config,
      db,
      store: this.store,
      log,
      conversations: this.conversations,
      files: this.files,
      idempotency: this.idempotency,
      feed: this.feed,
      hub: this.hub,
      uploads: this.uploads,
      pairings: this.pairings,
      forgetToken: (tokenId) => this.auth.forget(tokenId),
      streams: this.streams,
      get shuttingDown() {
        return isShuttingDown();
      },
      assetBase: (request) => this.assetBase(request),
      written: (user, result) => this.written(user, result),
      drainBlobDeletions: () => this.drainBlobDeletions(),
      openapiText: () => (this.openapiText ??= JSON.stringify(openApiDocument())),
    };
  }

  /** ASSET_URL, or the request's origin when its Host is allowed (checked in route() already). */
  private assetBase(request: ApiRequest): string {
    return this.hosts.assetBase(request);
  }

  /** Drops expired idempotency records, change-feed events and audit rows (hourly, and at start). */
  async purgeExpired(): Promise<void> {
    await this.audit.prune().catch((error) => this.log.error('[parley] pruning the audit trail failed:', error));
    await this.idempotency.purgeExpired().catch((error) => this.log.error('[parley] purging expired Idempotency-Keys failed:', error));
    await this.feed.purgeExpired(this.config.eventsRetentionSeconds).catch((error) => this.log.error('[parley] purging expired events failed:', error));
    await purgeExpiredDeviceTokens(this.db, this.config.tokenTtlSeconds).catch((error) => this.log.error('[parley] purging expired device tokens failed:', error));
    await this.pairings.purge().catch((error) => this.log.error('[parley] purging old pairing codes failed:', error));
    await this.oidc?.purge().catch((error) => this.log.error('[parley] purging old sign-in handoffs failed:', error));
  }

  static async open(
    config: Config,
    log: Logger = console,
    options: ServiceOptions = {},
  ): Promise<{ service: ApiService; info: ServiceStartInfo }> {
    const opened = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, log });
    const db = opened.db;
    let blobs: OpenedBlobStore;
    try {
      blobs = options.store
        ? { store: options.store, description: 'a store given by the caller', presignedUrl: null, redirectOrigin: null, close: () => {} }
        : await openBlobStore(config);
    } catch (error) {
      await opened.close();
      throw error;
    }
    const store = blobs.store;
    const secret = await ensureSecret(db);
    let demoToken: string | null = null;
    if (config.staticTokens.size === 0) {
      const any = await db.selectFrom('tokens').select('id').limit(1).executeTakeFirst();
      if (!any) demoToken = (await createToken(db, 'demo', 'created on first start')).token;
    }
    // What an earlier process left (a crash mid-upload) — but only what is older than the grace
    // period: another instance may be uploading right now into the same store.
    const graceMs = options.sweepGraceMs ?? sweepGraceMs(config);
    // Housekeeping, not a condition of starting: a store that cannot list unfinished multipart
    // uploads (s3rver as published, some S3-compatible stores) costs a warning, not the service.
    const temp = await housekeeping(log, 'the start-up sweep of unfinished uploads', () => store.removeUnfinished(graceMs));
    const live = new Set((await db.selectFrom('files').select('storage_key').execute()).map((r) => r.storage_key));
    for (const key of await new UploadRecords(db).chunkKeys()) live.add(key); // bytes of unfinished resumable uploads
    const orphans = await housekeeping(log, 'the start-up sweep of orphaned files', () => sweepOrphans(store, (key) => live.has(key), graceMs));
    const swept = { temp, orphans };
    const service = new ApiService(config, opened, blobs, secret, log, graceMs);
    service.limits = await RateLimiter.open(config.rateLimits, config.databaseUrl, log, { advertise: config.extensions.has('ratelimit') });
    service.share = new FairShare(config.fairShare);
    await service.purgeExpired();
    await service.drainBlobDeletions();
    if (config.extensions.has('events') && config.databaseUrl) {
      // Other instances' commits reach this instance's live streams through PostgreSQL.
      service.notifications = await listenForEvents(config.databaseUrl, service.hub, log);
    }
    return { service, info: { demoToken, swept, blobStore: blobs.description, redirectOrigin: blobs.redirectOrigin } };
  }

  /** Where this service keeps file bytes (tests and maintenance tools). */
  get blobStore(): BlobStore {
    return this.store;
  }

  get db(): Db {
    return this.opened.db;
  }

  /**
   * The start of a shutdown: /readyz answers 503 and live event streams end cleanly (their
   * clients reconnect elsewhere). Requests in flight go on; `close()` comes after them.
   */
  beginShutdown(): void {
    this.shuttingDown = true;
    for (const stream of this.streams) stream.endGracefully();
  }

  /** The dependencies /readyz asks: a cheap query, a cheap store call. */
  private readonly readiness = {
    database: () => sql`select 1`.execute(this.db),
    storage: () => this.store.check(),
  };

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const stream of this.streams) stream.destroy();
    this.hub.close();
    await this.notifications?.close();
    await this.limits?.close();
    await this.deletionPass;
    await this.audit.close(); // the queued reads are written before the database closes
    await this.opened.close();
    this.blobs.close();
  }

  /**
   * Removes the bytes of deleted files (queued by the deleting transactions) that are due at `now`
   * (Unix seconds); failures stay queued with a backoff. Runs after every delete, every minute and
   * at start-up.
   */
  drainBlobDeletions(options: { now?: number } = {}): Promise<DrainResult> {
    const pass = this.deletionPass.then(() => this.deletions.drain(options.now));
    this.deletionPass = pass.catch(() => {});
    return pass;
  }

  /** Removes unfinished writes and stored blobs no row points at, older than `graceMs`. */
  private async sweep(graceMs: number): Promise<{ temp: number; orphans: number }> {
    const temp = await housekeeping(this.log, 'the sweep of unfinished uploads', () => this.store.removeUnfinished(graceMs));
    const orphans = await housekeeping(this.log, 'the sweep of orphaned files', () =>
      sweepOrphans(
        this.store,
        async (key) =>
          (await this.db.selectFrom('files').select('id').where('storage_key', '=', key).executeTakeFirst()) !== undefined ||
          (await this.uploads.records.isChunk(key)),
        graceMs,
      ),
    );
    return { temp, orphans };
  }

  /** Web-standard entry point. */
  async handle(request: Request): Promise<Response> {
    return toWebResponse(await this.dispatch(fromWebRequest(request)));
  }

  /** The core: every /v1 and /files request, whatever server it arrived through. */
  async dispatch(request: ApiRequest): Promise<ApiReply> {
    if (isHealthPath(request.path)) return serveHealth(request, this.readiness, this.log, { shuttingDown: this.shuttingDown });
    if (isDevicePolicyPath(request.path)) return serveDevicePolicy(request, this.config.devicePolicy);
    if (isDeviceClearPath(request.path)) return serveDeviceClear(request);
    if (isOidcPath(request.path)) {
      if (!this.oidc) return oidcNotOffered();
      try {
        // Per address: the steps of a sign-in on a count of their own; whether it is offered (the
        // sign-in screen asks on every visit) on the limit of requests without a token.
        await this.limits.forAddress(isOidcStep(request.path) ? 'sign-in' : 'address', request.remoteAddress);
        return await this.oidc.handle(request);
      } catch (error) {
        return reply(errorResult(this.answerFor(request, error)));
      }
    }
    if (request.path.startsWith('/files/')) {
      // The signed URL is the authorisation: recorded as the file owner's download, without a token.
      let file: StoredFile | undefined;
      let answer: ApiReply;
      try {
        answer = await serveAsset(
          request,
          async (id) => (file = await this.files.forAsset(this.db, id)),
          (id, name, sig) => this.signer.verify(id, name, sig),
          (key, range) => this.store.open(key, range),
          this.blobs.presignedUrl,
        );
      } catch (error) {
        answer = reply(errorResult(this.answerFor(request, error)));
      }
      if (file) {
        const action = request.method === 'HEAD' ? 'read' : 'download';
        // Committed before the bytes go out (domain/audit.ts, "Durability").
        await this.audit.enqueue({ user: file.user_id, token: null, action, objectType: 'file', objectId: file.id, address: request.remoteAddress, outcome: answer.status });
      }
      return answer;
    }
    let answer: ApiReply;
    try {
      answer = await this.route(request);
    } catch (error) {
      answer = reply(errorResult(this.answerFor(request, error)));
    }
    // What was not recorded with its change (reads, refusals, replays) is committed, with its
    // outcome, before the answer is sent (group commit: domain/audit.ts).
    const note = request.audit;
    if (note && !note.recorded) await this.audit.enqueueWith(note.entry, answer.status);
    // Advertised up front, so that a client need not learn it from a replay.
    if (this.config.extensions.has('idempotency')) answer.headers.Idempotency = 'supported';
    // Every answer to a counted request says where the token stands (a 429 of the limit says it itself).
    if (request.quota && this.config.extensions.has('ratelimit')) addRateLimitFields(answer.headers, request.quota);
    return answer;
  }

  /** The error to answer a failed request with; what is not the client's doing is logged, once. */
  private answerFor(request: ApiRequest, error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    const failure = storageFailure(error);
    // The route template, never the path: it may hold a file name.
    const where = { request_id: request.context?.id, method: request.method, route: routeTemplate(request.path, request.context) };
    if (failure) {
      this.log.error(`[parley] storage ${failure.replace('_', '-')}:`, where, error);
      return storageFailureError(failure);
    }
    this.log.error('[parley] internal error', where, error);
    return internalError();
  }

  /**
   * A /v1 request, through the route table: the Host first; then public routes (no token); then
   * the token (a refused one counts against its address), the per-token rate limits and a
   * fair-share turn, except for live streams (their own caps) and long uploads (no turn).
   */
  private async route(request: ApiRequest): Promise<ApiReply> {
    const path = request.path.length > 1 && request.path.endsWith('/') ? request.path.slice(0, -1) : request.path;
    if (path !== '/v1' && !path.startsWith('/v1/')) throw notFound('route');
    // Every /v1 request, before anything else: see http/hosts.ts for why not only file_url builders.
    this.hosts.check(request);
    const match = this.router.find(path);
    if (match && request.context) request.context.route = match.template;
    const route = match && routeFor(match.routes, request.method);
    if (match && route?.access === 'public') {
      if (match.missing) throw notFound(match.missing);
      if (route.rateLimit) request.quota = await this.limits.forAddress(route.rateLimit, request.remoteAddress);
      return reply(await route.handle(this.api, { request, user: '', tokenId: null, params: match.params }));
    }
    // A path that asks for no rate-limited token refuses a method before asking for one.
    if (match && !route && match.routes.every((r) => r.access)) throw methodNotAllowed(allowed(match.routes));
    const { user, tokenId } = await this.authenticate(request, route ?? undefined, match?.params).catch((error: unknown) => this.refuseToken(request, error));
    if (match && route?.access === 'stream') return route.handle(this.api, { request, user, tokenId, params: match.params });
    request.quota = await this.limits.forToken(request.header('authorization'), request.method);
    // Long requests (bytes moving over the network) do not take a turn: see http/fair-share.ts.
    if (match && route?.long) return reply(await this.serve(request, user, tokenId, match));
    return reply(await this.share.run(user, () => this.serve(request, user, tokenId, match)));
  }

  /**
   * A token refused (401): counted against the address (429 over its limit), and, when it is
   * answered 401, recorded as a failed sign-in (sampled: domain/audit-refusals.ts). Always throws.
   */
  private async refuseToken(request: ApiRequest, error: unknown): Promise<never> {
    const answer = await this.limits.refused(request.remoteAddress, error).catch((thrown: unknown) => thrown);
    const refusal = answer === error ? tokenRefusalOf(error) : undefined;
    if (refusal && this.audit.enabled && this.refusals.shouldRecord(request.remoteAddress, refusal)) {
      await this.audit.enqueue({
        user: refusal.user ?? UNKNOWN_USER,
        token: refusal.tokenId ?? null,
        action: 'sign-in',
        objectType: 'token',
        objectId: refusal.tokenId ?? null,
        address: request.remoteAddress ?? null,
        outcome: `refused:${refusal.reason}`,
      });
    }
    throw answer;
  }

  /** A /v1 request of an authenticated user (within its limits). */
  private async serve(request: ApiRequest, user: string, tokenId: string | null, match: PathMatch | null): Promise<ApiResult> {
    if (!match) throw notFound('route');
    if (match.missing) throw notFound(match.missing);
    const route = routeFor(match.routes, request.method);
    // A stream's route is answered before (route()): never here.
    if (!route || route.access === 'stream') throw methodNotAllowed(allowed(match.routes));
    const result = await route.handle(this.api, { request, user, tokenId, params: match.params });
    request.audit?.learn(result);
    return result;
  }

  /**
   * The user of the request's token; noted in its context for the request log, and in its audit
   * entry (with the token's id) when the route is one.
   */
  private async authenticate(request: ApiRequest, route: Route | undefined, params: Record<string, string> | undefined): Promise<Identity> {
    const identity = await this.auth.identify(request.header('authorization'));
    const { user } = identity;
    // A PARLEY_TOKENS token has no stored id: the trail says `static`.
    const token = identity.tokenId ?? 'static';
    if (request.context) request.context.user = user;
    if (route && this.audit.enabled) {
      const action = auditAction(request.method, route.path, request.query);
      if (action) {
        const id = params?.id;
        const conversation = request.query.get('conversation_id');
        request.audit = new AuditNote({
          user,
          token,
          action,
          objectType: objectType(route.path),
          objectId: id !== undefined && ID_PATTERN.test(id) ? id : null,
          // Only an id, never whatever else was sent.
          conversationId: conversation !== null && ID_PATTERN.test(conversation) ? conversation : null,
          address: request.remoteAddress ?? null,
        });
      }
    }
    return identity;
  }

  /** After a write that succeeded: this process's live streams of that user look at the feed. */
  private written(user: string, result: ApiResult): ApiResult {
    if (this.config.extensions.has('events') && result.status < 300) this.hub.publish(user);
    return result;
  }
}

/** What a request does, for the audit trail: by its method, and whether its path names one record. */
function auditAction(method: string, template: string, query: URLSearchParams): AuditAction | null {
  // Signing a device out (with its erase) is a revocation, not a record's deletion.
  if (method === 'DELETE' && template.startsWith('/v1/me/devices/')) return query.get('wipe') === 'true' ? 'wipe' : 'revoke';
  switch (method) {
    case 'GET':
    case 'HEAD':
      return template.endsWith('}') ? 'read' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
    case 'PATCH':
      return 'update';
    case 'DELETE':
      return 'delete';
    default:
      return null;
  }
}

/** objectType of each route template met so far (the table's: a few dozen). */
const objectTypes = new Map<string, string>();

/** The kind of record a route's path is about: /v1/conversations/{id} → conversation. */
function objectType(template: string): string {
  let type = objectTypes.get(template);
  if (type === undefined) {
    type = objectTypeOf(template);
    objectTypes.set(template, type);
  }
  return type;
}

function objectTypeOf(template: string): string {
  const segments = template.split('/').filter((s) => s && s !== 'v1' && s !== 'stream' && !s.startsWith('{'));
  const last = segments[segments.length - 1] ?? '';
  return last.endsWith('s') ? last.slice(0, -1) : last;
}

/** Runs a housekeeping pass; a failure is logged as a warning and counts as nothing removed. */
async function housekeeping(log: Logger, what: string, pass: () => Promise<number>): Promise<number> {
  try {
    return await pass();
  } catch (error) {
    const code = stringField(error, 'Code') ?? stringField(error, 'name') ?? 'error';
    log.error(`[parley] warning: ${what} was skipped (${code}: ${stringField(error, 'message') ?? String(error)}); the service runs without it, and the next pass tries again`);
    return 0;
  }
}

async function ensureSecret(db: Db): Promise<Buffer> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', 'asset_secret').executeTakeFirst();
  if (row) return Buffer.from(row.value, 'base64');
  const secret = randomBytes(32);
  await db.insertInto('settings').values({ key: 'asset_secret', value: secret.toString('base64') }).execute();
  return secret;
}
