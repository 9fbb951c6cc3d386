// Configuration is checked at start, all of it: one clear message per problem, every problem
// listed (not only the first), before the server listens or opens its data — and a secret in a
// bad value is never repeated.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../lib/config';
import { tempDataDir } from '../helpers/server';
import { spawnServer } from '../helpers/server-process';

const BAD = {
  PORT: '70000',
  MAX_UPLOAD_BYTES: 'lots',
  ASSET_URL: 'files.example.org',
  DATABASE_URL: 'mysql://parley:hunter2-secret@db/parley',
  EVENTS_HEARTBEAT_MS: '60000',
  SHUTDOWN_TIMEOUT_MS: '-1',
  HEADERS_TIMEOUT_MS: '9000',
  REQUEST_TIMEOUT_MS: '5000',
  S3_BUCKET: 'Bad_Bucket',
  S3_ACCESS_KEY_ID: 'key-without-secret',
  PARLEY_EXTENSIONS: 'me,teleport',
};

const EXPECTED = [
  'PORT must be an integer from 0 to 65535, got "70000"',
  'MAX_UPLOAD_BYTES must be an integer',
  'ASSET_URL must be an absolute http(s) URL, got "files.example.org"',
  'DATABASE_URL must be a PostgreSQL connection string',
  'EVENTS_HEARTBEAT_MS must be an integer from 10 to 30000, got "60000"',
  'SHUTDOWN_TIMEOUT_MS must be an integer from 0',
  'HEADERS_TIMEOUT_MS (9000) must not exceed REQUEST_TIMEOUT_MS (5000)',
  'S3_BUCKET must be 3-63 lower-case letters',
  'S3_ACCESS_KEY_ID is set but S3_SECRET_ACCESS_KEY is not',
  'PARLEY_EXTENSIONS is "none" or a comma list',
];

describe('configuration', () => {
  it('every problem, one message each, none repeating a secret', () => {
    let error: unknown;
    try {
      readConfig(BAD);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(EXPECTED.length);
    for (const expected of EXPECTED) expect(problems.filter((p) => p.includes(expected)), expected).toHaveLength(1);
    expect(String((error as Error).message)).toContain(`${EXPECTED.length} problems with the configuration`);
    expect(String((error as Error).message)).not.toContain('hunter2-secret');
  });

  it('the defaults, and SHUTDOWN_TIMEOUT_MS', () => {
    const config = readConfig({});
    expect(config).toMatchObject({ port: 3000, hostname: '0.0.0.0', shutdownTimeoutMs: 25_000, databaseUrl: null, s3: null });
    expect(readConfig({ SHUTDOWN_TIMEOUT_MS: '5000', DATABASE_URL: 'postgresql://db/parley' })).toMatchObject({
      shutdownTimeoutMs: 5000,
      databaseUrl: 'postgresql://db/parley',
    });
  });

  it('the server refuses to start with all of them listed, before it listens or opens DATA_DIR', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const dataDir = path.join(tempDataDir(), 'never-created');
    // A valid, free PORT here: the listed problems are the others.
    const server = spawnServer({ ...BAD, PORT: String(port), DATA_DIR: dataDir });
    expect(await server.exited).toBe(1);
    const output = server.output();
    expect(output).toContain(`cannot start: ${EXPECTED.length - 1} problems with the configuration`);
    for (const expected of EXPECTED.slice(1)) expect(output).toContain(`  - ${expected}`);
    expect(output).not.toContain('hunter2-secret');
    expect(output).not.toContain('serving');
    expect(fs.existsSync(dataDir)).toBe(false);
    fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
  });
});
