// What the domain is given: plain values read from a request by the http/ layer (body.ts,
// upload.ts, tus/). Nothing here knows about HTTP.
import type { BlobWrite } from '../storage/blob-store';

/** A body's fields as the client named them: JSON values, or strings from a form. */
export type Fields = Record<string, unknown>;

export interface ReceivedFile {
  fieldName: string;
  /** The part's filename exactly as sent (path not yet removed). */
  rawFilename: string | undefined;
  /** The part's Content-Type header as sent; undefined when the part had none (then: sniffed). */
  declaredType: string | undefined;
  /** The stored bytes: durable under `blob.key`; `blob.abort()` removes them if no row will point at them. */
  blob: BlobWrite;
  size: number;
  sha256: string;
  /** The first bytes, for sniffing the type. */
  head: Uint8Array;
}

export interface ReceivedUpload {
  fields: Record<string, string>;
  file: ReceivedFile | null;
}
