// What a test server's blob store holds, whichever store it is: stored blobs through the store's
// own list(), and what unfinished writes left (temporary files on disk; incomplete multipart
// uploads in a bucket). Also plants what a crash leaves behind, for the start-up sweep's tests.
import fs from 'node:fs';
import path from 'node:path';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../lib/config';
import { DiskBlobStore } from '../../lib/api/storage/disk-blob-store';
import type { BlobStore } from '../../lib/api/storage/blob-store';
import { S3BlobStore } from '../../lib/api/storage/s3-blob-store';

export interface BlobInspector {
  /** Keys of every stored blob. */
  stored(): Promise<string[]>;
  /** What unfinished writes left behind: temp file names, or incomplete uploads' object keys. */
  unfinished(): Promise<string[]>;
  /** Stores bytes under `key` directly, as a crash between storing and committing the row leaves them. */
  plantOrphan(key: string, bytes: string): Promise<void>;
  /** Leaves an unfinished write behind, as a crash mid-upload does. */
  plantUnfinished(): Promise<void>;
  close(): void;
}

async function keysOf(store: BlobStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of store.list()) keys.push(blob.key);
  return keys.sort();
}

export function blobInspector(config: Config): BlobInspector {
  const s3 = config.s3;
  if (!s3) {
    const store = new DiskBlobStore(config.dataDir);
    return {
      stored: () => keysOf(store),
      unfinished: async () => fs.readdirSync(store.tmpDir),
      plantOrphan: async (key, bytes) => {
        fs.mkdirSync(path.dirname(store.pathOf(key)), { recursive: true });
        fs.writeFileSync(store.pathOf(key), bytes);
      },
      plantUnfinished: async () => fs.writeFileSync(path.join(store.tmpDir, 'crashed.part'), 'partial'),
      close: () => {},
    };
  }
  const store = S3BlobStore.fromConfig(s3, { maxUploadBytes: config.maxUploadBytes });
  const client = new S3Client({
    endpoint: s3.endpoint ?? undefined,
    region: s3.region ?? undefined,
    forcePathStyle: s3.forcePathStyle,
    credentials: s3.credentials ?? undefined,
  });
  return {
    stored: () => keysOf(store),
    unfinished: async () => {
      // The whole bucket, not only the service's prefix: nothing may be left anywhere.
      const page = await client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket }));
      return (page.Uploads ?? []).map((u) => u.Key ?? '');
    },
    plantOrphan: async (key, bytes) => {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `files/${key}`, Body: bytes }));
    },
    plantUnfinished: async () => {
      await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: 'files/crashedUploadWithoutRow00' }));
    },
    close: () => {
      store.close();
      client.destroy();
    },
  };
}
