// The one place where configuration is read from the environment.
import { isIPv6 } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

export const MiB = 1024 * 1024;

export interface Config {
  port: number;
  hostname: string;
  /** Where SQLite and file bytes live. */
  dataDir: string;
  /** Static tokens seeded from PARLEY_TOKENS: token → user id. */
  staticTokens: Map<string, string>;
  /** Origin used to build file_url; null means "the origin of the request" (its Host, if allowed). */
  assetUrl: string | null;
  /**
   * ALLOWED_HOSTS: the Host values a request may carry when file_url is built from it (no
   * ASSET_URL). null: the default, loopback names and this machine's name on the server's port
   * (see lib/api/http/hosts.ts).
   */
  allowedHosts: AllowedHost[] | null;
  maxUploadBytes: number;
  /** Proxy mode: when set, /v1 is forwarded to this service instead of served locally. */
  upstreamBaseUrl: string | null;
  upstreamToken: string | null;
  upstreamConnectTimeoutMs: number;
  upstreamIdleTimeoutMs: number;
  /** PostgreSQL connection string; absent means SQLite in dataDir. */
  databaseUrl: string | null;
  /**
   * The /v1 extensions this server offers (see ../shared/API.md "Extensions"). All by default;
   * tests switch them off to play a server with only the brief's contract, which the app must
   * still work against.
   */
  extensions: ReadonlySet<Extension>;
  /** How long the change feed keeps events; an older cursor answers 410 events_expired. */
  eventsRetentionSeconds: number;
  /** Comment lines on an idle live stream, so proxies and clients can tell quiet from dead. */
  eventsHeartbeatMs: number;
  /** Live streams (per instance): how often each re-checks its token, at most how many per user and in all. */
  streams: StreamLimits;
  /** How long a repeat waits for a first request with its key that is still running (then 409 idempotency_in_progress). */
  idempotencyWaitMs: number;
  /** HTTP: the request's headers must arrive within this time (408 otherwise). */
  headersTimeoutMs: number;
  /** HTTP: a request body that sends nothing for this long is cut off. */
  bodyIdleTimeoutMs: number;
  /** HTTP: the whole request (headers and body) must arrive within this time (408 otherwise). */
  requestTimeoutMs: number;
  /**
   * After SIGTERM/SIGINT: how long requests in flight (uploads too) may take to finish before their
   * connections are cut and the process exits. Keep it below the orchestrator's kill timeout.
   */
  shutdownTimeoutMs: number;
  /** File bytes in an S3-compatible object store (S3_BUCKET set); null means local disk under dataDir. */
  s3: S3Config | null;
  /** RATE_LIMIT_*: requests per token, and per client address without a valid token (lib/api/http/rate-limit.ts). */
  rateLimits: RateLimits;
  /** MAX_REQUESTS_*_PER_USER: how many of one user's requests are worked on at once, and wait (lib/api/http/fair-share.ts). */
  fairShare: { perUser: number; queuedPerUser: number };
  /** Resumable uploads (tus, /v1/uploads; lib/api/http/tus/). */
  uploads: UploadSettings;
  /** TOKEN_TTL_DAYS: a device token (pairing, sign-in) unused this long is no longer accepted; CLI and static tokens do not expire. */
  tokenTtlSeconds: number;
  /**
   * The audit trail (lib/api/domain/audit.ts). AUDIT_RETENTION_DAYS: how long rows are kept.
   * AUDIT=off exists only for the bench (its with/without figure): a deployment keeps it on.
   */
  audit: { enabled: boolean; retentionDays: number };
  /** What the app must do to protect patient data on a device (GET /device-policy; lib/api/http/device-policy.ts). */
  devicePolicy: DevicePolicy;
  /** Single sign-on with OpenID Connect (OIDC_*; lib/api/http/oidc.ts); null: not offered. Embedded service only. */
  oidc: OidcConfig | null;
}

