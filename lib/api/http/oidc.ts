// Single sign-on with OpenID Connect (authorization code flow with PKCE) on the app's own server,
// embedded service only (in proxy mode the tokens are the upstream's: these paths answer 404).
//
//   GET  /auth/oidc           {"enabled": true, "name": "<OIDC_DISPLAY_NAME>"} for the sign-in screen
//   GET  /auth/oidc/start     302 to the provider with state, nonce and a PKCE challenge; the state,
//                             nonce and code_verifier go into an encrypted HttpOnly, SameSite=Lax
//                             cookie (10 minutes, Path=/auth/oidc): nothing is kept on the server,
//                             so any instance can take the callback
//   GET  /auth/oidc/callback  openid-client checks the answer (state, issuer, the ID token's
//                             signature, audience, expiry and nonce; the code is exchanged with the
//                             PKCE verifier); the claim becomes the user id. Then 303 to
//                             /?signin=<handoff id>, and the cookie now binds that handoff to this
//                             browser. Any failure: 303 to /?signin_error=<code>
//   POST /auth/oidc/handoff   {"id"} with the binding cookie → {"token", "user"} once: the device
//                             token is made now (stored as a hash, labelled with the device) and the
//                             sign-in recorded in the audit trail
//
// The token never travels in a URL: the handoff id in the address bar (and in access logs) is not
// the token, works once, for about a minute, and only with the cookie of the browser that signed in.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import { z } from 'zod';
import type { OidcConfig } from '../../config';
import { fieldOf, stringField } from '../../records';
import { ApiError, invalid, missing, notFound } from '../errors';
import type { Db } from '../storage/db';
import { inTransaction } from '../storage/transaction';
import { recordAudit, UNKNOWN_USER, type AuditEntry } from '../domain/audit';
import { nowSeconds } from '../domain/ids';
import { deviceLabel } from '../domain/pairings';
import { createDeviceToken, USER_PATTERN } from '../domain/tokens';
import { chunkBytes } from './chunks';
import type { ApiReply, ApiRequest } from './exchange';

export const OIDC_PATH = '/auth/oidc';
export const OIDC_CALLBACK_PATH = `${OIDC_PATH}/callback`;
const COOKIE = 'parley_oidc';
/** How long a sign-in at the provider may take (the flow cookie's life). */
const FLOW_SECONDS = 600;
/** How long the app has to redeem a handoff once back from the provider. */
export const HANDOFF_SECONDS = 60;

/** The codes of /?signin_error=<code> (the sign-in screen explains each). */
export type SignInErrorCode = 'refused' | 'denied' | 'expired' | 'state_mismatch' | 'idp_unreachable' | 'no_user';

export function isOidcPath(path: string): boolean {
  return path === OIDC_PATH || path.startsWith(`${OIDC_PATH}/`);
}

