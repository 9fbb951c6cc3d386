// The one place where configuration is read from the environment.
import path from 'node:path';

export const MiB = 1024 * 1024;

export interface Config {
  port: number;
  hostname: string;
  /** Where SQLite and file bytes live. */
  dataDir: string;
  /** Static tokens seeded from PARLEY_TOKENS: token → user id. */
  staticTokens: Map<string, string>;
  /** Origin used to build file_url; null means "the origin of the request". */
  assetUrl: string | null;
  maxUploadBytes: number;
  /** Proxy mode: when set, /v1 is forwarded to this service instead of served locally. */
  upstreamBaseUrl: string | null;
  upstreamToken: string | null;
  upstreamConnectTimeoutMs: number;
  upstreamIdleTimeoutMs: number;
  /** PostgreSQL connection string; absent means SQLite in dataDir. */
  databaseUrl: string | null;
  /** Honour Idempotency-Key (on unless PARLEY_DISABLE_IDEMPOTENCY=1, which tests use to play a server without it). */
  idempotency: boolean;
}

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

function integer(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return Number(raw);
}

function baseUrl(env: Env, name: string): string | null {
  const raw = env[name];
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

export function readConfig(env: Env = process.env): Config {
  return {
    port: integer(env, 'PORT', 3000, 0),
    hostname: env.HOSTNAME || '0.0.0.0',
    dataDir: path.resolve(/*turbopackIgnore: true*/ env.DATA_DIR || './data'),
    staticTokens: parseStaticTokens(env.PARLEY_TOKENS),
    assetUrl: baseUrl(env, 'ASSET_URL'),
    maxUploadBytes: integer(env, 'MAX_UPLOAD_BYTES', 100 * MiB, 1),
    upstreamBaseUrl: baseUrl(env, 'UPSTREAM_BASE_URL'),
    upstreamToken: env.UPSTREAM_TOKEN || null,
    upstreamConnectTimeoutMs: integer(env, 'UPSTREAM_CONNECT_TIMEOUT_MS', 5000, 1),
    upstreamIdleTimeoutMs: integer(env, 'UPSTREAM_IDLE_TIMEOUT_MS', 30000, 1),
    databaseUrl: env.DATABASE_URL || null,
    idempotency: env.PARLEY_DISABLE_IDEMPOTENCY !== '1',
  };
}
