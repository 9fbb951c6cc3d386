// Several instances of the service on ONE PostgreSQL database and ONE object store (s3rver), as a
// scaled deployment runs them. Each instance is a service of its own (its own pool, auth cache,
// live-stream hub, blob store client) behind its own HTTP server and port, in this test process:
// what they share is only what real instances share — the database and the bucket. Real processes
// (tests/ops/shutdown.test.ts) would add a start-up of seconds each and nothing these checks need.
import { createTestDatabase } from './postgres';
import { startS3Server, type S3TestServer } from './s3';
import { startTestServer, tempDataDir, type TestServer, type TestServerOptions } from './server';

export interface Deployment {
  databaseUrl: string;
  s3: S3TestServer;
  /** DATABASE_URL, S3_* and the tokens: what every instance is started with. */
  env: Record<string, string>;
  instances: TestServer[];
  /** One more instance on the same database and store. */
  add(options?: Omit<TestServerOptions, 'env' | 'dataDir'> & { env?: Record<string, string> }): Promise<TestServer>;
  stop(): Promise<void>;
}

export async function startDeployment(count: number, options: { env?: Record<string, string> } = {}): Promise<Deployment> {
  const database = await createTestDatabase();
  const s3 = await startS3Server();
  const { env: s3Env } = await s3.newBucket();
  const env = { DATABASE_URL: database.url, ...s3Env, ...options.env };
  const instances: TestServer[] = [];
  const dataDirs: string[] = [];
  const add: Deployment['add'] = async (extra = {}) => {
    // Each instance has a DATA_DIR of its own (nothing of theirs is in it with PostgreSQL and S3).
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    const instance = await startTestServer({ ...extra, dataDir, env: { ...env, ...extra.env } });
    instances.push(instance);
    return instance;
  };
  try {
    // One after another: the first creates the schema.
    for (let i = 0; i < count; i++) await add();
  } catch (error) {
    await Promise.allSettled(instances.map((i) => i.stop()));
    await s3.stop();
    await database.drop();
    throw error;
  }
  return {
    databaseUrl: database.url,
    s3,
    env,
    instances,
    add,
    async stop() {
      await Promise.allSettled(instances.map((i) => i.stop()));
      await s3.stop();
      await database.drop();
      const fs = await import('node:fs');
      for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
