// PARLEY_TEST_TWO_INSTANCES=1: the whole API suite against two instances of the service on one
// PostgreSQL database and one object store (s3rver), requests alternating between them one by one.
//
// How: each instance is a service of its own (ApiService.open: its own pool, auth cache,
// live-stream hub, idempotency waits, deletion passes, store client), and the one HTTP server the
// tests talk to hands request 1 to instance A, request 2 to B, and so on — a load balancer without
// stickiness, in the test process. The HTTP server is `npm start`'s (createHttpServer, same
// timeouts); one listener keeps the request's Host and port what the tests expect. What the
// instances share is what real ones share: the database and the bucket.
import type http from 'node:http';
import { readConfig, type Config } from '../../lib/config';
import { createHttpServer, listen } from '../../lib/api/http/node-server';
import type { ServerLog } from '../../lib/api/http/log';
import type { ApiService } from '../../lib/api/service';
import type { BlobStore } from '../../lib/api/storage/blob-store';
import { createTestDatabase } from './postgres';
import { startS3Server } from './s3';
import { startTestServer, tempDataDir, TEST_TOKENS, type TestServer, type TestServerOptions } from './server';

/**
 * Instance A's service for the tests' white-box looks (the database, the store and the deletion
 * queue are shared anyway), except `hub`: its open streams are those of both instances.
 */
function combinedService(a: () => ApiService, b: () => ApiService): ApiService {
  return new Proxy({} as ApiService, {
    get(_, name) {
      if (name === 'hub') {
        return {
          get size() {
            return a().hub.size + b().hub.size;
          },
        };
      }
      const value = Reflect.get(a(), name);
      return typeof value === 'function' ? value.bind(a()) : value;
    },
  });
}

export interface TwoInstances extends TestServer {
  /** The two instances behind the alternating front. */
  instances: [TestServer, TestServer];
}

export async function startTwoInstances(options: Omit<TestServerOptions, 'dataDir'> & { edgeEnv?: Record<string, string> } = {}): Promise<TwoInstances> {
  const { edgeEnv, store: makeStore, ...rest } = options;
  const database = await createTestDatabase();
  const s3 = await startS3Server();
  const { env: s3Env } = await s3.newBucket();
  const env = { ...options.env, ...edgeEnv, DATABASE_URL: database.url, ...s3Env };
  // A store a test brings (failure injection) is ONE store both instances use, as a shared disk would be.
  let shared: BlobStore | undefined;
  const dataDir = tempDataDir();
  const store = makeStore && ((dir: string, config: Config) => (shared ??= makeStore(dir, config)));
  const instances: TestServer[] = [];
  let front: http.Server | undefined;
  try {
    // One after the other: the first creates the schema. Both get the same DATA_DIR (nothing of
    // theirs is in it with PostgreSQL and S3, unless a test brings a disk store: then it is shared).
    instances.push(await startTestServer({ ...rest, store, dataDir, env }));
    instances.push(await startTestServer({ ...rest, store, dataDir, env }));
    const [a, b] = instances as [TestServer, TestServer];
    const config = readConfig({ DATA_DIR: dataDir, ...env });
    let turn = 0;
    const log = options.log && 'request' in options.log ? { log: options.log as ServerLog } : {};
    front = createHttpServer((request) => (turn++ % 2 === 0 ? a : b).service.dispatch(request), undefined, config, log);
    const port = await listen(front, 0, '127.0.0.1');
    const server = front;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      port,
      dataDir,
      databaseUrl: database.url,
      tokens: TEST_TOKENS,
      service: combinedService(() => a.service, () => b.service),
      instances: [a, b],
      blobs: a.blobs,
      restart: async () => {
        await a.restart();
        await b.restart();
      },
      stop: async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await Promise.allSettled(instances.map((i) => i.stop()));
        await s3.stop();
        await database.drop();
      },
    };
  } catch (error) {
    front?.close();
    await Promise.allSettled(instances.map((i) => i.stop()));
    await s3.stop();
    await database.drop();
    throw error;
  }
}
