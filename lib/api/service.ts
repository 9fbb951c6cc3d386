// The /v1 service: framework-free. `dispatch` is the core; `handle` is its Web-standard
// Request → Response face, used by the Next.js route handlers and by tests.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import { ID_PATTERN } from '../schemas';
import { serveAsset } from './assets';
import { bodyKind, readFields, unsupportedMediaType } from './body';
import { Conversations } from './conversations';
import { openDb, type Db, type OpenedDb } from './db';
import { ApiError, internalError, methodNotAllowed, notFound, unknownParam } from './errors';
import { Files } from './files';
import { fromWebRequest, toWebResponse, type ApiReply, type ApiRequest } from './http';
import { IdempotencyStore } from './idempotency';
import { openApiDocument } from './openapi';
import { errorResult, type ApiResult } from './result';
import { UrlSigner } from './signing';
import { BlobStore } from './storage';
import { Authenticator, createToken } from './tokens';
import { receiveUpload } from './upload';

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

function reply(result: ApiResult): ApiReply {
  if (result.body === undefined) return { status: result.status, headers: { 'Cache-Control': 'no-store', ...result.headers }, body: null };
  return { status: result.status, headers: { ...JSON_HEADERS, ...result.headers }, body: JSON.stringify(result.body) };
}

type Logger = Pick<Console, 'log' | 'error'>;

export interface ServiceStartInfo {
  /** Set on the very first start with no tokens at all: a token for user "demo". */
  demoToken: string | null;
  swept: { temp: number; orphans: number };
}

export class ApiService {
  private readonly auth: Authenticator;
  private readonly conversations: Conversations;
  private readonly files: Files;
  private readonly idempotency: IdempotencyStore;
  private readonly signer: UrlSigner;
  private readonly purgeTimer: NodeJS.Timeout;
  private openapiText: string | null = null;

  private constructor(
    private readonly config: Config,
    private readonly opened: OpenedDb,
    private readonly store: BlobStore,
    secret: Buffer,
    private readonly log: Logger,
  ) {
    const db = opened.db;
    this.signer = new UrlSigner(secret);
    this.auth = new Authenticator(db, config.staticTokens);
    this.conversations = new Conversations(db);
    this.files = new Files(db, this.signer, store, this.conversations);
    this.idempotency = new IdempotencyStore(db, config.idempotency);
    this.purgeTimer = setInterval(() => void this.idempotency.purgeExpired().catch(() => {}), 3600_000);
    this.purgeTimer.unref();
  }

  static async open(config: Config, log: Logger = console): Promise<{ service: ApiService; info: ServiceStartInfo }> {
    const opened = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    const db = opened.db;
    const store = new BlobStore(config.dataDir);
    const secret = await ensureSecret(db);
    let demoToken: string | null = null;
    if (config.staticTokens.size === 0) {
      const any = await db.selectFrom('tokens').select('id').limit(1).executeTakeFirst();
      if (!any) demoToken = (await createToken(db, 'demo', 'created on first start')).token;
    }
    const live = new Set((await db.selectFrom('files').select('storage_key').execute()).map((r) => r.storage_key));
    const swept = await store.sweep((key) => live.has(key));
    const service = new ApiService(config, opened, store, secret, log);
    await service.idempotency.purgeExpired();
    return { service, info: { demoToken, swept } };
  }

  get db(): Db {
    return this.opened.db;
  }

  async close(): Promise<void> {
    clearInterval(this.purgeTimer);
    await this.opened.close();
  }

  /** Web-standard entry point. */
  async handle(request: Request): Promise<Response> {
    return toWebResponse(await this.dispatch(fromWebRequest(request)));
  }

  /** The core: every /v1 and /files request, whatever server it arrived through. */
  async dispatch(request: ApiRequest): Promise<ApiReply> {
    try {
      if (request.path.startsWith('/files/')) {
        return await serveAsset(
          request,
          (id) => this.files.forAsset(this.db, id),
          (id, name, sig) => this.signer.verify(id, name, sig),
          (key) => this.store.pathOf(key),
        );
      }
      return reply(await this.route(request));
    } catch (error) {
      if (error instanceof ApiError) return reply(errorResult(error));
      this.log.error('[parley] internal error', request.method, request.path, error);
      return reply(errorResult(internalError()));
    }
  }

  private assetBase(request: ApiRequest): string {
    return this.config.assetUrl ?? request.origin;
  }

