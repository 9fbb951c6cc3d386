// The server an API test talks to. By default the embedded server on SQLite. With
// PARLEY_TEST_POSTGRES=1, the embedded server on a fresh PostgreSQL database. With
// PARLEY_TEST_VIA_PROXY=1, the same tests run through a proxy-mode instance whose upstream is an
// embedded server. With PARLEY_TEST_S3=1, the embedded server on SQLite keeps file bytes in an
// S3-compatible object store (s3rver in its own process, a fresh bucket) instead of on disk. With
// PARLEY_TEST_TWO_INSTANCES=1, two instances on one PostgreSQL database and one bucket, requests
// alternating between them (two-instances.ts).
import { startTestServer, type TestServer, type TestServerOptions } from './server';

export interface TargetOptions extends Omit<TestServerOptions, 'dataDir'> {
  /**
   * Settings of the server the client talks to, where they differ by project (ASSET_URL,
   * ALLOWED_HOSTS): the embedded server itself, or the proxy in front of it.
   */
  edgeEnv?: Record<string, string>;
}

export async function startTarget(options: TargetOptions = {}): Promise<TestServer> {
  if (process.env.PARLEY_TEST_TWO_INSTANCES === '1') {
    const { startTwoInstances } = await import('./two-instances');
    return startTwoInstances(options);
  }
  if (process.env.PARLEY_TEST_S3 === '1') {
    const { startS3Server } = await import('./s3');
    const s3 = await startS3Server();
    const { env } = await s3.newBucket();
    const { edgeEnv, ...rest } = options;
    const server = await startTestServer({ ...rest, env: { ...options.env, ...edgeEnv, ...env } }).catch(async (error) => {
      await s3.stop();
      throw error;
    });
    const stop = server.stop;
    server.stop = async () => {
      await stop();
      await s3.stop();
    };
    return server;
  }
  if (process.env.PARLEY_TEST_VIA_PROXY === '1') {
    const { startProxiedServer } = await import('./proxy-target');
    return startProxiedServer(options);
  }
  const { edgeEnv, ...rest } = options;
  options = { ...rest, env: { ...options.env, ...edgeEnv } };
  if (process.env.PARLEY_TEST_POSTGRES === '1') {
    const { createTestDatabase } = await import('./postgres');
    const database = await createTestDatabase();
    const server = await startTestServer({ ...options, env: { ...options.env, DATABASE_URL: database.url } });
    const stop = server.stop;
    server.stop = async () => {
      await stop();
      await database.drop();
    };
    return server;
  }
  return startTestServer(options);
}
