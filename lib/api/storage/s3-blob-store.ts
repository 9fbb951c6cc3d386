// File bytes in an S3-compatible object store (AWS S3, MinIO, Cloudflare R2, Ceph): one object per
// blob under `files/<key>` in the bucket. An upload streams into lib-storage's `Upload`, which sends
// a single PutObject for a small file and a multipart upload (5 MiB parts, one in flight, so
// memory stays bounded) for a large one; the object exists only once that upload completes, which is
// what `finish()` waits for. Aborting stops the stream; `Upload` then aborts its multipart upload
// itself, and an object that did complete is deleted.
import { PassThrough, Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  paginateListObjectsV2,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../../config';
import { newId } from '../ids';
import { fieldOf, stringField } from '../../records';
import type { BlobStore, BlobWrite, ByteRange, StoredBlob } from './blob-store';

const PREFIX = 'files/';
const MiB = 1024 * 1024;
/** S3's smallest part (but the last) and its largest part count. */
const MIN_PART_BYTES = 5 * MiB;
const MAX_PARTS = 10_000;
/**
 * Parts sent at once per upload. With one, the next part is read only after the last one is
 * stored, so a fast client waits for each part's round trip (a phone's uplink is far slower than
 * that). Each extra part in flight costs a part's buffer and the garbage of assembling it: two
 * raised the server's peak RSS growth for a 500 MiB upload from 31-65 MiB to 48-80 MiB, past the
 * 64 MiB the disk store keeps to (bench uploads-s3).
 */
const PARTS_IN_FLIGHT = 1;
/** How long a presigned redirect target stays valid. */
export const PRESIGNED_TTL_SECONDS = 300;

export interface S3BlobStoreOptions {
  /** The largest upload the service accepts: parts grow past 5 MiB only when 10,000 of them would not hold it. */
  maxUploadBytes: number;
  /** How long one request may wait for the store's answer (60 s). */
  requestTimeoutMs?: number;
}

/** Response header overrides a presigned GET carries (S3's response-content-type and friends). */
export interface PresignedHeaders {
  contentType: string;
  contentDisposition: string;
  cacheControl: string;
}

/** The HTTP status an SDK error carries (`$metadata.httpStatusCode`), if any. */
function httpStatus(error: unknown): unknown {
  return fieldOf(fieldOf(error, '$metadata'), 'httpStatusCode');
}

/** Whether an SDK error means "not there" (a missing object or upload), which removal treats as done. */
function isMissing(error: unknown): boolean {
  const name = stringField(error, 'name');
  return name === 'NoSuchKey' || name === 'NoSuchUpload' || name === 'NotFound' || httpStatus(error) === 404;
}

export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly partSize: number;

  constructor(
    private readonly client: S3Client,
    bucket: string,
    options: S3BlobStoreOptions,
  ) {
    this.bucket = bucket;
    this.partSize = Math.max(MIN_PART_BYTES, Math.ceil(options.maxUploadBytes / MAX_PARTS));
  }

  static fromConfig(config: S3Config, options: S3BlobStoreOptions): S3BlobStore {
    const client = new S3Client({
      region: config.region ?? undefined,
      endpoint: config.endpoint ?? undefined,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials ?? undefined,
      // Checksums only where an operation requires one. The SDK's newer default (a CRC32 with
      // every PutObject and UploadPart) is not understood by every S3-compatible store, and costs
      // memory: about 25 MiB more peak RSS for a 500 MiB upload (bench uploads-s3). The bytes are
      // covered by TLS in transit, and the service keeps each file's SHA-256.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A store that does not connect, or does not answer a request (headers) in time, fails the
      // request (then retried, as the SDK does). No idle timeout on the socket: a download streams
      // at the pace of the phone reading it, and backpressure leaves the store's socket idle.
      requestHandler: { connectionTimeout: 10_000, requestTimeout: options.requestTimeoutMs ?? 60_000, throwOnRequestTimeout: true },
    });
    return new S3BlobStore(client, config.bucket, options);
  }

  private objectKey(key: string): string {
    return PREFIX + key;
  }

  /** Fails with a clear message when the bucket cannot be reached with these settings. */
  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      const status = httpStatus(error);
      const why = status === 404 ? 'it does not exist' : status === 403 ? 'access denied' : `${stringField(error, 'name') ?? 'error'}: ${stringField(error, 'message') ?? error}`;
      throw new Error(`object store: bucket "${this.bucket}" is not usable (${why})`);
    }
  }

  begin(): BlobWrite {
    const key = newId(24);
    let failure: Error | null = null;
    let completed: Promise<boolean> | null = null;
    const sink = new PassThrough({
      // Object mode on the reading side hands Upload the chunks as written, instead of copying
      // whatever is buffered into one new Buffer on every read (less garbage to collect). What
      // waits is 1 MiB on the writing side plus 16 chunks (busboy's: a socket read, ≤ 64 KiB);
      // fewer chunks cost throughput (bench uploads-s3) without saving memory that shows.
      writableHighWaterMark: MiB,
      readableObjectMode: true,
      readableHighWaterMark: 16,
      // When the store fails, Upload stops reading, which destroys the stream with a bare
      // AbortError: wait for Upload's verdict instead, so that the writer hears the store's own
      // error (full, unreachable, not answering) rather than only that the stream was cut.
      destroy(error, callback) {
        if (!completed || (error && error.name !== 'AbortError')) return callback(error);
        void completed.then((ok) => callback(ok ? error : failure));
      },
    });
    // Errors reach the writer's pipeline and Upload's reader through their own listeners; this
    // one keeps an error after both have let go from being an uncaught 'error'.
    sink.on('error', () => {});
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.objectKey(key), Body: sink, ContentType: 'application/octet-stream' },
      partSize: this.partSize,
      queueSize: PARTS_IN_FLIGHT,
    });
    // Settles only after Upload has cleaned up after a failure (sent AbortMultipartUpload).
    completed = upload.done().then(
      () => true,
      (error: unknown) => {
        failure = error instanceof Error ? error : new Error(String(error));
        return false;
      },
    );
    const settled = completed;
    return {
      key,
      sink,
      finish: async () => {
        if (!(await settled)) throw failure;
      },
      abort: async () => {
        // A stream ending in an error makes Upload stop reading and abort its multipart upload;
        // an upload that completed all the same (its last request was already out) is deleted.
        if (!sink.destroyed) sink.destroy(new Error('upload aborted'));
        if (await settled) await this.remove(key).catch(() => {});
      },
    };
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    const answer = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Range: range ? `bytes=${range.start}-${range.end}` : undefined,
      }),
    );
    // In Node the SDK answers with the response itself, a Readable.
    if (!(answer.Body instanceof Readable)) throw new Error(`object store: GET ${key} answered without a body stream`);
    return answer.Body;
  }

  async remove(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  async *list(): AsyncIterable<StoredBlob> {
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: PREFIX })) {
      for (const object of page.Contents ?? []) {
        if (!object.Key) continue;
        yield { key: object.Key.slice(PREFIX.length), modifiedAt: object.LastModified?.getTime() ?? 0 };
      }
    }
  }

  /** Aborts incomplete multipart uploads under the prefix started more than `olderThanMs` ago. */
  async removeUnfinished(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await this.client.send(
        new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: PREFIX, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
      );
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId) continue;
        if ((upload.Initiated?.getTime() ?? 0) > cutoff) continue;
        try {
          await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }));
          removed++;
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
    return removed;
  }

  /** A short-lived URL at the store for the object, answering with these headers. */
  presignedUrl(key: string, headers: PresignedHeaders): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        ResponseContentType: headers.contentType,
        ResponseContentDisposition: headers.contentDisposition,
        ResponseCacheControl: headers.cacheControl,
      }),
      { expiresIn: PRESIGNED_TTL_SECONDS },
    );
  }

  close(): void {
    this.client.destroy();
  }
}
