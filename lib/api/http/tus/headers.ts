// The tus request headers, parsed in one place: each header's schema (what the route table
// documents in the OpenAPI document, routes/uploads.ts) is also what reads it here, and a header
// that fails its schema is the contract's error with the header as its param — parameter_missing
// when it is absent, parameter_invalid otherwise; an unsupported Tus-Resumable is 412.
import { z } from 'zod';
import { invalid, missing } from '../../errors';
import type { ApiRequest } from '../exchange';
import { OFFSET_STREAM, TUS_VERSION, versionUnsupported } from './protocol';

const MAX_DIGITS = /^\d{1,16}$/;

/** A header that is a number of bytes: a non-negative safe integer, written in at most 16 digits. */
const byteCount = (name: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${name} must be a non-negative integer`)
    .refine((raw) => MAX_DIGITS.test(raw) && Number.isSafeInteger(Number(raw)), `${name} must be a non-negative integer`)
    .transform(Number);

/** `Upload-Metadata: key base64,key base64,key` → decoded values (tus 1.0.0, creation). */
function parseMetadata(raw: string, ctx: z.RefinementCtx): Map<string, string> {
  const values = new Map<string, string>();
  if (raw.trim() === '') return values;
  const bad = (why: string) => {
    ctx.addIssue({ code: 'custom', message: `Upload-Metadata ${why}` });
    return z.NEVER;
  };
  for (const pair of raw.split(',')) {
    const [key, value, ...rest] = pair.trim().split(' ');
    if (!key || rest.length > 0 || !/^[\x21-\x7e]+$/.test(key)) return bad('is a comma-separated list of "key base64-value" pairs');
    if (values.has(key)) return bad(`has ${key} more than once`);
    if (value !== undefined && !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)) {
      return bad(`value of ${key} is not base64`);
    }
    let decoded: string;
    try {
      // ignoreBOM: a leading U+FEFF is the value's, not dropped — a filename that starts with one is
      // refused as POST /v1/files refuses it.
      decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(value ?? '', 'base64'));
    } catch {
      return bad(`value of ${key} is not UTF-8`);
    }
    values.set(key, decoded);
  }
  return values;
}

const PREFERS_REPRESENTATION = /(?:^|[,;\s])return\s*=\s*"?representation"?(?:$|[,;\s])/i;

export const TusResumable = z.literal(TUS_VERSION).meta({ description: 'The protocol version: 1.0.0 (another: 412 tus_version_unsupported)' });

/** `Prefer: return=representation` (RFC 7240): the completion answers with the file itself. */
const Prefer = z
  .string()
  .transform((raw) => PREFERS_REPRESENTATION.test(raw))
  .meta({
    description:
      'return=representation: the request that stores the last byte (or a repeat of it) answers with the file as its body (the File, as GET /v1/files/{id} answers it), so no GET is needed after it',
    examples: ['return=representation'],
  });

const UploadMetadata = z
  .string()
  .transform((raw, ctx) => parseMetadata(raw, ctx))
  .meta({ description: 'tus metadata: comma-separated "key base64(value)" pairs' });

/** POST /v1/uploads (creation, creation-with-upload). */
export const CreationHeaders = z.strictObject({
  'Tus-Resumable': TusResumable.optional(),
  'Upload-Length': byteCount('Upload-Length').meta({ description: 'The whole upload\'s size in bytes (at most Tus-Max-Size)' }),
  'Upload-Metadata': UploadMetadata,
  Prefer: Prefer.optional(),
});

/** PATCH /v1/uploads/{id}. */
export const AppendHeaders = z.strictObject({
  'Tus-Resumable': TusResumable.optional(),
  'Upload-Offset': byteCount('Upload-Offset').meta({ description: 'Where these bytes go: the upload\'s offset (HEAD tells it)' }),
  Prefer: Prefer.optional(),
});

/** HEAD and DELETE of /v1/uploads/{id}. */
export const UploadHeaders = z.strictObject({ 'Tus-Resumable': TusResumable.optional() });

/**
 * The headers `schema` documents, read from the request and parsed by it. An absent header the
 * schema requires is parameter_missing (Upload-Metadata reads as empty: its own parse says what
 * is missing from it); one that fails is parameter_invalid.
 */
export function readHeaders<S extends z.ZodObject>(schema: S, request: ApiRequest): z.output<S> {
  const raw: Record<string, string> = {};
  for (const name of Object.keys(schema.shape)) {
    const value = request.header(name.toLowerCase());
    if (value !== null) raw[name] = value;
  }
  if (raw['Tus-Resumable'] !== undefined) raw['Tus-Resumable'] = raw['Tus-Resumable'].trim();
  if ('Upload-Metadata' in schema.shape) raw['Upload-Metadata'] ??= '';
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = String(issue.path[0]);
  if (raw[name] === undefined) throw missing(name, `The ${name} header is required`);
  throw invalid(name, issue.message);
}

/** Tus-Resumable, when given, is the version this server speaks (412 with Tus-Version otherwise). */
export function checkVersion(request: ApiRequest): void {
  const version = request.header('tus-resumable');
  if (version !== null && !TusResumable.safeParse(version.trim()).success) throw versionUnsupported(version);
}

/** Content-Length, when given (HTTP framing, not a tus header: it is not documented with them). */
export function contentLength(request: ApiRequest): number | null {
  const raw = request.header('content-length');
  if (raw === null) return null;
  const parsed = byteCount('Content-Length').safeParse(raw);
  if (!parsed.success) throw invalid('Content-Length', parsed.error.issues[0].message);
  return parsed.data;
}

/** The body is tus's own media type (any parameters aside). */
export function isOffsetStream(request: ApiRequest): boolean {
  return request.header('content-type')?.split(';')[0]!.trim().toLowerCase() === OFFSET_STREAM;
}

/** A creation may not defer its length (the creation-defer-length extension is not offered). */
export function refuseDeferredLength(request: ApiRequest): void {
  if (request.header('upload-defer-length') !== null) throw invalid('Upload-Defer-Length', 'Upload-Defer-Length is not supported: give Upload-Length');
}

/** X-HTTP-Method-Override of a POST (clients behind proxies that drop PATCH and DELETE send them so), upper case; null without one. */
export function methodOverride(request: ApiRequest): string | null {
  if (request.method !== 'POST') return null;
  return request.header('x-http-method-override')?.trim().toUpperCase() || null;
}
