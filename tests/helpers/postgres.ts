// A fresh PostgreSQL database per test server, dropped when it stops.
import pg from 'pg';
import { newId } from '../../lib/api/ids';

export const POSTGRES_ADMIN_URL = process.env.PARLEY_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function postgresReachable(): Promise<string | null> {
  try {
    await admin((c) => c.query('select 1'));
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `parley_test_${newId(10).toLowerCase()}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}
