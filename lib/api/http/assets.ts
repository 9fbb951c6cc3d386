// The asset host: GET/HEAD /files/<filename>?id=<file id>&sig=<signature>. The signature is the
// authorisation, so a bad one is indistinguishable from a missing file (404).
import type { Readable } from 'node:stream';
import { ID_PATTERN } from '../../schemas';
import { methodNotAllowed, notFound } from '../errors';
import { isActiveContent, servedType } from '../domain/file-types';
import type { StoredFile } from '../domain/files';
import type { ApiReply, ApiRequest } from './exchange';

export interface AssetLookup {
  (id: string): Promise<StoredFile | undefined>;
}

// Every asset, whatever its type: never sniffed into something runnable (nosniff), a sandboxed
// opaque origin if opened as a document (CSP sandbox: no script, no same-origin access), and not
// embeddable by other origins, not even sibling subdomains (CORP same-origin).
const SAFETY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': 'sandbox',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Referrer-Policy': 'no-referrer',
};

/** RFC 9110 single byte range; null when absent, malformed or multi-range (serve the whole file). */
function parseRange(header: string | null, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (match[2] !== '' && Number(match[2]) < start) return null;
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

function contentDisposition(file: StoredFile): string {
  const kind = isActiveContent(file.file_type) ? 'attachment' : 'inline';
  const ascii = file.filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`;
}

/** A short-lived URL at the object store that answers with these headers (S3_PRESIGNED_REDIRECT). */
export interface PresignedUrl {
  (storageKey: string, headers: { contentType: string; contentDisposition: string; cacheControl: string }): Promise<string>;
}

export async function serveAsset(
  request: ApiRequest,
  lookup: AssetLookup,
  verify: (id: string, filename: string, sig: string) => boolean,
  open: (storageKey: string, range: { start: number; end: number }) => Promise<Readable>,
  presignedUrl: PresignedUrl | null = null,
): Promise<ApiReply> {
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(['GET', 'HEAD']);
  const id = request.query.get('id') ?? '';
  const sig = request.query.get('sig') ?? '';
  let filename: string;
  try {
    filename = decodeURIComponent(request.path.slice('/files/'.length));
  } catch {
    throw notFound('file');
  }
  if (!ID_PATTERN.test(id) || !verify(id, filename, sig)) throw notFound('file');
  const file = await lookup(id);
  // A renamed file's old URL still carries a valid signature for the old name: refuse it.
  if (!file || file.filename !== filename) throw notFound('file');

  const etag = `"${file.sha256.slice(0, 32)}"`;
  const headers: Record<string, string> = {
    ...SAFETY_HEADERS,
    // Script and style types are sent as octet-stream: see servedType.
    'Content-Type': servedType(file.file_type),
    'Content-Disposition': contentDisposition(file),
    ETag: etag,
    'Accept-Ranges': 'bytes',
    // Patient data: never kept by the browser's HTTP cache (nor a shared one); the app keeps what it
    // must have offline itself (contract: "No caching of patient data by the browser").
    'Cache-Control': 'private, no-store',
    'Last-Modified': new Date(file.created_at * 1000).toUTCString(),
  };
  const inm = request.header('if-none-match');
  if (inm && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    return { status: 304, headers, body: null };
  }
  if (presignedUrl && request.method === 'GET' && file.file_size > 0) {
    // The store sends the bytes (and honours Range there); the type and disposition travel as
    // response overrides. The redirect itself must not outlive the presigned URL.
    const location = await presignedUrl(file.storage_key, {
      contentType: file.file_type,
      contentDisposition: headers['Content-Disposition'],
      cacheControl: headers['Cache-Control'],
    });
    return {
      status: 302,
      headers: { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' },
      body: null,
    };
  }
  const ifRange = request.header('if-range');
  const range = ifRange && ifRange !== etag ? null : parseRange(request.header('range'), file.file_size);
  if (range === 'unsatisfiable') {
    return { status: 416, headers: { ...headers, 'Content-Range': `bytes */${file.file_size}` }, body: null };
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? file.file_size - 1;
  const length = file.file_size === 0 ? 0 : end - start + 1;
  headers['Content-Length'] = String(length);
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${file.file_size}`;
  const status = range ? 206 : 200;
  if (request.method === 'HEAD' || length === 0) return { status, headers, body: null };
  return { status, headers, body: await open(file.storage_key, { start, end }) };
}
