// The server an API test talks to. By default the embedded server; with PARLEY_TEST_VIA_PROXY=1
// the same tests run through a proxy-mode instance whose upstream is an embedded server.
import { startTestServer, type TestServer } from './server';

export async function startTarget(options: { env?: Record<string, string> } = {}): Promise<TestServer> {
  if (process.env.PARLEY_TEST_VIA_PROXY === '1') {
    const { startProxiedServer } = await import('./proxy-target');
    return startProxiedServer(options);
  }
  return startTestServer(options);
}
