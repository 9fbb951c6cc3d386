// The one place that chooses where file bytes live: an S3-compatible object store when S3_BUCKET
// is configured, local disk under DATA_DIR otherwise.
import path from 'node:path';
import type { Config } from '../../config';
import type { BlobStore } from './blob-store';
import { DiskBlobStore } from './disk-blob-store';
import type { PresignedHeaders } from './s3-blob-store';

export interface OpenedBlobStore {
  store: BlobStore;
  /** Where the bytes go, for the start-up log (never credentials). */
  description: string;
  /** When the operator prefers redirects: a short-lived URL at the store for a blob; else null. */
  presignedUrl: ((key: string, headers: PresignedHeaders) => Promise<string>) | null;
  /**
   * The origin those URLs have (what the app's Content-Security-Policy must let it read from), or
   * null without redirects. Taken from a URL the SDK signs at start-up, so it is exactly the one
   * redirects go to, whatever addressing the store uses (path-style, a bucket subdomain, AWS's
   * regional hosts).
   */
  redirectOrigin: string | null;
  close(): void;
}

export async function openBlobStore(config: Pick<Config, 'dataDir' | 's3' | 'maxUploadBytes'>): Promise<OpenedBlobStore> {
  const s3 = config.s3;
  if (!s3) {
    return { store: new DiskBlobStore(config.dataDir), description: `local disk (${path.join(config.dataDir, 'files')})`, presignedUrl: null, redirectOrigin: null, close: () => {} };
  }
  // Loaded only when configured: the SDK is large, and a disk-only deployment never needs it.
  const { S3BlobStore } = await import('./s3-blob-store');
  const store = S3BlobStore.fromConfig(s3, { maxUploadBytes: config.maxUploadBytes });
  try {
    await store.check();
  } catch (error) {
    store.close();
    throw error;
  }
  let redirectOrigin: string | null = null;
  if (s3.presignedRedirect) {
    // Signing is local: no request to the store.
    const probe = await store.presignedUrl('origin-probe', { contentType: 'application/octet-stream', contentDisposition: 'attachment', cacheControl: 'no-store' });
    redirectOrigin = new URL(probe).origin;
  }
  const where = s3.endpoint ? `at ${s3.endpoint}${s3.forcePathStyle ? ' (path-style)' : ''}` : `on AWS S3${s3.region ? ` (${s3.region})` : ''}`;
  return {
    store,
    description: `object store: bucket "${s3.bucket}" ${where}${s3.presignedRedirect ? ', /files/… redirects to presigned URLs' : ''}`,
    presignedUrl: s3.presignedRedirect ? (key, headers) => store.presignedUrl(key, headers) : null,
    redirectOrigin,
    close: () => store.close(),
  };
}