  private async route(request: ApiRequest): Promise<ApiResult> {
    const path = request.path.length > 1 && request.path.endsWith('/') ? request.path.slice(0, -1) : request.path;
    const segments = path.split('/'); // ['', 'v1', collection, id?]
    if (segments[1] !== 'v1') throw notFound('route');
    if (segments.length === 3 && segments[2] === 'openapi.json') {
      if (request.method !== 'GET') throw methodNotAllowed(['GET']);
      this.openapiText ??= JSON.stringify(openApiDocument());
      return { status: 200, body: JSON.parse(this.openapiText), headers: { 'Cache-Control': 'public, max-age=300' } };
    }
    const user = await this.auth.authenticate(request.header('authorization'));
    const collection = segments[2];
    if ((collection !== 'conversations' && collection !== 'files') || segments.length > 4) {
      throw notFound('route');
    }
    const id = segments[3];
    if (id === undefined) {
      if (request.method === 'GET') return this.list(collection, request, user);
      if (request.method === 'POST') return this.create(collection, request, user);
      throw methodNotAllowed(['GET', 'POST']);
    }
    if (!ID_PATTERN.test(id)) throw notFound(collection === 'files' ? 'file' : 'conversation');
    if (request.method === 'GET') {
      for (const name of request.query.keys()) throw unknownParam(name);
      const body =
        collection === 'conversations'
          ? await this.conversations.retrieve(this.db, user, id)
          : this.files.toFile(await this.files.get(this.db, user, id), this.assetBase(request));
      return { status: 200, body };
    }
    if (request.method === 'PUT') return this.update(collection, request, user, id);
    if (request.method === 'DELETE') return this.remove(collection, request, user, id);
    throw methodNotAllowed(['GET', 'PUT', 'DELETE']);
  }

  private async list(collection: string, request: ApiRequest, user: string): Promise<ApiResult> {
    const body =
      collection === 'conversations'
        ? await this.conversations.list(this.db, user, request.query)
        : await this.files.list(this.db, user, request.query, this.assetBase(request));
    return { status: 200, body };
  }

  private idempotencyKey(request: ApiRequest): string | null {
    return request.header('idempotency-key');
  }

  private async create(collection: string, request: ApiRequest, user: string): Promise<ApiResult> {
    if (collection === 'conversations') {
      const fields = await readFields(request);
      return this.idempotency.run(
        user,
        this.idempotencyKey(request),
        () => ({ method: 'POST', path: request.path, content: fields }),
        async (trx) => ({ status: 201, body: await this.conversations.create(trx, user, fields) }),
      );
    }
    if (bodyKind(request.header('content-type')) !== 'multipart') throw unsupportedMediaType('multipart/form-data');
    const upload = await receiveUpload(request, this.store, this.config.maxUploadBytes);
    try {
      const file = upload.file;
      return await this.idempotency.run(
        user,
        this.idempotencyKey(request),
        () => ({
          method: 'POST',
          path: request.path,
          content: {
            ...upload.fields,
            file: file && { name: file.rawFilename, type: file.declaredType, size: file.size, sha256: file.sha256 },
          },
        }),
        async (trx) => ({ status: 201, body: await this.files.create(trx, user, upload, this.assetBase(request)) }),
      );
    } finally {
      if (upload.file) await this.store.removeTemp(upload.file.tempPath); // no-op once moved into place
    }
  }

  private async update(collection: string, request: ApiRequest, user: string, id: string): Promise<ApiResult> {
    const fields = await readFields(request);
    return this.idempotency.run(
      user,
      this.idempotencyKey(request),
      () => ({ method: 'PUT', path: request.path, content: fields }),
      async (trx) => ({
        status: 200,
        body:
          collection === 'conversations'
            ? await this.conversations.update(trx, user, id, fields)
            : await this.files.rename(trx, user, id, fields, this.assetBase(request)),
      }),
      { singleWrite: collection === 'conversations' },
    );
  }

  private async remove(collection: string, request: ApiRequest, user: string, id: string): Promise<ApiResult> {
    let keys: string[] = [];
    const result = await this.idempotency.run(
      user,
      this.idempotencyKey(request),
      () => ({ method: 'DELETE', path: request.path, content: {} }),
      async (trx) => {
        keys =
          collection === 'conversations'
            ? await this.conversations.delete(trx, user, id)
            : [await this.files.delete(trx, user, id)];
        return { status: 204 };
      },
    );
    // The rows are gone (committed); now the bytes. A failure here leaves orphans for the sweep.
    for (const key of keys) {
      await this.store.remove(key).catch((error) => this.log.error('[parley] could not remove bytes', key, error));
    }
    return result;
  }
}

async function ensureSecret(db: Db): Promise<Buffer> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', 'asset_secret').executeTakeFirst();
  if (row) return Buffer.from(row.value, 'base64');
  const secret = randomBytes(32);
  await db.insertInto('settings').values({ key: 'asset_secret', value: secret.toString('base64') }).execute();
  return secret;
}