/** OIDC_*: an OpenID provider whose users may sign in (authorization code flow with PKCE). */
export interface OidcConfig {
  /** OIDC_ISSUER_URL: the issuer; its discovery document is at <issuer>/.well-known/openid-configuration. */
  issuerUrl: string;
  clientId: string;
  /** OIDC_CLIENT_SECRET; null: a public client (PKCE only). */
  clientSecret: string | null;
  /** OIDC_USER_CLAIM (default `email`): the ID token claim that becomes the user id. */
  userClaim: string;
  /** OIDC_DISPLAY_NAME: the sign-in screen says "Sign in with <name>" (default "single sign-on"). */
  displayName: string;
}

/**
 * The device policy, from the app's own server (never an upstream). Seconds and counts; 0 = off.
 * lockAfterSeconds 0 also means no encryption at rest (kiosks, test set-ups).
 */
export interface DevicePolicy {
  lockAfterSeconds: number;
  maxOfflineSeconds: number;
  wrongUnlocksBeforeWipe: number;
}

/** Resumable uploads (tus 1.0.0 at /v1/uploads). */
export interface UploadSettings {
  /**
   * UPLOAD_EXPIRY_HOURS: an unfinished upload untouched for this long expires (Upload-Expires) and
   * its bytes are removed; a finished one's record (its Upload-File-Id) is kept as long.
   */
  expirySeconds: number;
  /**
   * MAX_OPEN_UPLOADS_PER_USER: unfinished (and unexpired) uploads one user may hold; one more
   * creation answers 429 too_many_uploads. An abandoned upload counts until it expires.
   */
  maxOpenPerUser: number;
  /**
   * MAX_UPLOAD_CHUNKS: chunks (one blob each: a PATCH's bytes) one upload may hold. With one slot
   * left, a PATCH must carry every byte left (409 upload_chunk_limit otherwise).
   */
  maxChunks: number;
}

/** The uploads' defaults (lib/proxy/proxy.ts uses them when given no configuration). */
export const DEFAULT_UPLOAD_SETTINGS: UploadSettings = { expirySeconds: 24 * 3600, maxOpenPerUser: 100, maxChunks: 1000 };

/**
 * A token bucket per key: `perSecond` requests every second, and beyond them a reserve of `burst`
 * more, refilled every `burstSeconds`, spent at no more than `peakPerSecond` (0: as fast as it
 * comes). perSecond 0 switches that limit off.
 */
export interface RateLimit {
  perSecond: number;
  burst: number;
  burstSeconds: number;
  peakPerSecond: number;
}

export interface RateLimits {
  /** Per bearer token (a valid one). */
  token: RateLimit;
  /**
   * Writes (POST, PUT, PATCH, DELETE) per bearer token per second on this instance, whatever is
   * left of the reserve (0: no such cap). Writes are what a flood makes expensive for everyone
   * else; the app's own bursts of them (a replay of a queue built offline) stay well below it.
   */
  writesPerSecond: number;
  /** Per client address, for /v1 requests without a valid token. */
  anonymous: RateLimit;
  /** Pairing codes redeemed (POST /v1/pairings/redeem) per client address per minute (0: no limit). */
  pairingPerMinute?: number;
  /** Steps of a single sign-on (/auth/oidc/start, /callback, /handoff) per client address per minute (0: no limit). */
  signInPerMinute?: number;
}

export interface S3Config {
  bucket: string;
  /** Custom endpoint (MinIO, R2, Ceph …); null means AWS S3. */
  endpoint: string | null;
  /** null: the SDK's usual sources (AWS_REGION, the profile); with a custom endpoint, us-east-1 unless set. */
  region: string | null;
  /** null: the SDK's usual credential sources (environment, profile, instance or task role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /** Bucket in the path (http://host/bucket/key), as MinIO-style endpoints need, instead of in the host name. */
  forcePathStyle: boolean;
  /** Answer a valid signed /files/… request with a redirect to a short-lived presigned store URL. */
  presignedRedirect: boolean;
}

