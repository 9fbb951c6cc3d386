// What is really stored — blobs, what unfinished writes left, the keys rows point at — whichever
// store the server under test uses (see blobs.ts), and what was logged.
import { inspect } from 'node:util';
import type { TestServer } from './server';

/** Keys of every stored blob, sorted. */
export function blobKeys(s: TestServer): Promise<string[]> {
  return s.blobs.stored();
}

/** What unfinished writes left: temporary files on disk, incomplete multipart uploads in a bucket. */
export function tempFiles(s: TestServer): Promise<string[]> {
  return s.blobs.unfinished();
}

/** Tests about the local disk itself (DATA_DIR on a tmpfs, a read-only shard): not for the object-store project. */
export const objectStoreProject = process.env.PARLEY_TEST_S3 === '1';

export async function rowKeys(s: TestServer): Promise<string[]> {
  const rows = await s.service.db.selectFrom('files').select('storage_key').execute();
  return rows.map((r) => r.storage_key).sort();
}

/** A logger that keeps what it is given, one string per call. */
export function capturingLog() {
  const errors: string[] = [];
  const text = (args: unknown[]) => args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 4 }))).join(' ');
  return {
    errors,
    log: { log: () => {}, error: (...args: unknown[]) => void errors.push(text(args)) },
  };
}
