// The server an API test talks to. By default the embedded server on SQLite. With
// PARLEY_TEST_POSTGRES=1, the embedded server on a fresh PostgreSQL database. With
// PARLEY_TEST_VIA_PROXY=1, the same tests run through a proxy-mode instance whose upstream is an
// embedded server.
import { startTestServer, type TestServer } from './server';

export async function startTarget(options: { env?: Record<string, string> } = {}): Promise<TestServer> {
  if (process.env.PARLEY_TEST_VIA_PROXY === '1') {
    const { startProxiedServer } = await import('./proxy-target');
    return startProxiedServer(options);
  }
  if (process.env.PARLEY_TEST_POSTGRES === '1') {
    const { createTestDatabase } = await import('./postgres');
    const database = await createTestDatabase();
    const server = await startTestServer({ env: { ...options.env, DATABASE_URL: database.url } });
    const stop = server.stop;
    server.stop = async () => {
      await stop();
      await database.drop();
    };
    return server;
  }
  return startTestServer(options);
}