/** Live event streams of one instance (lib/api/domain/event-hub.ts). */
export interface StreamLimits {
  /** STREAM_TOKEN_RECHECK_MS: a stream whose token is no longer accepted ends within this time (the contract: 10 s at most). */
  tokenRecheckMs: number;
  /** MAX_STREAMS_PER_USER: open streams of one user on this instance; more are refused (429). */
  maxPerUser: number;
  /** MAX_STREAMS: open streams of all users on this instance; more are refused (429). */
  maxTotal: number;
}

/** Extensions that can be switched off: Idempotency-Key, /v1/me, the change feed and its live stream, resumable uploads, devices and pairing. */
export const EXTENSIONS = ['idempotency', 'me', 'events', 'uploads', 'devices', 'ratelimit'] as const;
export type Extension = (typeof EXTENSIONS)[number];

type Env = Record<string, string | undefined>;

/** One ALLOWED_HOSTS entry: a lowercase host name or address ([…] for IPv6); no port: any port. */
export interface AllowedHost {
  name: string;
  port: number | null;
}

/** Every problem with the configuration, one message each (all of them, not only the first). */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string | string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.length === 1 ? list[0] : `${list.length} problems with the configuration:\n${list.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = list;
  }
}

/** The value of one variable; an empty string counts as unset (as in `VAR= npm start`). */
const variable = z
  .string()
  .optional()
  .transform((raw) => (raw === '' ? undefined : raw));

/**
 * A variable read by `parse`, which throws ConfigError with the message for that variable; the
 * schema turns the throw into an issue, so that every variable is looked at and every problem told.
 */
function parsedBy<T>(parse: (raw: string | undefined) => T) {
  return variable.transform((raw, ctx): T => {
    try {
      return parse(raw);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const message of error.problems) ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
  });
}

function integerFrom(name: string, raw: string | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

const integer = (name: string, fallback: number, min: number, max?: number) => parsedBy((raw) => integerFrom(name, raw, fallback, min, max));

function baseUrlFrom(name: string, raw: string | undefined): string | null {
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return url.href.replace(/\/+$/, '');
}

const baseUrl = (name: string) => parsedBy((raw) => baseUrlFrom(name, raw));

function flagFrom(name: string, raw: string | undefined): boolean {
  if (raw === undefined) return false;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be "true" or "false", got "${raw}"`);
  return raw === 'true';
}

/** A PostgreSQL connection string. Its value is never repeated in a message: it may hold a password. */
function databaseUrlFrom(raw: string | undefined): string | null {
  if (!raw) return null;
  let protocol: string | null = null;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    // not a URL at all
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL must be a PostgreSQL connection string (postgres://user:password@host:5432/database); unset, the server uses SQLite in DATA_DIR');
  }
  return raw;
}