/** A step of a sign-in (start, callback, handoff, or any other path below), not the question whether it is offered. */
export function isOidcStep(path: string): boolean {
  return path.startsWith(`${OIDC_PATH}/`) && path !== `${OIDC_PATH}/`;
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

function json(status: number, body: unknown, headers: Record<string, string> = {}): ApiReply {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

function errorReply(error: ApiError): ApiReply {
  return json(error.status, error.body(), error.headers);
}

/** 404 in the contract's shape: what proxy mode (and a server without OIDC_*) answers on /auth/oidc/…. */
export function oidcNotOffered(): ApiReply {
  return errorReply(new ApiError('resource_missing', 'Single sign-on is not offered by this server (no OIDC_ISSUER_URL, or proxy mode)'));
}

function redirect(location: string, status = 302, cookie?: string): ApiReply {
  return { status, headers: { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', ...(cookie ? { 'Set-Cookie': cookie } : {}) }, body: null };
}

/** The user id for a claim's value (README, "Single sign-on"). */
export function userIdFor(claim: string, value: unknown): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  let text = String(value).trim();
  if (!text) return null;
  // E-mail addresses are case-insensitive in practice: one user whatever case the provider sends.
  if (claim === 'email') text = text.toLowerCase();
  if (USER_PATTERN.test(text)) return text;
  // Anything else (too long, spaces, other characters) becomes a stable id of its own: the same
  // value always maps to the same user, and it cannot collide with a value that fits.
  return `oidc_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
}

/** The cookie of a sign-in under way: what the callback checks the provider's answer against. */
const FlowCookie = z.object({ k: z.literal('flow'), state: z.string(), nonce: z.string(), verifier: z.string(), redirectUri: z.string(), exp: z.number() });
type FlowCookie = z.infer<typeof FlowCookie>;
/** The cookie of a finished sign-in: binds its handoff to this browser. */
const HandoffCookie = z.object({ k: z.literal('handoff'), binding: z.string(), exp: z.number() });
type HandoffCookie = z.infer<typeof HandoffCookie>;
const SignInCookie = z.discriminatedUnion('k', [FlowCookie, HandoffCookie]);

const hashHex = (value: string) => createHash('sha256').update(value).digest('hex');

export class OidcSignIn {
  private discovered: Promise<client.Configuration> | null = null;
  private readonly key: Buffer;

  constructor(
    private readonly config: OidcConfig,
    private readonly db: Db,
    installationSecret: Buffer,
    /** The public origin of a request: ASSET_URL, or its own (HostPolicy); throws 400 for a Host not allowed. */
    private readonly originOf: (request: ApiRequest) => string,
    private readonly log: { error(...args: unknown[]): void },
    /** Where failed sign-ins are recorded (committed before the answer, like a read's record). */
    private readonly audit: { enqueue(entry: AuditEntry): Promise<void> },
  ) {
    this.key = createHmac('sha256', installationSecret).update('parley oidc cookie').digest();
  }

  async handle(request: ApiRequest): Promise<ApiReply> {
    const step = request.path.slice(OIDC_PATH.length).replace(/\/$/, '');
    const allow = (methods: string[]) =>
      methods.includes(request.method) ? null : errorReply(new ApiError('method_not_allowed', `Method not allowed; use ${methods.join(' or ')}`, undefined, {}, { Allow: methods.join(', ') }));
    try {
      switch (step) {
        case '':
          return allow(['GET', 'HEAD']) ?? json(200, { enabled: true, name: this.config.displayName });
        case '/start':
          return allow(['GET']) ?? (await this.start(request));
        case '/callback':
          return allow(['GET']) ?? (await this.callback(request));
        case '/handoff':
          return allow(['POST']) ?? (await this.handoff(request));
        default:
          return errorReply(notFound('sign-in route'));
      }
    } catch (error) {
      if (error instanceof ApiError) return errorReply(error);
      throw error;
    }
  }

  /** Discovery, once (again after a failure: a provider down at start-up is asked again next time). */
  private configuration(): Promise<client.Configuration> {
    if (!this.discovered) {
      const { issuerUrl, clientId, clientSecret } = this.config;
      const insecure = new URL(issuerUrl).protocol === 'http:'; // loopback only (lib/config.ts)
      this.discovered = client
        .discovery(new URL(issuerUrl), clientId, clientSecret ?? undefined, clientSecret ? client.ClientSecretPost(clientSecret) : client.None(), {
          timeout: 10,
          ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
        })
        .then((configuration) => {
          // openid-client would take the ID token from the token endpoint on TLS's word alone (OIDC
          // Core allows it); its signature is checked against the provider's keys as well.
          client.enableNonRepudiationChecks(configuration);
          return configuration;
        })
        .catch((error: unknown) => {
          this.discovered = null;
          throw error;
        });
    }
    return this.discovered;
  }

  private async start(request: ApiRequest): Promise<ApiReply> {
    const redirectUri = `${this.originOf(request)}${OIDC_CALLBACK_PATH}`;
    let configuration: client.Configuration;
    try {
      configuration = await this.configuration();
    } catch (error) {
      this.log.error('[parley] single sign-on: the provider\'s discovery document could not be read:', error instanceof Error ? error.message : error);
      return this.failed(request, 'idp_unreachable');
    }
    const verifier = client.randomPKCECodeVerifier();
    const flow: FlowCookie = { k: 'flow', state: client.randomState(), nonce: client.randomNonce(), verifier, redirectUri, exp: nowSeconds() + FLOW_SECONDS };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      response_type: 'code',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return redirect(url.href, 302, this.cookie(request, flow, FLOW_SECONDS));
  }

  private async callback(request: ApiRequest): Promise<ApiReply> {
    const flow = this.readCookie(request);
    if (!flow || flow.k !== 'flow') return this.failed(request, 'expired');
    const givenState = request.query.get('state');
    if (givenState === null || !same(givenState, flow.state)) return this.failed(request, 'state_mismatch');
    if (request.query.get('error')) return this.failed(request, request.query.get('error') === 'access_denied' ? 'denied' : 'refused');
    let configuration: client.Configuration;
    try {
      configuration = await this.configuration();
    } catch {
      return this.failed(request, 'idp_unreachable');
    }
    const currentUrl = new URL(flow.redirectUri);
    currentUrl.search = request.query.toString();
    let claims: Record<string, unknown> | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      claims = idToken;
      // Some providers (Keycloak without the mapper, oidc-provider) put the scope's claims only in
      // the UserInfo answer: asked for that subject when the ID token lacks the claim.
      if (idToken && idToken[this.config.userClaim] === undefined && configuration.serverMetadata().userinfo_endpoint) {
        claims = { ...(await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub)), ...idToken };
      }
    } catch (error) {
      const code = stringField(error, 'code');
      const unreachable = error instanceof TypeError || code === 'OAUTH_TIMEOUT';
      this.log.error(`[parley] single sign-on ${unreachable ? 'could not reach the provider' : 'refused'}:`, error instanceof Error ? `${code ?? error.name}: ${error.message}` : error);
      return this.failed(request, unreachable ? 'idp_unreachable' : 'refused');
    }
    if (!claims) return this.failed(request, 'refused');
    const user = userIdFor(this.config.userClaim, claims[this.config.userClaim]);
    if (this.config.userClaim === 'email' && claims.email_verified === false) return this.failed(request, 'no_user', user);
    if (!user) return this.failed(request, 'no_user');
    const id = randomBytes(32).toString('base64url');
    const binding = randomBytes(32).toString('base64url');
    const expires = nowSeconds() + HANDOFF_SECONDS;
    await this.db
      .insertInto('sign_ins')
      .values({ id_hash: hashHex(id), user_id: user, label: deviceLabel(request.header('user-agent')), binding_hash: hashHex(binding), expires_at: expires, token_id: null })
      .execute();
    return redirect(`/?signin=${id}`, 303, this.cookie(request, { k: 'handoff', binding, exp: expires } satisfies HandoffCookie, HANDOFF_SECONDS));
  }

  private async handoff(request: ApiRequest): Promise<ApiReply> {
    const body = await readSmallBody(request);
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(body || '{}');
    } catch {
      // as null: not JSON with fields
    }
    if (parsed === null) throw invalid(undefined, 'The body must be JSON: {"id": "<the signin= value>"}');
    const id = fieldOf(parsed, 'id');
    if (id === undefined) throw missing('id');
    if (typeof id !== 'string' || id.length > 100) throw invalid('id', 'id must be the signin= value');
    const gone = () => new ApiError('resource_missing', 'No such sign-in: it was used, it expired (a minute), or it was made in another browser. Sign in again', 'id');
    const cookie = this.readCookie(request);
    if (!cookie || cookie.k !== 'handoff') {
      await this.refused(request, 'handoff_refused');
      throw gone();
    }
    const row = await this.db.selectFrom('sign_ins').selectAll().where('id_hash', '=', hashHex(id)).executeTakeFirst();
    if (!row || row.token_id !== null || Number(row.expires_at) < nowSeconds() || !same(row.binding_hash, hashHex(cookie.binding))) {
      await this.refused(request, 'handoff_refused', row?.user_id);
      throw gone();
    }
    const made = await inTransaction(this.db, async (trx) => {
      const claimed = await trx.updateTable('sign_ins').set({ token_id: 'claimed' }).where('id_hash', '=', row.id_hash).where('token_id', 'is', null).executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) throw gone();
      const token = await createDeviceToken(trx, row.user_id, row.label);
      await trx.updateTable('sign_ins').set({ token_id: token.id }).where('id_hash', '=', row.id_hash).execute();
      await recordAudit(trx, { user: row.user_id, token: token.id, action: 'sign-in', objectType: 'token', objectId: token.id, address: request.remoteAddress ?? null, outcome: 200 });
      return token;
    });
    // The cookie has done its work.
    return json(200, { token: made.token, user: row.user_id, device_id: made.id }, { 'Set-Cookie': this.clearCookie(request) });
  }

  /** Housekeeping (hourly): handoffs past their minute. */
  async purge(now = nowSeconds()): Promise<void> {
    await this.db.deleteFrom('sign_ins').where('expires_at', '<', now - 60).execute();
  }

  /** A refused sign-in: recorded (with the user when the provider named one), then back to the sign-in screen. */
  private async failed(request: ApiRequest, code: SignInErrorCode, user?: string | null): Promise<ApiReply> {
    await this.refused(request, code, user);
    return redirect(`/?signin_error=${code}`, 303);
  }

  /**
   * The audit row of a failed sign-in: outcome `refused:<reason>`. Every refused step is one row;
   * what bounds their number is the rate limit on these paths (RATE_LIMIT_SIGN_IN_PER_MINUTE per
   * address: a step over it is answered 429 and not recorded).
   */
  private refused(request: ApiRequest, reason: SignInErrorCode | 'handoff_refused', user?: string | null): Promise<void> {
    return this.audit.enqueue({ user: user ?? UNKNOWN_USER, token: null, action: 'sign-in', objectType: 'token', address: request.remoteAddress ?? null, outcome: `refused:${reason}` });
  }

  private cookie(request: ApiRequest, value: FlowCookie | HandoffCookie, maxAge: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(value)), cipher.final()]);
    const text = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
    return `${COOKIE}=${text}; Path=${OIDC_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${this.secure(request) ? '; Secure' : ''}`;
  }

  private clearCookie(request: ApiRequest): string {
    return `${COOKIE}=; Path=${OIDC_PATH}; Max-Age=0; HttpOnly; SameSite=Lax${this.secure(request) ? '; Secure' : ''}`;
  }

  /**
   * `Secure` when the browser's origin is https: the request's own scheme, or the public origin
   * (ASSET_URL) when TLS ends at a reverse proxy in front and the request reaches us over http.
   */
  private secure(request: ApiRequest): boolean {
    if (request.scheme === 'https') return true;
    try {
      return this.originOf(request).startsWith('https:');
    } catch {
      return false; // a Host not allowed: answered 400 elsewhere
    }
  }

  /** The flow's cookie, when it is ours, intact and not expired. */
  private readCookie(request: ApiRequest): FlowCookie | HandoffCookie | null {
    const header = request.header('cookie') ?? '';
    const raw = header
      .split(';')
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${COOKIE}=`))
      ?.slice(COOKIE.length + 1);
    if (!raw) return null;
    try {
      const bytes = Buffer.from(raw, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      const value = SignInCookie.safeParse(JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString()));
      return value.success && value.data.exp >= nowSeconds() ? value.data : null;
    } catch {
      return null;
    }
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readSmallBody(request: ApiRequest, limit = 4096): Promise<string> {
  if (!request.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    const bytes = chunkBytes(chunk);
    size += bytes.length;
    if (size > limit) throw invalid(undefined, 'The body is too large');
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
