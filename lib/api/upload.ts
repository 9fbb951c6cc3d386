// Streaming multipart upload: the one file part goes straight to a temporary file on disk
// (hashing as it goes), so memory stays flat whatever the file's size.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { ApiError, invalid } from './errors';
import type { BlobStore } from './storage';
import { FIELD_BODY_LIMIT } from './body';
import type { ApiRequest } from './http';

export interface ReceivedFile {
  fieldName: string;
  /** The part's filename exactly as sent (path not yet removed). */
  rawFilename: string | undefined;
  declaredType: string | undefined;
  tempPath: string;
  size: number;
  sha256: string;
  /** The first bytes, for sniffing the type. */
  head: Uint8Array;
}

export interface ReceivedUpload {
  fields: Record<string, string>;
  file: ReceivedFile | null;
}

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
    if (!request.body) return reject(new ApiError('parameter_missing', 'file is required', 'file'));

    const fields: Record<string, string> = {};
    let file: ReceivedFile | null = null;
    let writing: Promise<void> | null = null;
    let failure: ApiError | null = null;
    let settled = false;
    const tempPaths: string[] = [];
    const source = request.body;

    let fileStream: Readable | null = null;
    let sink: fs.WriteStream | null = null;
    const cleanup = () => Promise.all(tempPaths.map((p) => store.removeTemp(p)));
    const fail = (error: ApiError) => {
      if (settled) return;
      settled = true;
      // Stop writing, then remove the temporary bytes once the writer has let go of them.
      // (busboy's file stream does not emit 'close' when destroyed, so end the sink too.)
      fileStream?.destroy();
      sink?.destroy();
      // Answer only once the temporary bytes are gone: a refused upload leaves nothing behind.
      // A sink destroyed while still opening its file opens it anyway before closing, so wait for
      // its 'close' before removing, or the file would appear after the removal.
      const openSink = sink as fs.WriteStream | null;
      const closed = openSink && !openSink.closed ? new Promise<void>((r) => openSink.once('close', () => r())) : null;
      void Promise.allSettled([writing, closed])
        .then(cleanup)
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
      const tempPath = store.tempPath();
      tempPaths.push(tempPath);
      const received: ReceivedFile = {
        fieldName: name,
        rawFilename: info.filename,
        declaredType: info.mimeType,
        tempPath,
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
      writing = (async () => {
        // flush: fsync before close, so the bytes are on disk before the row can commit.
        sink = fs.createWriteStream(tempPath, { flags: 'wx', flush: true, highWaterMark: 1024 * 1024 });
        await pipeline(stream, tap, sink);
        received.sha256 = hash.digest('hex');
        received.head = new Uint8Array(Buffer.concat(headChunks));
      })();
      writing.catch(() => fail(invalid('file', 'The file could not be received')));
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
      settled = true;
      resolve({ fields, file });
    });
    source.on('error', () => fail(invalid(undefined, 'The request body could not be read')));
    source.pipe(parser);
  });
}