// A DNS name (or IPv4 address) of letters, digits and inner hyphens, or a bracketed IPv6 address;
// then an optional port. Nothing else: no scheme, path, user or wildcard.
const HOST_ENTRY = /^(?:((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)|\[([0-9a-f:.]+)\])(?::(\d{1,5}))?$/i;

/** `parley.example.org, 10.0.0.5:3000, [::1]:3000` → entries; empty or unset → null (the default). */
export function parseAllowedHosts(raw: string | undefined): AllowedHost[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const hosts: AllowedHost[] = [];
  for (const entry of raw.split(',')) {
    const trimmed = entry.trim();
    if (!trimmed) continue;
    const match = HOST_ENTRY.exec(trimmed);
    const port = match?.[3] === undefined ? null : Number(match[3]);
    const ipv6 = match?.[2];
    if (!match || (ipv6 !== undefined && !isIPv6(ipv6)) || (port !== null && (port < 1 || port > 65535))) {
      throw new ConfigError(
        `ALLOWED_HOSTS is a comma-separated list of host or host:port (e.g. "parley.example.org,10.0.0.5:3000,[::1]:3000"), without scheme or path; "${trimmed}" is not one`,
      );
    }
    hosts.push({ name: (match[1] ?? `[${ipv6}]`).toLowerCase(), port });
  }
  return hosts;
}

const S3_NAMES = ['S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE', 'S3_PRESIGNED_REDIRECT'];
// S3's rules for new buckets (the strictest of the stores it speaks for): 3-63 characters, lower case.
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION_NAME = /^[a-z0-9-]{1,64}$/;

/** S3_*: every problem with them at once (ConfigError), or null when S3_BUCKET is not set. */
export function readS3Config(env: Env): S3Config | null {
  const problems: string[] = [];
  const attempt = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return fallback;
    }
  };
  const bucket = env.S3_BUCKET;
  if (!bucket) {
    const stray = S3_NAMES.filter((name) => env[name]);
    if (stray.length) {
      throw new ConfigError(`${stray.join(', ')} ${stray.length === 1 ? 'is' : 'are'} set but S3_BUCKET is not: set S3_BUCKET to keep file bytes in an object store`);
    }
    return null;
  }
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) {
    problems.push(`S3_BUCKET must be 3-63 lower-case letters, digits, dots or hyphens, starting and ending with a letter or digit, got "${bucket}"`);
  }
  const region = env.S3_REGION || null;
  if (region !== null && !REGION_NAME.test(region)) {
    problems.push(`S3_REGION must be a region name such as "us-east-1" or "auto", got "${region}"`);
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID || null;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || null;
  if (accessKeyId && !secretAccessKey) problems.push('S3_ACCESS_KEY_ID is set but S3_SECRET_ACCESS_KEY is not: set both, or neither to use the SDK\'s usual credential sources');
  if (secretAccessKey && !accessKeyId) problems.push('S3_SECRET_ACCESS_KEY is set but S3_ACCESS_KEY_ID is not: set both, or neither to use the SDK\'s usual credential sources');
  const endpoint = attempt(() => baseUrlFrom('S3_ENDPOINT', env.S3_ENDPOINT || undefined), null);
  const forcePathStyle = attempt(() => flagFrom('S3_FORCE_PATH_STYLE', env.S3_FORCE_PATH_STYLE || undefined), false);
  const presignedRedirect = attempt(() => flagFrom('S3_PRESIGNED_REDIRECT', env.S3_PRESIGNED_REDIRECT || undefined), false);
  if (problems.length) throw new ConfigError(problems);
  return {
    bucket,
    endpoint,
    // S3-compatible stores answer to any region name in the signature; us-east-1 is what they expect by default.
    region: region ?? (endpoint ? 'us-east-1' : null),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
    forcePathStyle,
    presignedRedirect,
  };
}

/** `alice:tokenA,bob:tokenB` → Map(tokenA → alice, tokenB → bob). */
export function parseStaticTokens(raw: string | undefined): Map<string, string> {
  const tokens = new Map<string, string>();
  if (!raw) return tokens;
  for (const entry of raw.split(',')) {
    const trimmed = entry.trim();
    if (!trimmed) continue;
    const colon = trimmed.indexOf(':');
    const user = trimmed.slice(0, colon).trim();
    const token = trimmed.slice(colon + 1).trim();
    if (colon < 1 || !token || /\s/.test(token)) {
      throw new ConfigError(`PARLEY_TOKENS entries look like user:token, got "${trimmed}"`);
    }
    tokens.set(token, user);
  }
  return tokens;
}

/**
 * PARLEY_EXTENSIONS: unset or empty → all; `none` → none; else a comma list of EXTENSIONS.
 * The older PARLEY_DISABLE_IDEMPOTENCY=1 still works and means "all but idempotency".
 */
