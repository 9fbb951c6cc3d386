// Streaming multipart upload: the one file part goes straight into the blob store (hashing as it
// goes), so memory stays flat whatever the file's size. The bytes are durable under their key
// before this resolves — before any database transaction starts.
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { ApiError, invalid } from '../errors';
import type { BlobStore, BlobWrite } from '../storage/blob-store';
import type { ReceivedFile, ReceivedUpload } from '../domain/inputs';

export type { ReceivedFile, ReceivedUpload };
import { FIELD_BODY_LIMIT, fieldRecord } from './body';
import type { ApiRequest } from './exchange';
import { declaredContentType, observePartHeaders, type PartHeaders } from './part-headers';

const HEAD_BYTES = 512;
/** After the size limit is hit, the rest of the body is read and thrown away, up to this much. */
const DISCARD_LIMIT = 64 * 1024 * 1024;

export const tooLarge = (max: number) =>
  new ApiError('file_too_large', `The file exceeds the upload limit of ${max} bytes`, 'file');

export function receiveUpload(request: ApiRequest, store: BlobStore, maxBytes: number): Promise<ReceivedUpload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': request.header('content-type')! },
        // busboy reports 'limit' on reaching fileSize, so one byte past the maximum is the signal.
        limits: { fileSize: maxBytes + 1, fieldSize: FIELD_BODY_LIMIT, fields: 50, parts: 60 },
        defParamCharset: 'utf8',
      });
    } catch {
      return reject(invalid(undefined, 'Malformed multipart body: missing or bad boundary'));
    }
    // info.mimeType says text/plain for a part without Content-Type too: see part-headers.ts.
    const partHeaders = observePartHeaders(parser);
    if (!request.body) return reject(new ApiError('parameter_missing', 'file is required', 'file'));

    const fields = fieldRecord<string>();
    let file: ReceivedFile | null = null;
    let writing: Promise<void> | null = null;
    let failure: ApiError | null = null;
    let settled = false;
    const blobs: BlobWrite[] = [];
    const source = request.body;

    let fileStream: Readable | null = null;
    /** `error` is an ApiError (the request's fault) or the store's own error (the service maps it: 507, 5xx). */
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      // Stop writing; answer only once the bytes written so far are gone: a refused upload leaves
      // nothing behind. (busboy's file stream does not emit 'close' when destroyed; abort() ends
      // the sink itself.)
      fileStream?.destroy();
      void Promise.all(blobs.map((blob) => blob.abort()))
        .then(() => Promise.allSettled([writing]))
        .finally(() => reject(error));
      // Keep reading (and discarding) what the client is still sending, within a bound, so that
      // it receives our answer instead of a reset connection.
      let discarded = 0;
      source.unpipe(parser);
      source.on('data', (chunk: Buffer) => {
        discarded += chunk.length;
        if (discarded > DISCARD_LIMIT) source.destroy();
      });
      source.resume();
    };

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) failure ??= invalid(name, `${name} is too long`);
      else if (Object.hasOwn(fields, name)) failure ??= invalid(name, `${name} was given more than once`);
      else fields[name] = value;
    });

    parser.on('file', (name, stream, info) => {
      let headers: PartHeaders;
      try {
        headers = partHeaders.current();
      } catch (error) {
        stream.resume();
        return fail(error);
      }
      if (name !== 'file') {
        failure ??= new ApiError('parameter_unknown', `Unexpected file part: ${name}`, name);
        stream.resume();
        return;
      }
      if (file) {
        failure ??= invalid('file', 'Exactly one file part is allowed');
        stream.resume();
        return;
      }
      const blob = store.begin();
      blobs.push(blob);
      const received: ReceivedFile = {
        fieldName: name,
        rawFilename: info.filename,
        declaredType: declaredContentType(headers),
        blob,
        size: 0,
        sha256: '',
        head: new Uint8Array(0),
      };
      file = received;
      fileStream = stream;
      const hash = createHash('sha256');
      const headChunks: Buffer[] = [];
      let headSize = 0;
      const tap = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          received.size += chunk.length;
          if (headSize < HEAD_BYTES) {
            headChunks.push(chunk.subarray(0, HEAD_BYTES - headSize));
            headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
          }
          done(null, chunk);
        },
      });
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      // Which side broke first: a pipeline destroys every stream in it with the first error.
      let brokenFirst: 'request' | 'store' | null = null;
      stream.once('error', () => (brokenFirst ??= 'request'));
      tap.once('error', () => (brokenFirst ??= 'request'));
      blob.sink.once('error', () => (brokenFirst ??= 'store'));
      writing = (async () => {
        await pipeline(stream, tap, blob.sink);
        received.sha256 = hash.digest('hex');
        received.head = new Uint8Array(Buffer.concat(headChunks));
      })();
      // The store failing (disk full, I/O error) is not the client's fault: its error goes on as it
      // is, for the service to answer (507 when full, 500 otherwise).
      writing.catch((error) => fail(brokenFirst === 'store' ? error : invalid('file', 'The file could not be received')));
    });

    parser.on('partsLimit', () => (failure ??= invalid(undefined, 'Too many parts')));
    parser.on('fieldsLimit', () => (failure ??= invalid(undefined, 'Too many fields')));
    parser.on('error', () => fail(invalid(undefined, 'Malformed multipart body')));
    parser.on('close', async () => {
      try {
        if (writing) await writing;
      } catch {
        return; // already failed
      }
      if (settled) return;
      if (failure) return fail(failure);
      if (file) {
        try {
          await file.blob.finish();
        } catch (error) {
          return fail(error);
        }
      }
      if (settled) return;
      settled = true;
      resolve({ fields, file });
    });
    source.on('error', () => fail(invalid(undefined, 'The request body could not be read')));
    source.pipe(parser);
  });
}
