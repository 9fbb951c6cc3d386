// Request bodies: JSON, urlencoded and multipart fields (no files), read with a size bound.
import busboy from 'busboy';
import { ApiError, invalid } from '../errors';
import { isRecord } from '../../records';
import type { ApiRequest } from './exchange';
import type { Fields } from '../domain/inputs';

export const FIELD_BODY_LIMIT = 1024 * 1024;

export type { Fields };

/**
 * A record for fields named by the client. Without a prototype, `fields['__proto__'] = v` makes
 * an own field like any other (on `{}` it would set the prototype, or do nothing for a string,
 * and the field would vanish), so zod's strict objects and Object.keys see it and refuse it as
 * unknown. JSON.parse already makes "__proto__" an own key, and needs no copy.
 */
export function fieldRecord<V = unknown>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}
export type BodyKind = 'json' | 'form' | 'multipart';

export function bodyKind(contentType: string | null): BodyKind | null {
  if (!contentType) return null;
  const essence = contentType.split(';', 1)[0].trim().toLowerCase();
  if (essence === 'application/json') return 'json';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  if (essence === 'multipart/form-data') return 'multipart';
  return null;
}

export const unsupportedMediaType = (accepted: string) =>
  new ApiError('unsupported_media_type', `Content-Type must be ${accepted}`);

function readText(request: ApiRequest, limit: number): Promise<string> {
  const declared = Number(request.header('content-length') ?? '0');
  if (declared > limit) return Promise.reject(invalid(undefined, `Request body must be at most ${limit} bytes`));
  const body = request.body;
  if (!body) return Promise.resolve('');
  // The client went away before its body was read (it waited its turn, fair-share.ts): no 'data'
  // or 'end' will ever come, and waiting for them held the user's slot for good.
  if (body.destroyed && !body.readableEnded) return Promise.reject(bodyUnreadable());
  // Events rather than `for await`: a small JSON body is one chunk, and the async iterator's
  // machinery costs more than the rest of an update.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.removeAllListeners('data');
        body.resume(); // drain the rest; the answer does not wait for it
        reject(invalid(undefined, `Request body must be at most ${limit} bytes`));
      } else chunks.push(chunk);
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    body.once('error', () => reject(bodyUnreadable()));
    // Gone while being read.
    body.once('close', () => {
      if (!body.readableEnded) reject(bodyUnreadable());
    });
  });
}

const bodyUnreadable = () => invalid(undefined, 'The request body could not be read');

function formFields(text: string): Fields {
  const fields = fieldRecord();
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(fields, name)) throw invalid(name, `${name} was given more than once`);
    fields[name] = value;
  }
  return fields;
}

function multipartFields(request: ApiRequest): Promise<Fields> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': request.header('content-type')! },
        limits: { fieldSize: FIELD_BODY_LIMIT, fields: 100, parts: 100 },
        defParamCharset: 'utf8',
      });
    } catch {
      return reject(invalid(undefined, 'Malformed multipart body: missing or bad boundary'));
    }
    const fields = fieldRecord();
    let failure: ApiError | null = null;
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) failure ??= invalid(name, `${name} is too long`);
      else if (Object.hasOwn(fields, name)) failure ??= invalid(name, `${name} was given more than once`);
      else fields[name] = value;
    });
    parser.on('file', (name, stream) => {
      failure ??= new ApiError('parameter_unknown', `Unexpected file part: ${name}`, name);
      stream.resume();
    });
    parser.on('partsLimit', () => (failure ??= invalid(undefined, 'Too many parts')));
    parser.on('fieldsLimit', () => (failure ??= invalid(undefined, 'Too many fields')));
    parser.on('error', () => reject(invalid(undefined, 'Malformed multipart body')));
    parser.on('close', () => (failure ? reject(failure) : resolve(fields)));
    if (!request.body) return parser.end();
    const source = request.body;
    // Gone before or while being read (see readText): the parser would never close.
    if (source.destroyed && !source.readableEnded) return reject(bodyUnreadable());
    source.on('error', () => reject(bodyUnreadable()));
    source.once('close', () => {
      if (!source.readableEnded) reject(bodyUnreadable());
    });
    source.pipe(parser);
  });
}

/**
 * The fields of a POST/PUT body. No body at all is an empty set of fields; a body without a
 * supported Content-Type is 415.
 */
export async function readFields(request: ApiRequest): Promise<Fields> {
  const contentType = request.header('content-type');
  const kind = bodyKind(contentType);
  if (!kind) {
    if (request.body === null && !contentType) return {};
    throw unsupportedMediaType('application/json, application/x-www-form-urlencoded or multipart/form-data');
  }
  if (kind === 'multipart') return multipartFields(request);
  const text = await readText(request, FIELD_BODY_LIMIT);
  if (kind === 'form') return formFields(text);
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(undefined, 'Malformed JSON body');
  }
  if (!isRecord(parsed) || Array.isArray(parsed)) throw invalid(undefined, 'The JSON body must be an object');
  return parsed;
}