export function parseExtensions(env: Env): ReadonlySet<Extension> {
  const raw = (env.PARLEY_EXTENSIONS ?? '').trim();
  const enabled = new Set<Extension>();
  if (raw === '') EXTENSIONS.forEach((name) => enabled.add(name));
  else if (raw !== 'none') {
    for (const entry of raw.split(',')) {
      const name = entry.trim();
      const extension = EXTENSIONS.find((known) => known === name);
      if (!extension) throw new ConfigError(`PARLEY_EXTENSIONS is "none" or a comma list of ${EXTENSIONS.join(', ')}; got "${name}"`);
      enabled.add(extension);
    }
  }
  if (env.PARLEY_DISABLE_IDEMPOTENCY === '1') enabled.delete('idempotency');
  return enabled;
}

const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 3_600_000;

/** HEADERS_TIMEOUT_MS against REQUEST_TIMEOUT_MS, when both are valid on their own (else they have their messages). */
function checkTimeouts(env: Env): void {
  const valid = (name: string, fallback: number) => {
    try {
      return integerFrom(name, env[name] || undefined, fallback, 1);
    } catch {
      return null;
    }
  };
  const headers = valid('HEADERS_TIMEOUT_MS', DEFAULT_HEADERS_TIMEOUT_MS);
  const request = valid('REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS);
  if (headers !== null && request !== null && headers > request) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${headers}) must not exceed REQUEST_TIMEOUT_MS (${request})`);
  }
}

/**
 * The environment, variable by variable. Each entry turns its raw value into the setting or adds
 * one message naming the variable; `readConfig` reports all of them together.
 */
const EnvSchema = z
  .object({
    PORT: integer('PORT', 3000, 0, 65535),
    HOSTNAME: variable,
    DATA_DIR: variable,
    PARLEY_TOKENS: parsedBy(parseStaticTokens),
    ASSET_URL: baseUrl('ASSET_URL'),
    ALLOWED_HOSTS: parsedBy(parseAllowedHosts),
    MAX_UPLOAD_BYTES: integer('MAX_UPLOAD_BYTES', 100 * MiB, 1),
    UPSTREAM_BASE_URL: baseUrl('UPSTREAM_BASE_URL'),
    UPSTREAM_TOKEN: variable,
    UPSTREAM_CONNECT_TIMEOUT_MS: integer('UPSTREAM_CONNECT_TIMEOUT_MS', 5000, 1),
    UPSTREAM_IDLE_TIMEOUT_MS: integer('UPSTREAM_IDLE_TIMEOUT_MS', 30000, 1),
    DATABASE_URL: parsedBy(databaseUrlFrom),
    EVENTS_RETENTION_DAYS: integer('EVENTS_RETENTION_DAYS', 30, 1, 36_500),
    // The contract promises a heartbeat at least every 30 s.
    EVENTS_HEARTBEAT_MS: integer('EVENTS_HEARTBEAT_MS', 15_000, 10, 30_000),
    // Live streams, per instance. The contract: a revoked token's stream ends within 10 s.
    STREAM_TOKEN_RECHECK_MS: integer('STREAM_TOKEN_RECHECK_MS', 10_000, 10, 10_000),
    MAX_STREAMS_PER_USER: integer('MAX_STREAMS_PER_USER', 10, 1),
    MAX_STREAMS: integer('MAX_STREAMS', 2000, 1),
    IDEMPOTENCY_WAIT_MS: integer('IDEMPOTENCY_WAIT_MS', 5000, 1),
    HEADERS_TIMEOUT_MS: integer('HEADERS_TIMEOUT_MS', DEFAULT_HEADERS_TIMEOUT_MS, 1),
    // Two minutes without a byte: longer than a phone's network handover, short enough that stalled
    // uploads do not pile up sockets and temporary files.
    BODY_IDLE_TIMEOUT_MS: integer('BODY_IDLE_TIMEOUT_MS', 120_000, 1),
    // An hour: 100 MiB from a phone at 256 kbit/s takes about 55 minutes.
    REQUEST_TIMEOUT_MS: integer('REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 1),
    // Below the 30 s most orchestrators (Kubernetes, systemd's default 90 s) wait before SIGKILL.
    SHUTDOWN_TIMEOUT_MS: integer('SHUTDOWN_TIMEOUT_MS', 25_000, 0),
    // Rate limits (README, Configuration). Per token: 100 requests a second sustained, and a
    // reserve of 2,000 beyond that refilled every minute, spent as fast as it comes: an initial sync
    // of 10,000 conversations (~2,200 requests at ~220/s against a server without the change feed)
    // or a replay of 1,100 queued changes (~300/s at best) goes through at full speed; a flood
    // settles at 100/s. A peak rate or a write cap would bound a flood's first seconds better, but
    // by default they slowed exactly those bursts (bench: initial-sync refused, replay 15×): both
    // are off unless set. Without a valid token, per client address: 10/s, reserve 100.
    RATE_LIMIT_PER_SECOND: integer('RATE_LIMIT_PER_SECOND', 100, 0),
    RATE_LIMIT_BURST: integer('RATE_LIMIT_BURST', 2000, 0),
    RATE_LIMIT_BURST_SECONDS: integer('RATE_LIMIT_BURST_SECONDS', 60, 1, 86_400),
    RATE_LIMIT_PEAK_PER_SECOND: integer('RATE_LIMIT_PEAK_PER_SECOND', 0, 0),
    RATE_LIMIT_WRITES_PER_SECOND: integer('RATE_LIMIT_WRITES_PER_SECOND', 0, 0),
    RATE_LIMIT_ANONYMOUS_PER_SECOND: integer('RATE_LIMIT_ANONYMOUS_PER_SECOND', 10, 0),
    RATE_LIMIT_ANONYMOUS_BURST: integer('RATE_LIMIT_ANONYMOUS_BURST', 100, 0),
    // Pairing codes are 8 characters of 30 (~39 bits) and live 2 minutes: 10 tries a minute per
    // address (shared by all instances on one PostgreSQL database) leaves a guess no real chance.
    RATE_LIMIT_PAIRING_PER_MINUTE: integer('RATE_LIMIT_PAIRING_PER_MINUTE', 10, 0),
    // A sign-in takes three of these steps; 60 a minute lets 20 people behind one address (a
    // ward's NAT, a reverse proxy that hides addresses) sign in within a minute, and bounds how
    // hard one address can make the provider and the audit trail work.
    RATE_LIMIT_SIGN_IN_PER_MINUTE: integer('RATE_LIMIT_SIGN_IN_PER_MINUTE', 60, 0),
    // Device tokens (pairing, sign-in) unused this long expire; the contract: 30 days by default.
    TOKEN_TTL_DAYS: integer('TOKEN_TTL_DAYS', 30, 1, 3650),
    // A fair share of the process per user (lib/api/http/fair-share.ts): the app sends at most 4
    // requests at once, so it never waits; a flood waits its turn behind others' requests.
    MAX_REQUESTS_IN_FLIGHT_PER_USER: integer('MAX_REQUESTS_IN_FLIGHT_PER_USER', 4, 0),
    MAX_REQUESTS_QUEUED_PER_USER: integer('MAX_REQUESTS_QUEUED_PER_USER', 1000, 0),
    // Resumable uploads: a day, as the contract says; at most a year.
    UPLOAD_EXPIRY_HOURS: integer('UPLOAD_EXPIRY_HOURS', 24, 1, 8760),
    // The app uploads its queue one file at a time, and a finished upload does not count: 100 open
    // ones leaves room for many abandoned (each counts until it expires) while bounding what one
    // user can make the server hold (100 × MAX_UPLOAD_BYTES at most).
    MAX_OPEN_UPLOADS_PER_USER: integer('MAX_OPEN_UPLOADS_PER_USER', DEFAULT_UPLOAD_SETTINGS.maxOpenPerUser, 1),
    // Each chunk is a blob (a file and its fsyncs, or an object). The app's PATCHes are 4 MiB (25 for
    // 100 MiB) and tus-js-client sends the rest in one by default, so 1000 leaves room for ~975
    // interrupted PATCHes of one upload; a client of 1-byte PATCHes is stopped at 1000 files.
    MAX_UPLOAD_CHUNKS: integer('MAX_UPLOAD_CHUNKS', DEFAULT_UPLOAD_SETTINGS.maxChunks, 1, 1_000_000),
    // Patient data on a device (README, "Patient data on the device"): lock after 5 minutes without
    // input (HIPAA automatic logoff), erase a device not seen for 14 days, and after 10 wrong PINs.
    LOCK_AFTER_MINUTES: integer('LOCK_AFTER_MINUTES', 5, 0, 24 * 60),
    MAX_OFFLINE_DAYS: integer('MAX_OFFLINE_DAYS', 14, 0, 3650),
    WRONG_UNLOCKS_BEFORE_WIPE: integer('WRONG_UNLOCKS_BEFORE_WIPE', 10, 0, 1000),
    // A year by default; at most a hundred.
    AUDIT_RETENTION_DAYS: integer('AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    // Only `npm run bench` turns it off (to measure what auditing costs).
    AUDIT: parsedBy((raw) => {
      if (raw === undefined || raw === 'on') return true;
      if (raw === 'off') return false;
      throw new ConfigError(`AUDIT is "on" (the default) or "off" (only for the bench); got "${raw}"`);
    }),
  });

/**
 * The configuration, from the environment (the one place it is read). Every problem is found
 * before anything starts: a ConfigError lists them all, one message each.
 */
export function readConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) problems.push(...parsed.error.issues.map((issue) => issue.message));
  // Variables read together (S3_*, PARLEY_EXTENSIONS with the older switch) have readers of their own.
  const extra = <T>(read: () => T): T | null => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return null;
    }
  };
  const extensions = extra(() => parseExtensions(env));
  const oidc = extra(() => readOidcConfig(env));
  const s3 = extra(() => readS3Config(env));
  extra(() => checkTimeouts(env));
  if (problems.length || !parsed.success || !extensions) throw new ConfigError(problems);
  const v = parsed.data;
  return {
    port: v.PORT,
    hostname: v.HOSTNAME ?? '0.0.0.0',
    dataDir: path.resolve(/*turbopackIgnore: true*/ v.DATA_DIR ?? './data'),
    staticTokens: v.PARLEY_TOKENS,
    assetUrl: v.ASSET_URL,
    allowedHosts: v.ALLOWED_HOSTS,
    maxUploadBytes: v.MAX_UPLOAD_BYTES,
    upstreamBaseUrl: v.UPSTREAM_BASE_URL,
    upstreamToken: v.UPSTREAM_TOKEN ?? null,
    upstreamConnectTimeoutMs: v.UPSTREAM_CONNECT_TIMEOUT_MS,
    upstreamIdleTimeoutMs: v.UPSTREAM_IDLE_TIMEOUT_MS,
    databaseUrl: v.DATABASE_URL,
    extensions,
    eventsRetentionSeconds: v.EVENTS_RETENTION_DAYS * 24 * 3600,
    eventsHeartbeatMs: v.EVENTS_HEARTBEAT_MS,
    streams: { tokenRecheckMs: v.STREAM_TOKEN_RECHECK_MS, maxPerUser: v.MAX_STREAMS_PER_USER, maxTotal: v.MAX_STREAMS },
    idempotencyWaitMs: v.IDEMPOTENCY_WAIT_MS,
    headersTimeoutMs: v.HEADERS_TIMEOUT_MS,
    bodyIdleTimeoutMs: v.BODY_IDLE_TIMEOUT_MS,
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    devicePolicy: {
      lockAfterSeconds: v.LOCK_AFTER_MINUTES * 60,
      maxOfflineSeconds: v.MAX_OFFLINE_DAYS * 24 * 3600,
      wrongUnlocksBeforeWipe: v.WRONG_UNLOCKS_BEFORE_WIPE,
    },
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    rateLimits: {
      token: { perSecond: v.RATE_LIMIT_PER_SECOND, burst: v.RATE_LIMIT_BURST, burstSeconds: v.RATE_LIMIT_BURST_SECONDS, peakPerSecond: v.RATE_LIMIT_PEAK_PER_SECOND },
      writesPerSecond: v.RATE_LIMIT_PER_SECOND === 0 ? 0 : v.RATE_LIMIT_WRITES_PER_SECOND,
      anonymous: { perSecond: v.RATE_LIMIT_ANONYMOUS_PER_SECOND, burst: v.RATE_LIMIT_ANONYMOUS_BURST, burstSeconds: v.RATE_LIMIT_BURST_SECONDS, peakPerSecond: 0 },
      pairingPerMinute: v.RATE_LIMIT_PAIRING_PER_MINUTE,
      signInPerMinute: v.RATE_LIMIT_SIGN_IN_PER_MINUTE,
    },
    fairShare: { perUser: v.MAX_REQUESTS_IN_FLIGHT_PER_USER, queuedPerUser: v.MAX_REQUESTS_QUEUED_PER_USER },
    s3,
    uploads: { expirySeconds: v.UPLOAD_EXPIRY_HOURS * 3600, maxOpenPerUser: v.MAX_OPEN_UPLOADS_PER_USER, maxChunks: v.MAX_UPLOAD_CHUNKS },
    tokenTtlSeconds: v.TOKEN_TTL_DAYS * 24 * 3600,
    audit: { enabled: v.AUDIT, retentionDays: v.AUDIT_RETENTION_DAYS },
    oidc,
  };
}

/**
 * OIDC_*: all or nothing — an issuer without a client id (or the other way round) is an error.
 * The issuer must be https, except on a loopback address (a provider run by the tests).
 */
function readOidcConfig(env: Env): OidcConfig | null {
  const value = (name: string) => (env[name] === '' ? undefined : env[name]);
  const issuer = value('OIDC_ISSUER_URL');
  const clientId = value('OIDC_CLIENT_ID');
  const others = ['OIDC_CLIENT_SECRET', 'OIDC_USER_CLAIM', 'OIDC_DISPLAY_NAME'].filter((name) => value(name) !== undefined);
  if (issuer === undefined && clientId === undefined) {
    if (others.length) throw new ConfigError(`${others.join(', ')} set without OIDC_ISSUER_URL and OIDC_CLIENT_ID: set both to offer single sign-on`);
    return null;
  }
  const problems: string[] = [];
  if (issuer === undefined) problems.push('OIDC_CLIENT_ID is set without OIDC_ISSUER_URL: set both to offer single sign-on');
  if (clientId === undefined) problems.push('OIDC_ISSUER_URL is set without OIDC_CLIENT_ID: set both to offer single sign-on');
  let issuerUrl = '';
  if (issuer !== undefined) {
    try {
      const url = new URL(issuer);
      const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
        problems.push(`OIDC_ISSUER_URL must be an https URL (http only on localhost), got "${issuer}"`);
      }
      issuerUrl = url.href;
    } catch {
      problems.push(`OIDC_ISSUER_URL must be an absolute https URL, got "${issuer}"`);
    }
  }
  const userClaim = value('OIDC_USER_CLAIM') ?? 'email';
  if (!/^[A-Za-z0-9_.:-]{1,100}$/.test(userClaim)) problems.push(`OIDC_USER_CLAIM must be a claim name (letters, digits, _ . : -), got "${userClaim}"`);
  const displayName = value('OIDC_DISPLAY_NAME') ?? 'single sign-on';
  if (displayName.length > 60 || /[\u0000-\u001f\u007f]/.test(displayName)) problems.push('OIDC_DISPLAY_NAME must be at most 60 printable characters');
  if (problems.length) throw new ConfigError(problems);
  return { issuerUrl, clientId: clientId!, clientSecret: value('OIDC_CLIENT_SECRET') ?? null, userClaim, displayName };
}
